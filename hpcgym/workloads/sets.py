"""The built-in workload sets (registered when :mod:`hpcgym.workloads` is imported).

Trace sets read the bundled trace files (:mod:`hpcgym.workloads.catalog`); synthetic sets run
a generator. Every set draws its random numbers from seeds derived from the set's seed, in a
fixed order, and declares the unit its sizes count (``WorkloadSet.allocation``): processors, or
whole nodes where the set's source or paper used them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.workloads import transforms
from hpcgym.workloads.convert import (
    DEFAULT_ALLOCATION,
    Allocation,
    check_allocation,
    read_workload,
)
from hpcgym.workloads.dfrs import annotate_dfrs, hpc2n_dfrs
from hpcgym.workloads.elastic import RHO_HIGH, RHO_LOW, RHO_MEDIUM, ElasticConfig, annotate_elastic
from hpcgym.workloads.evolving import KleinParams, generate_klein
from hpcgym.workloads.koala import generate_koala
from hpcgym.workloads.lublin import generate_lublin
from hpcgym.workloads.registry import (
    Builder,
    WorkloadSet,
    register,
    register_path_sets,
    resolve_file,
)
from hpcgym.workloads.stats import offered_load
from hpcgym.workloads.transforms import EstimateModel
from hpcgym.workloads.workload import Workload

SDSC_SP2 = "SDSC-SP2-1998-4.2-cln.swf.gz"
KTH_SP2 = "KTH-SP2-1996-2.1-cln.swf.gz"
HPC2N = "hpc2n.swf.gz"
CEA_CURIE = "CEA-Curie-2011-sample.swf.gz"
LUBLIN_256 = "lublin_256.swf.gz"

SCALABILITY = {
    "mixed": (RHO_HIGH, RHO_MEDIUM, RHO_LOW),
    "high": (RHO_HIGH,),
    "medium": (RHO_MEDIUM,),
    "low": (RHO_LOW,),
}
"""MEBF scalability classes by name; ``mixed`` draws one of the three for every job."""


def subseeds(seed: int, count: int) -> list[int]:
    """``count`` independent seeds derived from ``seed`` (the same on every machine)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


def _read(file: str, procs_per_node: int | None, allocation: Allocation) -> Workload:
    return _read_path(resolve_file(file), procs_per_node, allocation)


@functools.lru_cache(maxsize=8)
def _read_path(path: Path, procs_per_node: int | None, allocation: Allocation) -> Workload:
    # Workloads are immutable, so a parsed trace can be shared between loads. The key is the
    # resolved path: the same name may point elsewhere once $HPCGYM_WORKLOADS changes.
    return read_workload(path, procs_per_node=procs_per_node, allocation=allocation)


def _with_estimates(w: Workload, model: str, seed: int) -> Workload:
    if model not in ("exact", "user", "noisy"):
        raise WorkloadError(f"estimates must be exact, user or noisy, got {model!r}")
    return transforms.estimates(
        w, cast(EstimateModel, model), seed=seed if model == "noisy" else None
    )


def _trace_set(
    name: str,
    file: str,
    description: str,
    allocation: Allocation,
    procs_per_node: int | None = None,
) -> WorkloadSet:
    def build(seed: int, opts: Mapping[str, Any]) -> Workload:
        w = _read(file, procs_per_node, allocation)
        return _with_estimates(w, opts["estimates"], seed)

    return WorkloadSet(name, description, build, {"estimates": "user"}, file, allocation)


def file_set(path: str) -> WorkloadSet:
    """An ad-hoc set over the workload file ``path`` (a path, or a trace file name to look up).

    SWF, a ``sacct --parsable2`` dump or a Batsim JSON workload (see
    :mod:`hpcgym.workloads.formats`), read with that format's defaults.

    It takes the trace set options (``estimates``), ``allocation`` (``"processor"``, or
    ``"node"`` for whole nodes) and ``procs_per_node`` (``None``: from the header); the name is
    the path as given.
    """

    def build(seed: int, opts: Mapping[str, Any]) -> Workload:
        allocation = check_allocation(opts["allocation"])
        given = Path(path).expanduser()
        found = given.resolve() if given.is_file() else resolve_file(path)
        w = _read_path(found, opts["procs_per_node"], allocation)
        return _with_estimates(w, opts["estimates"], seed)

    options = {"estimates": "user", "procs_per_node": None, "allocation": DEFAULT_ALLOCATION}
    return WorkloadSet(path, f"workload file {path}", build, options, path)


register_path_sets(file_set)


# Every bundled trace but HPC2N has one processor per node, so its jobs are the same in either
# unit. swf/hpc2n-v0 was published with whole dual-processor nodes and keeps them; v1 is the
# same trace in processors.
for _ws in (
    _trace_set(
        "swf/sdsc-sp2-v0", SDSC_SP2, "SDSC SP2 1998-2000, 128 nodes, cleaned, rigid", "processor"
    ),
    _trace_set(
        "swf/kth-sp2-v0", KTH_SP2, "KTH SP2 1996-97, 100 nodes, cleaned, rigid", "processor"
    ),
    _trace_set(
        "swf/hpc2n-v0",
        HPC2N,
        "HPC2N Seth 2002, 57 days, 120 dual-CPU nodes, whole nodes, rigid",
        "node",
        2,
    ),
    _trace_set(
        "swf/hpc2n-v1",
        HPC2N,
        "HPC2N Seth 2002, 57 days, 240 CPUs as units (120 dual-CPU nodes), rigid",
        "processor",
        2,
    ),
    _trace_set(
        "swf/cea-curie-v0",
        CEA_CURIE,
        "CEA Curie 2011, 26 days, 93,312 cores as units",
        "processor",
    ),
    _trace_set(
        "swf/lublin256-v0",
        LUBLIN_256,
        "Lublin model trace used by RLScheduler, 256 nodes",
        "processor",
    ),
):
    register(_ws)


def _hpc2n_dfrs(seed: int, opts: Mapping[str, Any]) -> Workload:
    # The DFRS conversion starts from processors and makes tasks on dual-core nodes.
    w = hpc2n_dfrs(_read(HPC2N, 1, "processor"))
    if opts["week"] is not None:
        weeks = transforms.segments(w, transforms.WEEK)
        if not 0 <= opts["week"] < len(weeks):
            raise WorkloadError(f"week must be in [0, {len(weeks) - 1}], got {opts['week']}")
        w = weeks[opts["week"]]
    return _with_estimates(w, opts["estimates"], seed)


register(
    WorkloadSet(
        "swf/hpc2n-dfrs-v0",
        "HPC2N with the DFRS paper's task, CPU-need and memory conversion (week=k: k-th week)",
        _hpc2n_dfrs,
        {"week": None, "estimates": "exact"},
        HPC2N,
        "node",
    )
)


def _finite_positive(value: Any) -> bool:
    """A real number (not a bool, not a string) in (0, inf)."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 < value < np.inf


def _lublin(seed: int, opts: Mapping[str, Any]) -> Workload:
    scale = opts["arrival_scale"]
    if not _finite_positive(scale):
        raise WorkloadError(
            f"synthetic/lublin-256-v0: arrival_scale must be a finite number > 0 (below 1 "
            f"packs the arrivals, raising the load), got {scale!r}"
        )
    sigma = opts["estimate_sigma"]
    if sigma is not None and not _finite_positive(sigma):
        raise WorkloadError(
            f"synthetic/lublin-256-v0: estimate_sigma must be a finite number > 0 (the spread "
            f"of the over-estimates) or null (estimates equal to run times), got {sigma!r}"
        )
    w = generate_lublin(opts["n_jobs"], opts["nodes"], seed, typed=opts["typed"])
    # 1 leaves the model's jobs untouched (the set's recipe before the option existed).
    if scale != 1:
        w = transforms.scale_arrivals(w, float(scale))
    if sigma is None:  # the model's own: no requested time, schedulers see the run time
        return w
    # Users over-estimate: walltime = run time x exp(sigma |Z|), its own seed (not the model's).
    noise_seed = subseeds(seed, 2)[1]
    return transforms.estimates(w, "noisy", seed=noise_seed, sigma=float(sigma))


register(
    WorkloadSet(
        "synthetic/lublin-256-v0",
        "Lublin-Feitelson 2003 model, 256 nodes, 10,000 jobs (arrival_scale: inter-arrival "
        "times times this; estimate_sigma: requested times that over-estimate the run times)",
        _lublin,
        {
            "n_jobs": 10_000,
            "nodes": 256,
            "typed": False,
            "arrival_scale": 1.0,
            "estimate_sigma": None,
        },
        allocation="processor",
    )
)


def _lublin_dfrs(seed: int, opts: Mapping[str, Any]) -> Workload:
    gen_seed, dfrs_seed = subseeds(seed, 2)
    w = generate_lublin(opts["n_jobs"], 128, gen_seed)
    w = dataclasses.replace(w, platform=Platform.single(128, cores=opts["cores"]))
    w = annotate_dfrs(w, dfrs_seed, cores=opts["cores"])
    if opts["load"] is not None:
        w = transforms.scale_load(w, float(opts["load"]))
    return transforms.estimates(w, "exact")


register(
    WorkloadSet(
        "synthetic/lublin-dfrs-128-v0",
        "DFRS synthetic: Lublin model, 128 quad-core nodes, 1000 jobs, CPU needs and memory",
        _lublin_dfrs,
        {"n_jobs": 1000, "load": 0.7, "cores": 4},
        allocation="node",
    )
)

register(
    WorkloadSet(
        "synthetic/evolving-klein-v0",
        "Klein-Perez evolving test case (seed k = case k): 15-20 apps, 1-10 steps, 75 nodes",
        lambda seed, opts: generate_klein(seed),
        allocation="node",
    )
)


KLEIN_WIDE = KleinParams(apps=(30, 40), nodes=(1, 150), cluster_nodes=150)
"""The wide Klein-Perez setting: twice the machine and twice the applications of the paper's
cases (steps and durations as the paper draws them), so the load per node stays near theirs.
**Choice** (issue 41, item 4): no public trace records evolution profiles, so the evolving
agents' cross-trace test is a case distribution none of them trained on: this one."""

register(
    WorkloadSet(
        "synthetic/evolving-klein-wide-v0",
        "Klein-Perez evolving test case, twice as wide: 30-40 apps, 1-10 steps of 1-150 nodes, "
        "150 nodes",
        lambda seed, opts: generate_klein(seed, KLEIN_WIDE),
        allocation="node",
    )
)


def _koala(seed: int, opts: Mapping[str, Any]) -> Workload:
    variants = {"Wm": 0.0, "Wmr": 0.5}
    approaches = {"PRA": 120.0, "PWA": 30.0}
    if opts["variant"] not in variants or opts["approach"] not in approaches:
        raise WorkloadError("koala-mix: variant is Wm or Wmr, approach is PRA or PWA")
    return generate_koala(
        seed,
        n_jobs=opts["n_jobs"],
        interarrival=approaches[opts["approach"]],
        rigid_fraction=variants[opts["variant"]],
    )


register(
    WorkloadSet(
        "synthetic/koala-mix-v0",
        "KOALA GADGET-2/FT mix on DAS-3: 300 jobs, Wm or Wmr, PRA (120 s) or PWA (30 s)",
        _koala,
        {"variant": "Wm", "approach": "PRA", "n_jobs": 300},
        allocation="processor",
    )
)


def _mebf_elastic(opts: Mapping[str, Any], rho: tuple[tuple[float, float], ...]) -> ElasticConfig:
    """MEBF's annotation, its resize costs scaled by the ``resize_cost`` option.

    MEBF's paper draws ``alpha`` and ``beta`` of ``alpha*|dN| + beta/N`` uniformly in
    [0.005, 0.05] s (``hpcgym.workloads.elastic``); ``resize_cost`` multiplies both bounds (0: free
    resizes; 10, 100, 1000: the sensitivity table of docs/results.md). The draws are the same for
    every factor, so only the costs change.
    """
    k = opts.get("resize_cost", 1.0)
    if isinstance(k, bool) or not isinstance(k, int | float) or not 0 <= k < math.inf:
        raise WorkloadError(f"resize_cost must be a finite number >= 0, got {k!r}")
    paper = ElasticConfig()
    return ElasticConfig(
        malleable=opts["malleable"],
        rho_classes=rho,
        alpha=(paper.alpha[0] * k, paper.alpha[1] * k),
        beta=(paper.beta[0] * k, paper.beta[1] * k),
    )


def _sdsc_mebf(seed: int, opts: Mapping[str, Any]) -> Workload:
    if opts["scalability"] not in SCALABILITY:
        raise WorkloadError(f"scalability must be one of {sorted(SCALABILITY)}")
    start_seed, elastic_seed = subseeds(seed, 2)
    w = _read(SDSC_SP2, None, "processor")
    if opts["n_jobs"] is not None:  # None: the whole trace (hpcgym/Malleable-v1)
        w = transforms.random_start(w, start_seed, n_jobs=opts["n_jobs"])
    if opts["intensive"]:
        w = transforms.scale_arrivals(w, 0.75)
    cfg = _mebf_elastic(opts, SCALABILITY[opts["scalability"]])
    w = annotate_elastic(w, cfg, elastic_seed)
    return transforms.estimates(w, "user")


register(
    WorkloadSet(
        "elastic/sdsc-sp2-mebf-v0",
        "SDSC SP2 window (n_jobs=None: all of it) with MEBF malleability (min pref/2, max 5 "
        "pref, rho classes)",
        _sdsc_mebf,
        {
            "n_jobs": 5000,
            "malleable": 0.6,
            "scalability": "mixed",
            "intensive": False,
            "resize_cost": 1.0,
        },
        SDSC_SP2,
        "processor",
    )
)


# Cross-trace tests of the MEBF setting: another machine's trace on MEBF's 128 nodes, made
# malleable exactly as the SDSC SP2 set is, all of it (``n_jobs=None``; a number takes a window
# of that many jobs at a seeded start, as the SDSC SP2 set does). Job sizes are rescaled in
# proportion to the node counts (``transforms.rescale_nodes``), which changes the offered load by
# the rounding; the arrivals are then rescaled so that the load is the source trace's own again
# (rounding a 93,312-core machine's jobs onto 128 nodes makes 95% of them one node and doubles
# its load).
CROSS_TRACE_NODES = 128


def _cross_trace_mebf(file: str) -> Builder:
    def build(seed: int, opts: Mapping[str, Any]) -> Workload:
        if opts["scalability"] not in SCALABILITY:
            raise WorkloadError(f"scalability must be one of {sorted(SCALABILITY)}")
        start_seed, elastic_seed = subseeds(seed, 2)
        source = _read(file, None, "processor")
        w = transforms.rescale_nodes(source, CROSS_TRACE_NODES)
        w = transforms.scale_load(w, offered_load(source))
        if opts["n_jobs"] is not None:
            w = transforms.random_start(w, start_seed, n_jobs=opts["n_jobs"])
        rho = SCALABILITY[opts["scalability"]]
        w = annotate_elastic(w, _mebf_elastic(opts, rho), elastic_seed)
        return transforms.estimates(w, "user")

    return build


for _name, _file, _what in (
    ("elastic/kth-sp2-mebf-128-v0", KTH_SP2, "KTH SP2 (100 nodes)"),
    ("elastic/cea-curie-mebf-128-v0", CEA_CURIE, "CEA Curie sample (93,312 cores)"),
):
    register(
        WorkloadSet(
            _name,
            f"{_what} rescaled to 128 nodes at its own load, with MEBF malleability "
            "(cross-trace tests of elastic/sdsc-sp2-mebf-v0)",
            _cross_trace_mebf(_file),
            {"n_jobs": None, "malleable": 0.6, "scalability": "mixed", "resize_cost": 1.0},
            _file,
            allocation="processor",
        )
    )
