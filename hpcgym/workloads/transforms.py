"""Trace transforms: slicing, load scaling and run-time estimate models.

Every transform returns a new :class:`Workload` with one more provenance step; those that draw
random numbers take an explicit ``seed`` and use their own ``numpy.random.Generator``.
Slices re-base submit times so that the slice starts at 0.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobKind, JobSpec
from hpcgym.workloads.stats import offered_load
from hpcgym.workloads.swf import COL
from hpcgym.workloads.workload import ProvenanceStep, Workload

WEEK = 7 * 86400.0
"""Seconds in a week, the DFRS paper's segment length."""


def _take(w: Workload, idx: np.ndarray, origin: float, step: ProvenanceStep) -> Workload:
    jobs = [dataclasses.replace(w.jobs[i], submit=w.jobs[i].submit - origin) for i in idx]
    rows = None if w.rows is None else w.rows[idx]
    return w.derive(jobs, step, rows=rows)


def first(w: Workload, n: int) -> Workload:
    """The first ``n`` jobs (all of them when there are fewer), re-based to start at 0."""
    if n < 0:
        raise WorkloadError(f"first: n must be >= 0, got {n}")
    idx = np.arange(min(n, len(w)))
    origin = w.jobs[0].submit if len(idx) else 0.0
    return _take(w, idx, origin, ProvenanceStep.make("first", n=n))


def window(w: Workload, start: float, end: float) -> Workload:
    """Jobs submitted in ``[start, end)``, re-based so that ``start`` becomes 0."""
    if not end > start:
        raise WorkloadError(f"window: need end > start, got [{start}, {end})")
    submits = np.array([j.submit for j in w.jobs])
    idx = np.flatnonzero((submits >= start) & (submits < end))
    return _take(w, idx, start, ProvenanceStep.make("window", start=start, end=end))


def segments(w: Workload, length: float = WEEK) -> list[Workload]:
    """Consecutive windows of ``length`` seconds from time 0 (empty windows are kept).

    The DFRS paper splits HPC2N into week-long segments: ``segments(w, WEEK)``.
    """
    if not length > 0:
        raise WorkloadError(f"segments: length must be > 0, got {length}")
    last = max((j.submit for j in w.jobs), default=0.0)
    count = int(last // length) + 1
    out = []
    for k in range(count):
        part = window(w, k * length, (k + 1) * length)
        step = ProvenanceStep.make("segment", index=k, length=length)
        out.append(dataclasses.replace(part, provenance=(*w.provenance, step)))
    return out


def random_start(
    w: Workload, seed: int, *, n_jobs: int | None = None, duration: float | None = None
) -> Workload:
    """A contiguous slice of ``n_jobs`` jobs or ``duration`` seconds from a seeded random start.

    The start is uniform over the jobs that leave a full slice after them.
    """
    if (n_jobs is None) == (duration is None):
        raise WorkloadError("random_start: give exactly one of n_jobs and duration")
    rng = np.random.default_rng(seed)
    step = ProvenanceStep.make("random_start", seed=seed, n_jobs=n_jobs, duration=duration)
    if n_jobs is not None:
        if not 0 < n_jobs <= len(w):
            raise WorkloadError(f"random_start: n_jobs must be in [1, {len(w)}], got {n_jobs}")
        s = int(rng.integers(0, len(w) - n_jobs + 1))
        idx = np.arange(s, s + n_jobs)
        return _take(w, idx, w.jobs[s].submit, step)
    assert duration is not None
    submits = np.array([j.submit for j in w.jobs])
    fits = np.flatnonzero(submits + duration <= submits[-1]) if len(w) else submits
    if len(fits) == 0:
        raise WorkloadError(f"random_start: the trace is shorter than {duration} s")
    s = int(fits[rng.integers(0, len(fits))])
    t0 = submits[s]
    idx = np.flatnonzero((submits >= t0) & (submits < t0 + duration))
    return _take(w, idx, t0, step)


def scale_arrivals(w: Workload, factor: float) -> Workload:
    """Multiply every inter-arrival time by ``factor`` (> 1 spreads jobs, lowering the load)."""
    if not factor > 0:
        raise WorkloadError(f"scale_arrivals: factor must be > 0, got {factor}")
    t0 = w.jobs[0].submit if len(w) else 0.0
    jobs = [dataclasses.replace(j, submit=t0 + (j.submit - t0) * factor) for j in w.jobs]
    return w.derive(jobs, ProvenanceStep.make("scale_arrivals", factor=factor), keep_rows=True)


def scale_load(w: Workload, target: float) -> Workload:
    """Scale inter-arrival times so the offered load (see :func:`offered_load`) is ``target``."""
    if not target > 0:
        raise WorkloadError(f"scale_load: target load must be > 0, got {target}")
    current = offered_load(w)
    if not np.isfinite(current) or current <= 0:
        raise WorkloadError(
            f"scale_load: workload {w.name!r} has no finite offered load (all jobs submitted at "
            "once, or no work); load scaling needs spread-out arrivals"
        )
    out = scale_arrivals(w, current / target)
    step = ProvenanceStep.make("scale_load", target=target, factor=current / target)
    return dataclasses.replace(out, provenance=(*w.provenance, step))


EstimateModel = Literal["exact", "user", "noisy"]


def estimates(
    w: Workload, model: EstimateModel, *, seed: int | None = None, sigma: float = 0.5
) -> Workload:
    """Set every job's walltime (the scheduler's run-time estimate).

    Args:
        w: The workload.
        model: ``"exact"``: walltime = work (at least 1 s). ``"user"``: the trace's requested
            time (field 9); jobs without one get the exact value, counted in the provenance.
            ``"noisy"``: ``max(work, 1) * exp(sigma * |Z|)`` with ``Z`` standard normal, an
            over-estimate, so that no job is killed for its estimate.
        seed: Seed of the noise (``"noisy"`` only).
        sigma: Spread of the noise (``"noisy"`` only).
    """
    work = np.array([max(j.work, 1.0) for j in w.jobs])
    fallback = 0
    if model == "exact":
        wall = work
    elif model == "user":
        if w.rows is None:
            raise WorkloadError(
                f"estimates: workload {w.name!r} has no SWF records; 'user' estimates need "
                "a trace (use 'exact' or 'noisy')"
            )
        req = w.rows[:, COL["req_time"]]
        fallback = int((req <= 0).sum())
        wall = np.where(req > 0, req, work)
    elif model == "noisy":
        if seed is None:
            raise WorkloadError("estimates: the 'noisy' model needs a seed")
        rng = np.random.default_rng(seed)
        wall = work * np.exp(sigma * np.abs(rng.standard_normal(len(work))))
    else:
        raise WorkloadError(f"estimates: unknown model {model!r}; use exact, user or noisy")
    jobs: list[JobSpec] = [
        dataclasses.replace(j, walltime=float(t)) for j, t in zip(w.jobs, wall, strict=True)
    ]
    params: dict[str, object] = {"model": model}
    if model == "noisy":
        params["sigma"] = sigma
    if model == "user":
        params["exact_fallbacks"] = fallback
    step = ProvenanceStep.make("estimates", seed=seed if model == "noisy" else None, **params)
    return w.derive(jobs, step, keep_rows=True)


def rescale_nodes(w: Workload, nodes: int) -> Workload:
    """The same jobs on a single cluster of ``nodes`` nodes, sizes scaled in proportion.

    For cross-trace tests (train on one machine's trace, test on another's at the same size):
    each job's size becomes ``round(size * nodes / old nodes)``, at least 1 and at most
    ``nodes``; run times and estimates stay, so the offered load changes only by the rounding.
    Only rigid jobs are rescaled: annotate elasticity after rescaling.

    Raises:
        WorkloadError: ``nodes`` < 1, a multi-cluster platform, or a job that is not rigid.
    """
    if nodes < 1:
        raise WorkloadError(f"rescale_nodes: nodes must be >= 1, got {nodes}")
    clusters = w.platform.clusters
    if len(clusters) != 1:
        raise WorkloadError(f"rescale_nodes: {w.name!r} has {len(clusters)} clusters; need one")
    factor = nodes / clusters[0].nodes
    jobs = []
    for j in w.jobs:
        if j.kind is not JobKind.RIGID:
            raise WorkloadError(
                f"rescale_nodes: job {j.id} of {w.name!r} is {j.kind.value}; rescale rigid "
                "traces, then annotate elasticity"
            )
        size = min(max(round(j.nodes * factor), 1), nodes)
        jobs.append(dataclasses.replace(j, nodes=size, min_nodes=size, max_nodes=size))
    platform = Platform.single(nodes, cores=clusters[0].cores, name=clusters[0].name)
    step = ProvenanceStep.make("rescale_nodes", nodes=nodes, factor=factor)
    return w.derive(jobs, step, keep_rows=True, platform=platform)
