"""CPU allocation once tasks are mapped (paper, section 4.6).

Every task of a job gets the same yield; a node's CPU shares sum to at most 1.

- ``base``: every job gets ``1 / max(1, L)``, ``L`` the largest node load (sum of CPU needs);
  this maximizes the minimum yield of the mapping.
- ``min`` (``opt=min``): iterative max-min, as for bandwidth sharing between network flows:
  raise the yields of all unfrozen jobs together until a node is full or they reach 1, freeze
  the jobs on the full nodes, repeat.
- ``avg`` (``opt=avg``): the linear program maximizing the sum of yields with no yield below
  the base value (HiGHS through ``scipy.optimize.linprog``).
"""

from __future__ import annotations

import numpy as np

from hpcgym.baselines.dfrs.placement import Placement

_TIGHT = 1e-9
"""Relative slack under which a node counts as full when freezing jobs."""


def load_matrix(placement: Placement) -> tuple[list[int], np.ndarray]:
    """Job ids in mapping order and the ``(nodes, jobs)`` matrix of CPU need per node and job."""
    ids = list(placement.nodes)
    mat = np.zeros((placement.load.size, len(ids)))
    for k, jid in enumerate(ids):
        np.add.at(mat[:, k], placement.nodes[jid], placement.specs[jid].cpu_need)
    return ids, mat


def base_yield(placement: Placement) -> float:
    """``1 / max(1, L)`` with ``L`` the largest node load."""
    return 1.0 / max(1.0, placement.max_load())


def maxmin_yields(placement: Placement) -> dict[int, float]:
    """Iterative max-min yields of the mapped jobs (``opt=min``)."""
    ids, mat = load_matrix(placement)
    n = len(ids)
    y = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    while not frozen.all():
        free_cols = ~frozen
        need = mat[:, free_cols].sum(axis=1)
        used = mat[:, frozen] @ y[frozen]
        active = need > 0
        level = np.full(mat.shape[0], np.inf)
        level[active] = (1.0 - used[active]) / need[active]
        t = min(1.0, float(level.min()))
        y[free_cols] = max(t, 0.0)
        if t >= 1.0:
            break
        tight = active & (level <= t * (1.0 + _TIGHT) + _TIGHT)
        on_tight = (mat[tight] > 0).any(axis=0) & free_cols
        frozen |= on_tight
    return dict(zip(ids, y.tolist(), strict=True))


def avg_yields(placement: Placement) -> dict[int, float]:
    """Yields maximizing their sum, none below the base yield (``opt=avg``)."""
    from scipy.optimize import linprog

    ids, mat = load_matrix(placement)
    if not ids:
        return {}
    floor = base_yield(placement)
    rows = mat.any(axis=1)
    res = linprog(
        -np.ones(len(ids)),
        A_ub=mat[rows],
        b_ub=np.ones(int(rows.sum())),
        bounds=[(floor, 1.0)] * len(ids),
        method="highs",
    )
    if res.status != 0:
        return dict.fromkeys(ids, floor)
    y = np.clip(res.x, floor, 1.0)
    over = float((mat @ y).max())
    if over > 1.0 + 1e-10:
        # Undo the solver's feasibility tolerance: shrink the part above the floor (the floor
        # alone always fits) just enough for every node.
        extra = y - floor
        slack = np.maximum(1.0 - mat.sum(axis=1) * floor, 0.0)
        extra_load = mat @ extra
        worst = extra_load > slack
        scale = float((slack[worst] / extra_load[worst]).min()) if worst.any() else 1.0
        y = floor + extra * scale
    return dict(zip(ids, y.tolist(), strict=True))


def yields(placement: Placement, opt: str) -> dict[int, float]:
    """Yields of the mapped jobs by ``opt``: ``"base"``, ``"min"`` or ``"avg"``."""
    if opt == "min":
        return maxmin_yields(placement)
    if opt == "avg":
        return avg_yields(placement)
    if opt == "base":
        return dict.fromkeys(placement.nodes, base_yield(placement))
    raise ValueError(f"unknown allocation {opt!r}; use 'base', 'min' or 'avg'")
