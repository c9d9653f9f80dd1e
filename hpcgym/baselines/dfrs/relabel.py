"""Which physical node each bin of a fresh packing becomes.

MCB8 returns bins: sets of tasks that fit together. Nodes are identical, so any bin may go to any
node; choosing the node that already holds most of a bin's tasks changes nothing in the packing
and spares migrations. Bins holding pinned tasks are the pinned tasks' own nodes and stay put; the
other bins are matched to the other nodes by a maximum-overlap assignment (Hungarian method),
overlap being the tasks of a job that a bin holds and the node already runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def relabel(
    mapping: Mapping[int, Sequence[int]],
    current: Mapping[int, np.ndarray],
    pinned: set[int],
    n_nodes: int,
) -> dict[int, np.ndarray]:
    """The packing ``mapping`` (bins by job) with bins renamed to maximize overlap with ``current``.

    Args:
        mapping: Bin of each task, by job id (bins numbered like nodes).
        current: Node of each task of the jobs running now, by job id.
        pinned: Jobs whose bins are their own nodes.
        n_nodes: Nodes of the platform.
    """
    from scipy.optimize import linear_sum_assignment

    fixed = np.zeros(n_nodes, dtype=bool)
    for jid in pinned:
        if jid in mapping:
            fixed[np.asarray(mapping[jid], dtype=np.int64)] = True
    free = np.flatnonzero(~fixed)
    pos = np.full(n_nodes, -1)
    pos[free] = np.arange(free.size)
    score = np.zeros((free.size, free.size))
    for jid, bins in mapping.items():
        if jid in pinned or jid not in current:
            continue
        b_ids, b_cnt = np.unique(np.asarray(bins, dtype=np.int64), return_counts=True)
        n_ids, n_cnt = np.unique(current[jid], return_counts=True)
        bi, ni = pos[b_ids], pos[n_ids]
        bk, nk = bi >= 0, ni >= 0
        if bk.any() and nk.any():
            score[np.ix_(bi[bk], ni[nk])] += np.minimum.outer(b_cnt[bk], n_cnt[nk])
    name = np.arange(n_nodes)
    if free.size and score.any():
        rows, cols = linear_sum_assignment(score, maximize=True)
        name[free[rows]] = free[cols]
    return {jid: name[np.asarray(bins, dtype=np.int64)] for jid, bins in mapping.items()}
