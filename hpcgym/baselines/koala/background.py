"""Background load for KOALA: local users' jobs that bypass the multicluster scheduler.

The paper's DAS-3 runs shared the clusters with "the activity of concurrent users", whose jobs
reach the local resource managers directly (sections 5.2 and 6.2). This module draws such jobs
so that a simulation can put KOALA under the same kind of contention: per cluster, a Poisson
stream of rigid local jobs whose mean demand is ``load`` times the cluster's processors.

**Choice** (the paper gives no figures for its background load): sizes uniform in
``1..max_size`` processors, run times exponential with mean ``mean_run`` seconds, arrivals
over ``[0, span)``. The returned ids start after the KOALA jobs' and map to their cluster, the
form ``Koala(background=...)`` takes.
"""

from __future__ import annotations

import numpy as np

from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, Platform


def background_jobs(
    platform: Platform,
    *,
    load: float,
    span: float,
    seed: int,
    first_id: int,
    mean_run: float = 600.0,
    max_size: int = 16,
) -> tuple[list[JobSpec], dict[int, int]]:
    """Local jobs on every cluster of ``platform`` and the cluster of each.

    Args:
        platform: The clusters (each gets its own stream).
        load: Mean fraction of each cluster's processors the local jobs ask for, in [0, 1).
        span: Arrivals are drawn in ``[0, span)`` seconds.
        seed: Seed of the draws (same seed, same jobs).
        first_id: Id of the first local job (after the KOALA jobs' ids).
        mean_run: Mean run time in seconds.
        max_size: Largest local job, in processors (capped at the cluster's size).

    Returns:
        The jobs sorted by submission time, and ``{job id: cluster index}``.
    """
    if not 0.0 <= load < 1.0:
        raise SpecError(f"background load must be in [0, 1), got {load}")
    if not span > 0 or not mean_run > 0 or max_size < 1:
        raise SpecError("background: need span > 0, mean_run > 0 and max_size >= 1")
    rng = np.random.default_rng(seed)
    drawn: list[tuple[float, int, float, int]] = []
    for k, cluster in enumerate(platform.clusters):
        top = min(max_size, cluster.nodes)
        mean_size = (1 + top) / 2
        rate = load * cluster.nodes / (mean_size * mean_run) if load > 0 else 0.0
        t = 0.0
        while rate > 0:
            t += float(rng.exponential(1.0 / rate))
            if t >= span:
                break
            size = int(rng.integers(1, top + 1))
            run = max(1.0, float(round(rng.exponential(mean_run))))
            drawn.append((round(t, 3), size, run, k))
    drawn.sort(key=lambda d: (d[0], d[3]))
    jobs: list[JobSpec] = []
    where: dict[int, int] = {}
    for i, (t, size, run, k) in enumerate(drawn):
        jid = first_id + i
        jobs.append(JobSpec(jid, t, work=run, nodes=size))
        where[jid] = k
    return jobs, where
