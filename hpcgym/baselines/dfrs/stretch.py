"""``opt=max`` and ``opt=avg`` for MCB8-stretch (paper, section 4.7).

``opt=max``: yields that iteratively minimize the maximum *estimated* stretch at the next
periodic event, for a fixed mapping. ``opt=avg``: yields minimizing the sum (so the average) of
the estimated stretches, none above the minimized maximum (``avg_stretch_yields``).

A job with flow time ``ft`` and virtual time ``vt`` given yield ``y`` for the period ``T`` has
the estimated stretch ``(ft + T) / (vt + y * T)``. For a level ``S`` every unfrozen job gets the
smallest yield reaching it, ``y(S) = ((ft + T) / S - vt) / T`` clipped to [``Y_MIN``, 1]. The
lowest level the nodes can carry is found by bisection on ``1/S``; jobs on the nodes that are
then full, and jobs at yield 1, are frozen; the others go on to a lower level.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hpcgym.baselines.dfrs.allocation import load_matrix
from hpcgym.baselines.dfrs.placement import Placement

Y_MIN = 1e-5
"""Smallest yield given to a mapped job (the engine needs a positive share)."""
_STEPS = 50


def stretch_yields(
    placement: Placement,
    flow: Mapping[int, float],
    virtual: Mapping[int, float],
    period: float,
    start: Mapping[int, float] | None = None,
) -> dict[int, float]:
    """Yields of the mapped jobs minimizing the max estimated stretch, then the next, and so on.

    Args:
        placement: The mapping.
        flow: Flow time of each job, by id.
        virtual: Virtual time of each job, by id.
        period: The scheduling period ``T``.
        start: Feasible yields to fall back on for a job the levels would give less (unused
            when ``None``).
    """
    ids, mat = load_matrix(placement)
    ft = np.array([flow[j] for j in ids]) + period
    vt = np.array([virtual[j] for j in ids])
    y = np.full(len(ids), Y_MIN)
    frozen = np.zeros(len(ids), dtype=bool)

    def level_yields(x: float, free: np.ndarray) -> np.ndarray:
        out = y.copy()
        out[free] = np.clip((x * ft[free] - vt[free]) / period, Y_MIN, 1.0)
        return out

    def fits(cand: np.ndarray) -> bool:
        return bool((mat @ cand <= 1.0 + 1e-12).all())

    x_lo = 0.0
    while not frozen.all():
        free = ~frozen
        lo, hi = x_lo, 1.0
        if fits(level_yields(hi, free)):
            y = level_yields(hi, free)
            break
        for _ in range(_STEPS):
            mid = 0.5 * (lo + hi)
            if fits(level_yields(mid, free)):
                lo = mid
            else:
                hi = mid
        y = level_yields(lo, free)
        over = mat @ level_yields(hi, free) > 1.0 + 1e-12
        newly = ((mat[over] > 0).any(axis=0) | (y >= 1.0)) & free
        if not newly.any():
            break
        frozen |= newly
        x_lo = lo
    if start is not None:
        # Never below the common yield the mapping already guarantees.
        base = np.array([start[j] for j in ids])
        if fits(np.maximum(y, base)):
            y = np.maximum(y, base)
    return dict(zip(ids, y.tolist(), strict=True))


def min_max_floor(mat: np.ndarray, ft: np.ndarray, vt: np.ndarray, period: float) -> np.ndarray:
    """The yields of the lowest common estimated stretch the mapping can carry.

    ``mat`` is the ``(nodes, jobs)`` CPU-need matrix, ``ft`` the flow times plus the period
    and ``vt`` the virtual times. Every job gets the smallest yield reaching the level (at
    least ``Y_MIN``); the level is bisected on its inverse as in ``stretch_yields``.
    """

    def at(x: float) -> np.ndarray:
        return np.clip((x * ft - vt) / period, Y_MIN, 1.0)

    def fits(x: float) -> bool:
        y = at(x)
        return bool((mat @ y <= 1.0 + 1e-12).all()) and not bool(
            ((x * ft - vt) / period > 1.0 + 1e-12).any()
        )

    if fits(1.0):
        return at(1.0)
    lo, hi = 0.0, 1.0
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return at(lo)


def avg_stretch_yields(
    placement: Placement,
    flow: Mapping[int, float],
    virtual: Mapping[int, float],
    period: float,
    segments: int = 16,
    rounds: int = 5,
) -> dict[int, float]:
    """``opt=avg`` for MCB8-stretch: yields minimizing the sum of estimated stretches.

    The analogue of the average-yield program (paper, LP (2)) for stretches: minimize
    ``sum_j (ft_j + T) / (vt_j + y_j * T)`` over the fixed mapping, with no job's estimated
    stretch above the lowest common level the mapping can carry (``min_max_floor``), yields at
    most 1 and every node's CPU shares summing to at most 1.

    The objective is convex and separable but not linear, so each term is replaced by its
    piecewise-linear interpolation on ``segments`` pieces (breakpoints geometric in
    ``vt + y * T``, where the curvature is) and the resulting linear program is solved by
    HiGHS (``scipy.optimize.linprog``): one variable per piece, filled in order by the solver
    because the slopes increase. ``rounds`` re-solves on a grid narrowed to the pieces around
    the previous solution; each round's solution is feasible and no worse than the previous
    one, and the interpolation error bounds the gap to the exact optimum.
    """
    from scipy.optimize import linprog

    ids, mat = load_matrix(placement)
    if not ids:
        return {}
    a = np.array([flow[j] for j in ids]) + period
    vt = np.array([virtual[j] for j in ids])
    floor = min_max_floor(mat, a, vt, period)
    # Only jobs below yield 1 whose nodes all have room left can improve.
    full = 1.0 - mat @ floor <= 1e-12
    room = (floor < 1.0) & ~(mat[full] > 0).any(axis=0)
    y = floor.copy()
    if not room.any():
        return dict(zip(ids, y.tolist(), strict=True))
    top = np.where(room, 1.0, floor)
    if bool((mat @ top <= 1.0 + 1e-12).all()):
        return dict(zip(ids, top.tolist(), strict=True))
    u_lo = vt + floor * period
    u_hi = np.where(room, vt + period, u_lo)
    best = float((a / u_lo).sum())
    for _ in range(rounds):
        free = u_hi > u_lo * (1.0 + 1e-12)
        if not free.any():
            break
        fj = np.flatnonzero(free)
        rows = (mat[:, fj] > 0).any(axis=1)
        # Breakpoints b[j, 0..segments], geometric between u_lo and u_hi.
        t = np.linspace(0.0, 1.0, segments + 1)
        b = u_lo[fj, None] * (u_hi[fj, None] / u_lo[fj, None]) ** t
        b[:, 0], b[:, -1] = u_lo[fj], u_hi[fj]
        width = np.diff(b, axis=1)  # in u units
        f = a[fj, None] / b
        slope = np.diff(f, axis=1) / width  # per unit of u, increasing along a row
        n_var = fj.size * segments
        # y_j = (u_lo_j - vt_j) / T + sum_k delta_jk / T.
        base = (u_lo - vt) / period
        a_ub = np.repeat(mat[rows][:, fj] / period, segments, axis=1)
        b_ub = 1.0 - mat[rows] @ base
        res = linprog(
            slope.ravel(),
            A_ub=a_ub,
            b_ub=np.maximum(b_ub, 0.0),
            bounds=np.column_stack((np.zeros(n_var), width.ravel())),
            method="highs",
        )
        if res.status != 0:
            break
        delta = res.x.reshape(fj.size, segments)
        cand = base.copy()
        cand[fj] += np.clip(delta, 0.0, width).sum(axis=1) / period
        cand = _fit_above(mat, np.clip(cand, floor, 1.0), floor)
        y = cand
        value = float((a / (vt + y * period)).sum())
        if best - value <= 1e-9 * value:
            break
        best = value
        # Narrow each free job's grid to the two pieces on either side of its solution.
        u = vt + y * period
        pos = np.array([np.searchsorted(b[r], u[j]) for r, j in enumerate(fj)])
        lo_i = np.clip(pos - 2, 0, segments)
        hi_i = np.clip(pos + 1, 0, segments)
        u_lo = u_lo.copy()
        u_hi = u_hi.copy()
        u_lo[fj] = np.minimum(b[np.arange(fj.size), lo_i], u[fj])
        u_hi[fj] = np.maximum(b[np.arange(fj.size), hi_i], u[fj])
    return dict(zip(ids, y.tolist(), strict=True))


def _fit_above(mat: np.ndarray, y: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Scale the part of ``y`` above ``floor`` down until every node fits (solver tolerance)."""
    if float((mat @ y).max()) <= 1.0 + 1e-10:
        return y
    extra = y - floor
    slack = np.maximum(1.0 - mat @ floor, 0.0)
    extra_load = mat @ extra
    worst = extra_load > slack
    scale = float((slack[worst] / extra_load[worst]).min()) if worst.any() else 1.0
    return floor + extra * scale
