"""SD-Policy's mate selection (D'Amico et al., section 3.2, Equations 1-4 and Listing 2).

The candidates of one scheduling pass are kept as numpy columns so that each guest's filter
(``p_i < MAX_SLOWDOWN``, size at most the guest's, enough work left) is one vectorized step;
only the survivors are grouped by size to find the best single mate or pair.
"""

from __future__ import annotations

import numpy as np

from hpcgym.sim import Job


class MatePool:
    """Running malleable jobs that may host a guest, as seen at the start of a pass.

    Each candidate shares all its nodes with the guest, so under both runtime models it runs
    at rate ``1 - sharing_factor`` for the guest's whole duration ``D``. Its runtime increase is
    then ``D * sharing_factor``, its penalty ``p = (end + increase - submit) / req_time``
    (Equation 4, with ``end - submit = wait + req_time + earlier increases``), and it outlasts the
    guest when it has at least ``D * (1 - sharing_factor)`` static seconds of work left.
    """

    def __init__(self, jobs: list[Job], ends: list[float], reqs: list[float], now: float) -> None:
        """Candidates ``jobs`` with their predicted ends and requested times (running at rate 1)."""
        self.jobs = jobs
        self.ids = np.array([j.id for j in jobs], dtype=np.int64)
        self.sizes = np.array([j.size for j in jobs], dtype=np.int64)
        self.ends = np.array(ends, dtype=float)
        self.reqs = np.array(reqs, dtype=float)
        self.left = self.ends - now
        self.since_submit = self.ends - np.array([j.spec.submit for j in jobs], dtype=float)
        self.alive = np.ones(len(jobs), dtype=bool)

    def __len__(self) -> int:
        return int(self.alive.sum())

    def pick(
        self, nodes: int, duration: float, sharing_factor: float, cutoff: float, max_mates: int
    ) -> list[int] | None:
        """Indices of the mates with the least total penalty whose sizes sum to ``nodes``.

        Constraint 3 (sizes sum to the guest's request) and at most ``max_mates`` mates; ties go
        to one mate over two, then to the earlier-started candidates. ``None`` when no set fits.
        """
        increase = duration * sharing_factor
        ok = self.alive & (self.sizes <= nodes) & (self.left >= duration - increase)
        idx = np.flatnonzero(ok)
        if not idx.size:
            return None
        p = (self.since_submit[idx] + increase) / self.reqs[idx]
        keep = p < cutoff
        idx, p = idx[keep], p[keep]
        by_size: dict[int, list[tuple[float, int]]] = {}
        for i, pi in zip(idx.tolist(), p.tolist(), strict=True):
            by_size.setdefault(int(self.sizes[i]), []).append((pi, i))
        for group in by_size.values():
            group.sort()
        best: tuple[float, list[int]] | None = None
        if nodes in by_size:
            pi, i = by_size[nodes][0]
            best = (pi, [i])
        if max_mates >= 2:
            for a in sorted(by_size):
                b = nodes - a
                if b < a or b not in by_size:
                    continue
                group = by_size[a]
                if a == b and len(group) < 2:
                    continue
                first = group[0]
                second = group[1] if a == b else by_size[b][0]
                total = first[0] + second[0]
                if best is None or total < best[0]:
                    best = (total, sorted([first[1], second[1]]))
        return None if best is None else best[1]

    def remove(self, indices: list[int]) -> None:
        """Take chosen mates out of the pool for the rest of the pass."""
        self.alive[indices] = False
