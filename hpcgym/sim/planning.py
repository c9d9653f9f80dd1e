"""What schedulers plan with: runtime estimates, estimated ends, sizes, EASY's shadow, shares.

These live in the simulation layer because both the baselines (``hpcgym.baselines``) and the
environment's opt-in entries (the ``"ebf"`` start level, ``packed`` co-scheduling, ``reclaim``:
``hpcgym.envs.menu``) compute with them, and they must agree to the last bit for a baseline to
act through the env exactly as on the bare engine.

**Runtime estimate rule.** A scheduler never sees a job's true run time. It plans with the
job's *estimate*: its walltime (the user's request, or whatever the workload's estimate model
put there: ``exact``, ``user``, ``noisy``) when the workload gives one, and its true ``work``
otherwise (a workload without estimates is taken as an oracle). The estimate is a time at the
job's requested size; at another size it scales with the job's speedup model.

A running job's *estimated end* follows from it: the estimated work not yet done, at the job's
current progress rate, after any reconfiguration under way. A rigid job ends by
``start + estimate``. A job that has outlived its estimate (possible only when the engine does
not kill at walltime) is assumed to end ``OVERRUN_GRACE`` seconds from now; every decision
point re-plans, so the assumption lasts until the next one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

import numpy as np

from hpcgym.errors import SpecError
from hpcgym.sim.engine import EngineCore
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.nodes import EPS
from hpcgym.sim.spec import JobKind, JobSpec

OVERRUN_GRACE: Final = 1.0
"""Seconds a job that has outlived its estimate is still expected to run (see module doc)."""

_RECONFIGURING: Final = JobState.RECONFIGURING
_MALLEABLE: Final = JobKind.MALLEABLE
_MOLDABLE: Final = JobKind.MOLDABLE


def runtime_estimate(spec: JobSpec) -> float:
    """The job's run time at its requested size as schedulers see it: walltime, else work."""
    w = spec.walltime
    return spec.work if w is None else w


def estimated_end(sim: EngineCore, job: Job) -> float:
    """When a running job is expected to end, by the runtime estimate rule (module doc).

    Always later than ``sim.now``.
    """
    now = sim.now
    spec = job.spec
    if job.reconfigurations == 0 and job.size == spec.nodes:
        end = job.start_time + runtime_estimate(spec)
    else:
        # Estimated work left, in seconds at the requested size, at the current size's rate.
        done = spec.work - sim.remaining_work(job)
        left = runtime_estimate(spec) - done
        rate = spec.rate(job.size)
        t0 = job.busy_until if job.state is _RECONFIGURING else now
        end = t0 + (left / rate if left > 0 else 0.0)
    return end if end > now else now + OVERRUN_GRACE


def estimated_remaining(sim: EngineCore, job: Job, size: int | None = None) -> float:
    """Seconds of estimated work left for a running job on ``size`` tasks (default: its own).

    Reconfiguration under way is not counted.
    """
    spec = job.spec
    left = runtime_estimate(spec) - (spec.work - sim.remaining_work(job))
    if left <= 0:
        return 0.0
    return left / spec.rate(job.size if size is None else size)


def largest_size(spec: JobSpec, limit: int) -> int:
    """The largest size ``spec`` accepts that is at most ``limit``, or 0 if none."""
    hi = min(limit, spec.max_nodes)
    if hi < spec.min_nodes:
        return 0
    if spec.min_nodes == spec.max_nodes or spec.allows(hi):
        return hi
    for n in range(hi - 1, spec.min_nodes - 1, -1):
        if spec.allows(n):
            return n
    return 0


def smallest_size(spec: JobSpec) -> int:
    """The smallest size ``spec`` accepts (its requested size for rigid jobs)."""
    n = spec.min_nodes
    while not spec.allows(n):
        n += 1
    return n


def shadow(
    now: float, free: int, need: int, releases: Iterable[tuple[float, int]]
) -> tuple[float, int]:
    """When ``need`` nodes will be free, and how many more than ``need`` are free then.

    Args:
        now: Current time.
        free: Nodes free now.
        need: Nodes the head job needs.
        releases: ``(time, nodes)`` of running jobs' estimated ends, sorted by time.

    Returns:
        ``(shadow_time, extra_nodes)``; ``(inf, 0)`` if the releases never free enough.
        Releases at the shadow time all count towards ``extra``.
    """
    if free >= need:
        return now, free - need
    avail = free
    it = iter(releases)
    for t, n in it:
        avail += n
        if avail >= need:
            for t2, n2 in it:
                if t2 != t:
                    break
                avail += n2
            return t, avail - need
    return math.inf, 0


def preferred_or_fit(spec: JobSpec, free: int) -> int:
    """The requested size if ``free`` nodes hold it, else the largest accepted size that fits.

    The second only for elastic (malleable or moldable) jobs; 0 if none fits.
    """
    if spec.nodes <= free:
        return spec.nodes
    if spec.kind is _MALLEABLE or spec.kind is _MOLDABLE:
        return largest_size(spec, free)
    return 0


def easy_backfill_sizes(sim: EngineCore, jobs: Iterable[Job]) -> list[int]:
    """The size each queued job may start at now without delaying the queue head (EASY), or 0.

    The head (``sim.queue_head()``, the first queued job in submission order) holds a
    reservation for its smallest accepted size at the *shadow time*, when the running jobs'
    estimated ends (:func:`estimated_end`) free enough idle nodes; the nodes free then beyond
    it are the *extra* nodes (:func:`shadow`). Each job starts at :func:`preferred_or_fit` of
    the idle nodes; a job other than the head whose estimate at that size ends after the shadow
    time may use only the extra nodes, at :func:`preferred_or_fit` of them. This is MEBF's
    backfill rule (``hpcgym.baselines.mebf.scheduler``), for whole-node tasks on a single cluster.
    """
    free = sim.pool.free
    if len(free) != 1:
        raise SpecError(
            f"EASY backfill sizes (start level 'ebf') plan on one cluster; this platform has "
            f"{len(free)}: use other start levels"
        )
    idle = free[0]
    head = sim.queue_head()
    now = sim.now
    reservation: tuple[float, int] | None = None
    out = []
    for job in jobs:
        spec = job.spec
        size = preferred_or_fit(spec, idle)
        if size and job is not head:
            if reservation is None:
                assert head is not None
                ends = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
                reservation = shadow(now, idle, smallest_size(head.spec), ends)
            t_shadow, extra = reservation
            if now + runtime_estimate(spec) / spec.rate(size) > t_shadow and size > extra:
                size = preferred_or_fit(spec, extra)
        out.append(size)
    return out


def packed_nodes(sim: EngineCore, size: int, cpu: float, mem: float) -> np.ndarray | None:
    """``size`` nodes with room for one ``(cpu, mem)`` task each, packed onto used CPU.

    In the first cluster with enough such nodes, those with the most CPU in use first (so a
    co-scheduled job lands on CPU that running jobs lent, before idle nodes), then the lowest
    ids; returned in increasing id order. ``None`` if no cluster has ``size`` of them. Room is
    counted as the engine counts it (``hpcgym.envs.capacity``).
    """
    used = sim.node_cpu_used
    ok = used == 0.0 if cpu >= 1.0 else used <= 1.0 - cpu + EPS
    if mem > 0:
        ok &= sim.node_mem_used <= 1.0 - mem + EPS
    offsets = sim.platform.offsets
    ends = (*offsets[1:], used.size)
    for lo, hi in zip(offsets, ends, strict=True):
        cand = ok[lo:hi].nonzero()[0] + lo
        if cand.size >= size:
            order = np.lexsort((cand, -used[cand]))
            return np.sort(cand[order[:size]])
    return None


def reclaimed_shares(sim: EngineCore, job: Job) -> np.ndarray | None:
    """Per-task CPU shares of a running job that takes back the idle CPU of its nodes.

    Each task's share grows by its node's idle CPU, up to the job's CPU need (a share within
    the engine's tolerance of the need is the need). ``None`` when no task would gain (or two
    tasks share a node, whose idle CPU would count twice).
    """
    need = job.spec.cpu_need
    cpu, nodes = job.cpu, job.nodes
    if not nodes.size or np.unique(nodes).size != nodes.size:
        return None
    idle = np.maximum(1.0 - sim.node_cpu_used[nodes], 0.0)
    new = np.minimum(need, cpu + idle)
    new = np.where(new >= need - EPS, need, new)
    if not (new > cpu + EPS).any():
        return None
    return new
