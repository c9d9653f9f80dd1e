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

    def advance(self, now: float) -> None:
        """Start the profile at ``now`` (at or after its start): drop the steps over by then."""
        times = self.times
        k = bisect.bisect_right(times, now) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = now

    def free_at(self, t: float) -> int:
        """Nodes free at time ``t`` (``t`` at or after the profile's start)."""
        return self.free[bisect.bisect_right(self.times, t) - 1]

    def earliest(self, size: int, duration: float) -> float:
        """The earliest step start at which ``size`` nodes stay free for ``duration`` seconds.

        Returns ``inf`` if that never happens (``size`` larger than the last step's nodes).
        """
        return self.earliest_before(size, duration, math.inf, math.inf)

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
        self._add(start, start + duration, -size)

    def unreserve(self, start: float, duration: float, size: int) -> None:
        """Give back what ``reserve(start, duration, size)`` took."""
        if duration <= 0 or size <= 0:
            return
        self._add(start, start + duration, size)

    def release(self, end: float, size: int) -> None:
        """``size`` more nodes free from the profile's start until ``end``.

        A running job that ended before its estimated end ``end`` gives its nodes back early.
        """
        if size > 0 and end > self.times[0]:
            self._add(self.times[0], end, size)

    def _add(self, start: float, end: float, delta: int) -> None:
        """``delta`` more free nodes on ``[start, end)``; steps made equal to their left merge."""
        i = self._split(start)
        times, free = self.times, self.free
        j = self._split(end) if math.isfinite(end) else len(times)
        for k in range(i, j):
            free[k] += delta
        if j < len(times) and free[j] == free[j - 1]:
            del times[j]
            del free[j]
        if i > 0 and free[i] == free[i - 1]:
            del times[i]
            del free[i]

    def earliest_before(self, size: int, duration: float, until: float, horizon: float) -> float:
        """``earliest`` among step starts before ``until``, with windows cut at ``horizon``.

        The earliest step start ``t < until`` from which ``size`` nodes stay free until
        ``min(t + duration, horizon)``; ``inf`` if there is none.
        """
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n and times[i] < until:
            if free[i] < size:
                i += 1
                continue
            end = times[i] + duration
            if end > horizon:
                end = horizon
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < size:
                    break
                j += 1
            else:
                return times[i]
            i = j + 1
        return math.inf

    def most_free(self, spans: list[tuple[float, float]]) -> int:
        """The most nodes free at any time of the ``(start, end)`` spans (0 if all empty)."""
        times, free = self.times, self.free
        n = len(times)
        best = 0
        for a, b in spans:
            i = bisect.bisect_right(times, a) - 1 if a > times[0] else 0
            while i < n and times[i] < b:
                if free[i] > best:
                    best = free[i]
                i += 1
        return best
