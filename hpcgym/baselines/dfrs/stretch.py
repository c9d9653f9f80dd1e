"""``opt=max`` for MCB8-stretch (paper, section 4.7).

Yields that iteratively minimize the maximum *estimated* stretch at the next periodic event,
for a fixed mapping.

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
