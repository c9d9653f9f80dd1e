"""The DFRS lower bound on the optimal maximum (bounded) stretch (paper, Theorem 1).

With infinite memory and free, instantaneous migration, a max stretch ``S`` is achievable iff
the linear system (1) of the paper has a solution: job ``j`` (release ``r``, work ``p`` seconds,
``n`` tasks of CPU need ``c``) is done in the intervals between the release dates and the
deadlines ``d = r + S * p``, receives at most ``l(t) * c * n`` CPU-seconds in an interval of
length ``l(t)`` (1d) and the platform's ``P`` nodes give at most ``P * l(t)`` (1e). That system
is a transportation problem, so it is checked as a maximum flow (source -> job: ``p * c * n``;
job -> interval: ``l(t) * c * n``; interval -> sink: ``P * l(t)``): feasible iff every job's
work flows. ``theorem1_feasible_lp`` states the same system literally for ``linprog`` (tests).

The experiments report *bounded* stretch, ``max(response, tau) / max(p, tau)``: a schedule of
max bounded stretch ``S`` meets the deadlines ``r + S * max(p, tau)``, so the deadlines here use
``max(p, tau)``, which keeps the result a lower bound on the achievable max bounded stretch.
Capacities are scaled to integers for the flow, job work rounded down and capacities up: the
rounding only relaxes the system. The binary search returns its infeasible end (or 1), never
above the optimum.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hpcgym.sim import JobSpec

_FLOW_SCALE_LIMIT = 2.0**30
"""Largest total integer capacity handed to the flow solver."""


def _instance(
    jobs: Sequence[JobSpec], tau: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    live = [j for j in jobs if j.work > 0]
    r = np.array([j.submit for j in live], dtype=float)
    q = np.array([max(j.work, tau) for j in live], dtype=float)
    rate = np.array([j.cpu_need * j.nodes for j in live], dtype=float)
    work = np.array([j.work for j in live], dtype=float) * rate
    return r, q, rate, work


def _intervals(r: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    points = np.unique(np.concatenate((r, d)))
    return points[:-1], points[1:]


def feasible(jobs: Sequence[JobSpec], n_nodes: int, stretch: float, tau: float = 10.0) -> bool:
    """Whether Theorem 1's system has a solution for max bounded stretch ``stretch``."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    r, q, rate, work = _instance(jobs, tau)
    if r.size == 0:
        return True
    d = r + stretch * q
    lo, hi = _intervals(r, d)
    length = hi - lo
    # Job j may work in interval t iff r_j <= lo_t and hi_t <= d_j: a contiguous range.
    first = np.searchsorted(lo, r, side="left")
    last = np.searchsorted(hi, d, side="right")
    counts = np.maximum(last - first, 0)
    job_idx = np.repeat(np.arange(r.size), counts)
    offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    int_idx = np.repeat(first, counts) + offs
    cap_ji = length[int_idx] * rate[job_idx]
    cap_ji = np.minimum(cap_ji, work[job_idx])
    cap_ts = np.minimum(n_nodes * length, work.sum())
    unit = max(work.sum() / _FLOW_SCALE_LIMIT, 1e-6)
    src = np.floor(work / unit).astype(np.int64)
    mid = np.ceil(cap_ji / unit).astype(np.int64)
    snk = np.ceil(cap_ts / unit).astype(np.int64)
    n_j, n_t = r.size, lo.size
    source, sink = 0, 1 + n_j + n_t
    rows = np.concatenate((np.zeros(n_j, np.int64), 1 + job_idx, 1 + n_j + np.arange(n_t)))
    cols = np.concatenate((1 + np.arange(n_j), 1 + n_j + int_idx, np.full(n_t, sink)))
    caps = np.concatenate((src, mid, snk)).astype(np.int32)
    graph = csr_array((caps, (rows, cols)), shape=(sink + 1, sink + 1))
    got = maximum_flow(graph, source, sink).flow_value
    return bool(got >= int(src.sum()))


def theorem1_feasible_lp(
    jobs: Sequence[JobSpec], n_nodes: int, stretch: float, tau: float = 10.0
) -> bool:
    """Theorem 1's linear system, stated literally and solved by HiGHS (for small instances)."""
    from scipy.optimize import linprog

    live = [j for j in jobs if j.work > 0]
    if not live:
        return True
    r, q, _, _ = _instance(live, tau)
    d = r + stretch * q
    lo, hi = _intervals(r, d)
    nj, nt = len(live), lo.size
    length = hi - lo
    var = np.arange(nj * nt).reshape(nj, nt)
    bounds = []
    for j, spec in enumerate(live):
        for t in range(nt):
            ok = r[j] <= lo[t] and hi[t] <= d[j]  # (1b) and (1c)
            bounds.append((0.0, min(1.0, length[t] / spec.work) if ok else 0.0))  # (1d)
    a_eq = np.zeros((nj, nj * nt))
    for j in range(nj):
        a_eq[j, var[j]] = 1.0  # (1a)
    a_ub = np.zeros((nt, nj * nt))
    for j, spec in enumerate(live):
        a_ub[:, var[j]] = np.eye(nt) * spec.work * spec.cpu_need * spec.nodes  # (1e)
    res = linprog(
        np.zeros(nj * nt),
        A_ub=a_ub,
        b_ub=n_nodes * length,
        A_eq=a_eq,
        b_eq=np.ones(nj),
        bounds=bounds,
        method="highs",
    )
    return bool(res.status == 0)


def max_stretch_bound(
    jobs: Sequence[JobSpec], n_nodes: int, tau: float = 10.0, rel_tol: float = 1e-3
) -> float:
    """Lower bound on the optimal max bounded stretch: binary search on Theorem 1's system.

    Args:
        jobs: The workload's jobs (sizes are task counts).
        n_nodes: Nodes of the platform.
        tau: Bounded-stretch threshold in seconds.
        rel_tol: Relative width at which the search stops.

    Returns:
        The largest value found infeasible (or 1.0 if 1 is feasible): at most the optimum.
    """
    if feasible(jobs, n_nodes, 1.0, tau):
        return 1.0
    lo, hi = 1.0, 2.0
    while not feasible(jobs, n_nodes, hi, tau):
        lo, hi = hi, hi * 2.0
    while hi - lo > rel_tol * lo:
        mid = 0.5 * (lo + hi)
        if feasible(jobs, n_nodes, mid, tau):
            hi = mid
        else:
            lo = mid
    return lo


def degradation(max_stretch: float, bound: float) -> float:
    """The paper's *degradation from bound*: achieved max stretch over the lower bound."""
    return max_stretch / bound
