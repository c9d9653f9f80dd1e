"""Availability profiles: how many nodes are free from now on, and reservations in them.

EASY backfilling needs one number pair, the *shadow time* at which the head job can start and
the *extra* nodes left beside it then (``shadow``); conservative backfilling keeps a whole
profile with a reservation for every queued job (``Profile``). Both are built from the running
jobs' estimated ends (``hpcgym.sim.planning.estimated_end``) and count whole nodes.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable

from hpcgym.sim.planning import shadow

__all__ = ["Profile", "shadow"]


class Profile:
    """Free nodes as a step function of time from ``now``, with reservations.

    ``free[i]`` nodes are free on ``[times[i], times[i + 1])``; the last step lasts forever.
    Every operation is linear in the number of steps.

    Example:
        >>> p = Profile(0.0, 2, [(10.0, 2)])
        >>> p.earliest(4, 5.0)
        10.0
        >>> p.reserve(10.0, 5.0, 3)
        >>> p.earliest(2, 1.0), p.earliest(2, 20.0)
        (0.0, 15.0)
    """

    __slots__ = ("free", "times")

    def __init__(self, now: float, free: int, releases: Iterable[tuple[float, int]]) -> None:
        """Start with ``free`` nodes at ``now``; ``releases`` are ``(time, nodes)`` in any order.

        Releases at or before ``now`` count as free now.
        """
        times = [now]
        avail = [free]
        for t, n in sorted(releases):
            if t <= times[-1]:
                avail[-1] += n
            else:
                times.append(t)
                avail.append(avail[-1] + n)
        self.times = times
        self.free = avail

    def __repr__(self) -> str:
        steps = ", ".join(f"{t:g}:{f}" for t, f in zip(self.times, self.free, strict=True))
        return f"Profile({steps})"

    def free_at(self, t: float) -> int:
        """Nodes free at time ``t`` (``t`` at or after the profile's start)."""
        return self.free[bisect.bisect_right(self.times, t) - 1]

    def earliest(self, size: int, duration: float) -> float:
        """The earliest step start at which ``size`` nodes stay free for ``duration`` seconds.

        Returns ``inf`` if that never happens (``size`` larger than the last step's nodes).
        """
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n:
            if free[i] < size:
                i += 1
                continue
            end = times[i] + duration
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < size:
                    break
                j += 1
            else:
                return times[i]
            # Step j lacks nodes, and every start up to times[j] overlaps it.
            i = j + 1
        return math.inf

    def _split(self, t: float) -> int:
        """Index of the step starting at ``t``, inserting a breakpoint if needed."""
        times = self.times
        k = bisect.bisect_left(times, t)
        if k < len(times) and times[k] == t:
            return k
        self.times.insert(k, t)
        self.free.insert(k, self.free[k - 1])
        return k

    def reserve(self, start: float, duration: float, size: int) -> None:
        """Take ``size`` nodes on ``[start, start + duration)`` (``start`` in the profile)."""
        if duration <= 0 or size <= 0:
            return
        end = start + duration
        i = self._split(start)
        j = self._split(end) if math.isfinite(end) else len(self.times)
        free = self.free
        for k in range(i, j):
            free[k] -= size
