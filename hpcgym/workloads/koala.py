"""The two-application KOALA workloads (GADGET-2 and NAS FT on DAS-3).

From the KOALA paper (sections 6.1-6.3): jobs are GADGET-2 or FT with equal probability; malleable
jobs start at 2 processors, may shrink to 2 and grow to 46 (GADGET-2) or 32 (FT); FT only uses
powers of two; 300 jobs arrive every 120 s (PRA experiments) or 30 s (PWA experiments); in the
mixed workloads (Wmr) half of the jobs, drawn at random, are rigid with 2 processors.

**Choices** (the paper gives only a plot of execution times):

- Speedups are Amdahl curves through the paper's two stated points: GADGET-2 takes nearly 10
  minutes on 2 processors (600 s) and at best 4 minutes (240 s, at 46); FT almost 2 minutes
  (115 s) and at best 1 minute (60 s, at 32). The work is the time on 2 processors.
- Sizes count processors; the platform is DAS-3 with one schedulable unit per processor
  (dual-core nodes: 170, 82, 136, 92, 64 processors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Cluster, Platform
from hpcgym.sim.spec import JobKind, JobSpec, SizeRule
from hpcgym.sim.speedup import Amdahl
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.workload import ProvenanceStep, Workload

DAS3_CLUSTERS: tuple[tuple[str, int], ...] = (
    ("vu", 85),
    ("uva", 41),
    ("delft", 68),
    ("multimedian", 46),
    ("leiden", 32),
)
"""DAS-3 clusters and their dual-processor node counts (KOALA paper, Table 1)."""


def amdahl_through(n1: int, t1: float, n2: int, t2: float) -> tuple[float, float]:
    """Serial fraction and one-processor time of the Amdahl curve through two timings."""
    # t(n) = T * (f + (1 - f) / n)  =>  t1 / t2 = (f + (1-f)/n1) / (f + (1-f)/n2)
    r = t1 / t2
    f = (1 / n1 - r / n2) / (r - r / n2 - 1 + 1 / n1)
    if not 0 <= f <= 1:
        raise WorkloadError(f"no Amdahl curve passes through ({n1}, {t1}) and ({n2}, {t2})")
    return f, t1 / (f + (1 - f) / n1)


@dataclass(frozen=True, slots=True)
class KoalaApp:
    """One application of the mix."""

    name: str
    time_at_min: float
    best_time: float
    max_procs: int
    size_rule: SizeRule
    min_procs: int = 2

    def job(self, job_id: int, submit: float, malleable: bool) -> JobSpec:
        """A job of this application, malleable in [min, max] or rigid at the minimum size."""
        f, _ = amdahl_through(self.min_procs, self.time_at_min, self.max_procs, self.best_time)
        return JobSpec(
            id=job_id,
            submit=submit,
            work=self.time_at_min,
            nodes=self.min_procs,
            kind=JobKind.MALLEABLE if malleable else JobKind.RIGID,
            min_nodes=self.min_procs,
            max_nodes=self.max_procs if malleable else self.min_procs,
            size_rule=self.size_rule if malleable else SizeRule.ANY,
            speedup=Amdahl(f),
        )


GADGET2 = KoalaApp("GADGET-2", 600.0, 240.0, 46, SizeRule.ANY)
FT = KoalaApp("FT", 115.0, 60.0, 32, SizeRule.POWER_OF_TWO)


def das3_platform() -> Platform:
    """DAS-3 with one unit per processor (two per node)."""
    return Platform(tuple(Cluster(2 * n, name, 1) for name, n in DAS3_CLUSTERS))


def generate_koala(
    seed: int, *, n_jobs: int = 300, interarrival: float = 120.0, rigid_fraction: float = 0.0
) -> Workload:
    """A KOALA workload: ``Wm`` by default, ``Wmr`` with ``rigid_fraction=0.5``.

    Args:
        seed: Seed of the application and rigid/malleable draws.
        n_jobs: Number of jobs (300 in the paper).
        interarrival: Seconds between submissions (120 for PRA, 30 for PWA).
        rigid_fraction: Share of rigid jobs (exactly ``round(rigid_fraction * n_jobs)``).

    Returns:
        Jobs submitted at ``0, interarrival, 2*interarrival, ...`` on DAS-3.
    """
    if n_jobs < 0 or not interarrival >= 0 or not 0 <= rigid_fraction <= 1:
        raise WorkloadError("koala: need n_jobs >= 0, interarrival >= 0, rigid_fraction in [0, 1]")
    rng = np.random.default_rng(seed)
    is_ft = rng.random(n_jobs) < 0.5
    rigid = np.zeros(n_jobs, dtype=bool)
    rigid[rng.permutation(n_jobs)[: round(rigid_fraction * n_jobs)]] = True
    jobs = tuple(
        (FT if ft else GADGET2).job(i + 1, i * interarrival, malleable=not r)
        for i, (ft, r) in enumerate(zip(is_ft, rigid, strict=True))
    )
    platform = das3_platform()
    header = SwfHeader.from_lines(
        [
            " Version: 2.2",
            " Computer: DAS-3 (KOALA two-application workload, hpcgym generator)",
            f" MaxJobs: {n_jobs}",
            f" MaxRecords: {n_jobs}",
            f" MaxNodes: {platform.total_nodes}",
            f" MaxProcs: {platform.total_nodes}",
            " Note: malleable GADGET-2 [2, 46] and FT [2, 32] powers of two; rigid jobs use 2",
        ]
    )
    step = ProvenanceStep.make(
        "koala_mix",
        seed=seed,
        n_jobs=n_jobs,
        interarrival=interarrival,
        rigid_fraction=rigid_fraction,
    )
    return Workload(
        name="koala-mix",
        jobs=jobs,
        platform=platform,
        header=header,
        provenance=(step,),
    )
