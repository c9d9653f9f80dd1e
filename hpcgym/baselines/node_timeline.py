"""A free-node timeline: how many nodes of one cluster are predicted free from each time on.

The SD-Policy and KOALA schedulers keep their own small availability map here (the shared
``hpcgym.baselines.availability`` was being written at the same time). It is a step function kept as
two parallel lists, ``times`` ascending and ``free[i]`` holding on ``[times[i], times[i + 1])``;
the last step lasts forever. Every operation is linear in the number of steps.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable


class NodeTimeline:
    """Predicted free nodes of one cluster over time, from ``now`` on.

    Example:
        >>> tl = NodeTimeline(now=0.0, free_now=2, releases=[(10.0, 2)])
        >>> tl.earliest(4, 5.0)
        10.0
        >>> tl.reserve(10.0, 15.0, 3)
        >>> tl.earliest(2, 1.0)
        0.0
        >>> tl.earliest(2, 20.0)
        15.0
    """

    __slots__ = ("free", "times")

    def __init__(self, now: float, free_now: int, releases: Iterable[tuple[float, int]]) -> None:
        """Build the map from the nodes free now and ``(time, nodes)`` predicted releases.

        Releases at or before ``now`` count as free now (a job past its estimate is taken to end
        at once, the usual backfilling convention).
        """
        by_time: dict[float, int] = {}
        base = free_now
        for t, n in releases:
            if t <= now:
                base += n
            else:
                by_time[t] = by_time.get(t, 0) + n
        self.times = [now]
        self.free = [base]
        for t in sorted(by_time):
            self.times.append(t)
            self.free.append(self.free[-1] + by_time[t])

    def _split(self, t: float) -> int:
        """Index of the step starting exactly at ``t`` (inserted if needed; ``t >= times[0]``)."""
        i = bisect.bisect_left(self.times, t)
        if i < len(self.times) and self.times[i] == t:
            return i
        self.times.insert(i, t)
        self.free.insert(i, self.free[i - 1])
        return i

    def reserve(self, start: float, end: float, nodes: int) -> None:
        """Take ``nodes`` on ``[start, end)`` (``end`` may be ``inf``)."""
        start = max(start, self.times[0])
        if end <= start or nodes == 0:
            return
        i = self._split(start)
        j = len(self.times) if math.isinf(end) else self._split(end)
        for k in range(i, j):
            self.free[k] -= nodes

    def release(self, start: float, end: float, nodes: int) -> None:
        """Give back ``nodes`` on ``[start, end)``: the inverse of ``reserve``."""
        self.reserve(start, end, -nodes)

    def free_at(self, t: float) -> int:
        """Predicted free nodes at time ``t``."""
        i = bisect.bisect_right(self.times, t) - 1
        return self.free[max(i, 0)]

    def earliest(self, nodes: int, duration: float, after: float | None = None) -> float:
        """Earliest time ``>= after`` (default ``now``) with ``nodes`` free for ``duration``.

        Returns ``inf`` when the request never fits (more nodes than the cluster will ever free).
        """
        times, free = self.times, self.free
        n = len(times)
        t0 = times[0] if after is None else max(after, times[0])
        i = max(bisect.bisect_right(times, t0) - 1, 0)
        while i < n:
            start = max(times[i], t0)
            k = i
            while k < n and free[k] >= nodes:
                if k + 1 == n or times[k + 1] >= start + duration:
                    return start
                k += 1
            i = k + 1
        return math.inf
