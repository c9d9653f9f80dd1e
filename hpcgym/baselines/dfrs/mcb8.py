"""MCB8: task mapping as 2-D vector packing with a binary search on the yield.

Paper, section 4.3 (after Stillwell et al. 2010 and Leinberger et al.'s MCB heuristic).

For a target yield ``Y`` each task of job ``j`` becomes an item ``(Y * c_j, m_j)`` (CPU
requirement, memory). Items are split into a CPU-heavy list (CPU requirement above memory) and
a memory-heavy list, each sorted by non-increasing largest requirement, ties by submission order
(fixed over time, so that a similar job set packs the same way from one call to the next). Nodes
are filled one after the other: each next task is the first one that fits from the list that
counters the node's imbalance (more free memory than free CPU: the memory-heavy list), else from
the other list; a node is closed when nothing fits. The packing succeeds when every task is
placed. The binary search keeps the highest feasible ``Y`` (accuracy 0.01); when no yield works,
the lowest-priority job is dropped and the search restarts.

Pinned jobs (``minft``/``minvt``, or jobs whose mapping cannot change now) keep their nodes: they
are placed first and only their requirement changes with ``Y``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hpcgym.baselines.dfrs.placement import EPS

ACCURACY = 0.01
"""Accuracy of the binary search on the yield (paper: 0.01)."""


@dataclass(frozen=True, slots=True)
class PackJob:
    """One job for the packing: its tasks and per-task needs, and its nodes if pinned.

    ``order`` breaks ties between equal item sizes (the submission order: a fixed order keeps
    successive packings of a similar job set alike, so few tasks move).
    """

    id: int
    tasks: int
    cpu: float
    mem: float
    pinned: tuple[int, ...] | None = None
    order: int = 0


def pack(
    jobs: Sequence[PackJob], cpu_req: Sequence[float], n_nodes: int
) -> dict[int, list[int]] | None:
    """One vector packing: the bin of each task of each job, or ``None`` if some task is left.

    Args:
        jobs: Jobs in priority order (highest first).
        cpu_req: CPU requirement of one task of each job (``Y * c`` for MCB8).
        n_nodes: Nodes (bins) of the platform.
    """
    cpu_free = [1.0] * n_nodes
    mem_free = [1.0] * n_nodes
    out: dict[int, list[int]] = {}
    cpu_list: list[int] = []
    mem_list: list[int] = []
    need_cpu = need_mem = 0.0
    for k, job in enumerate(jobs):
        r = cpu_req[k]
        if job.pinned is not None:
            for node in job.pinned:
                cpu_free[node] -= r
                mem_free[node] -= job.mem
                if cpu_free[node] < -EPS or mem_free[node] < -EPS:
                    return None
            out[job.id] = list(job.pinned)
        elif job.tasks:
            (cpu_list if r > job.mem else mem_list).append(k)
            out[job.id] = []
            need_cpu += r * job.tasks
            need_mem += job.mem * job.tasks
    # Capacity left on the nodes not yet filled, for an early exit when it cannot be enough.
    cap_cpu, cap_mem = sum(cpu_free), sum(mem_free)
    if need_cpu > cap_cpu + EPS or need_mem > cap_mem + EPS:
        return None
    size = [max(cpu_req[k], jobs[k].mem) for k in range(len(jobs))]
    mems = [job.mem for job in jobs]
    cpu_list.sort(key=lambda k: (-size[k], jobs[k].order))
    mem_list.sort(key=lambda k: (-size[k], jobs[k].order))
    left = [job.tasks for job in jobs]
    todo = sum(left[k] for k in cpu_list) + sum(left[k] for k in mem_list)
    lists = (cpu_list, mem_list)
    for node in range(n_nodes):
        if not todo:
            break
        if need_cpu > cap_cpu + EPS or need_mem > cap_mem + EPS:
            return None
        cf, mf = cpu_free[node], mem_free[node]
        cap_cpu -= cf
        cap_mem -= mf
        # Per-list cursors only move forward: a job that does not fit now never fits later on
        # this node, whose free capacity only shrinks.
        cur = [0, 0]
        if mf > cf:
            pref = 1
        elif cf > mf:
            pref = 0
        else:
            # Balanced (an empty node): start with the list whose head is the larger item.
            head_c = size[cpu_list[0]] if cpu_list else -1.0
            head_m = size[mem_list[0]] if mem_list else -1.0
            pref = 0 if head_c >= head_m else 1
        while True:
            placed = False
            for which in (pref, 1 - pref):
                lst = lists[which]
                n_lst = len(lst)
                i = cur[which]
                cf_e, mf_e = cf + EPS, mf + EPS
                while i < n_lst:
                    k = lst[i]
                    if left[k] and cpu_req[k] <= cf_e and mems[k] <= mf_e:
                        break
                    i += 1
                cur[which] = i
                if i < n_lst:
                    k = lst[i]
                    r, m = cpu_req[k], mems[k]
                    dest = out[jobs[k].id]
                    # Place tasks of k while the imbalance keeps pointing at this list and
                    # k still fits: the scan would pick k again each time.
                    while True:
                        cf -= r
                        mf -= m
                        need_cpu -= r
                        need_mem -= m
                        left[k] -= 1
                        todo -= 1
                        dest.append(node)
                        if (
                            not left[k]
                            or which != pref
                            or (mf > cf) != (which == 1)
                            or r > cf + EPS
                            or m > mf + EPS
                        ):
                            break
                    placed = True
                    break
            if not placed or not todo:
                break
            pref = 1 if mf > cf else 0
        cpu_free[node], mem_free[node] = cf, mf
        if todo and (not left[cpu_list[0]] if cpu_list else False):
            cpu_list[:] = [k for k in cpu_list if left[k]]
        if todo and (not left[mem_list[0]] if mem_list else False):
            mem_list[:] = [k for k in mem_list if left[k]]
    return None if todo else out


def _memory_prune(jobs: list[PackJob], n_nodes: int) -> list[PackJob]:
    """Drop lowest-priority jobs while their total memory exceeds the platform's."""
    total = sum(j.tasks * j.mem for j in jobs)
    while jobs and total > n_nodes + EPS:
        total -= jobs[-1].tasks * jobs[-1].mem
        jobs = jobs[:-1]
    return jobs


def search(
    jobs: Sequence[PackJob],
    n_nodes: int,
    requirements: Callable[[list[PackJob], float], list[float] | None],
    iterations: int | None = None,
    accuracy: float = ACCURACY,
    linear: bool = False,
) -> tuple[dict[int, list[int]], float]:
    """Binary search on a scalar in [0, 1] with job dropping (MCB8 and MCB8-stretch).

    Args:
        jobs: Jobs in priority order (highest first).
        n_nodes: Nodes of the platform.
        requirements: CPU requirement per task of each job for a value of the scalar, or
            ``None`` when that value is infeasible outright; must be monotone (a higher value
            asks for more) and give a packable instance at 0 when memory allows.
        iterations: Bisection steps (default: until the interval is below ``accuracy``).
        accuracy: Width at which the search stops.
        linear: Requirements are proportional to the scalar (MCB8): the search then starts
            below the value at which the total requirement exceeds the platform's CPU.

    Returns:
        The mapping of the kept jobs (dropped jobs are absent) and the value reached.
    """
    active = _memory_prune(list(jobs), n_nodes)
    while active:
        req1 = requirements(active, 1.0)
        top = pack(active, req1, n_nodes) if req1 is not None else None
        if top is not None:
            return top, 1.0
        lo, hi = 0.0, 1.0
        best: dict[int, list[int]] | None = None
        if linear and req1 is not None:
            # No value above the platform's CPU over the total requirement at 1 can pack.
            total = sum(req1[k] * j.tasks for k, j in enumerate(active))
            if total > n_nodes:
                hi = n_nodes / total
        steps = 0
        while (hi - lo > accuracy) if iterations is None else steps < iterations:
            mid = 0.5 * (lo + hi)
            req = requirements(active, mid)
            got = pack(active, req, n_nodes) if req is not None else None
            if got is None:
                hi = mid
            else:
                lo, best = mid, got
            steps += 1
        if best is None:
            # Nothing above 0 packed: the value 0 (memory only) decides whether to drop a job.
            req0 = requirements(active, 0.0)
            best = pack(active, req0, n_nodes) if req0 is not None else None
            if best is None:
                active = active[:-1]
                continue
        return best, lo
    return {}, 0.0


def mcb8(jobs: Sequence[PackJob], n_nodes: int) -> tuple[dict[int, list[int]], float]:
    """MCB8: the mapping with the highest common yield found (see the module doc)."""
    return search(jobs, n_nodes, lambda act, y: [y * j.cpu for j in act], linear=True)


def stretch_requirements(
    flow: Mapping[int, float], virtual: Mapping[int, float], period: float
) -> Callable[[list[PackJob], float], list[float] | None]:
    """MCB8-stretch's requirements for an inverse target stretch ``x`` (paper, section 4.7).

    A job with flow time ``ft`` and virtual time ``vt`` (by job id) needs the yield ``y`` with
    ``(ft + T) / (vt + y * T) = 1 / x`` to reach the estimated stretch ``1/x`` at the next
    periodic event, ``T`` the period: ``y = (x * (ft + T) - vt) / T``, floored at 0. Above 1
    the target is infeasible.
    """

    def req(active: list[PackJob], x: float) -> list[float] | None:
        out = []
        for j in active:
            y = (x * (flow[j.id] + period) - virtual[j.id]) / period
            if y > 1.0 + EPS:
                return None
            out.append(min(1.0, max(0.0, y)) * j.cpu)
        return out

    return req


def mcb8_stretch(
    jobs: Sequence[PackJob],
    flow: Mapping[int, float],
    virtual: Mapping[int, float],
    period: float,
    n_nodes: int,
    iterations: int = 20,
) -> tuple[dict[int, list[int]], float]:
    """MCB8-stretch: the mapping with the lowest estimated max stretch found.

    The bisection on the inverse stretch runs ``iterations`` steps (the paper gives no
    accuracy for it; 0.01 on the inverse would be coarse for stretches above 10).

    Returns:
        The mapping and the inverse of the estimated max stretch reached.
    """
    return search(jobs, n_nodes, stretch_requirements(flow, virtual, period), iterations=iterations)
