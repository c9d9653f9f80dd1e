"""Evolution profiles (EPs): node counts as step functions of time, and their algebra.

An EP is a sequence of steps ``(duration, nodes)`` (Klein and Perez, "Towards scheduling evolving
applications"). The same object describes three things: a *requested* EP (what an application
asks for, step by step), a *scheduled* EP (what it is given: the requested one, expanded and/or
delayed) and a *resource* EP (how many nodes of the platform are taken over time, the sum of
scheduled EPs). Time starts at 0 at the first step; ``ep(t) = 0`` before 0 and after the last
step.

Helpers, named as in the paper: ``ep(t)``, ``ep.max(t0, t1)``, ``ep.loc(t0, t1)``,
``ep.delay(t0)``, ``ep1 + ep2``, ``ep.expand(durations)``; checks for the paper's "expanded" and
"delayed" relations. Evaluation at many times and the sum are vectorized with numpy; the window
queries ``max`` and ``loc``, called many times on a few steps each by the fit, walk Python lists,
which is faster than numpy on so few elements.

Example:
    >>> res = EvolutionProfile.from_steps([(1200, 10), (3600, 20)])
    >>> int(res(1199.0)), int(res(1200.0)), int(res(5000.0))
    (10, 20, 0)
    >>> res.max(0, 1300), res.loc(0, 1300), res.loc(0, 1000)
    (20, 1300.0, 1000.0)
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hpcgym.errors import SpecError

__all__ = ["EvolutionProfile"]


class EvolutionProfile:
    """An immutable sequence of steps ``(duration, nodes)`` starting at time 0.

    Durations are finite and ``>= 0``, node counts integers ``>= 0``. Steps of zero duration are
    kept (an application's step structure matters) but occupy no time.
    """

    __slots__ = ("_durations", "_ends", "_ends_l", "_nodes", "_nodes_l")

    def __init__(self, durations: ArrayLike = (), nodes: ArrayLike = ()) -> None:
        """Build an EP from parallel sequences of step durations and node counts.

        Raises:
            SpecError: The sequences differ in length, or a duration or node count is invalid.
        """
        d = np.array(durations, dtype=float).ravel()
        n = np.array(nodes, dtype=np.int64).ravel()
        if d.size != n.size:
            raise SpecError(f"evolution profile: {d.size} durations but {n.size} node counts")
        if d.size and not (np.isfinite(d).all() and (d >= 0).all()):
            raise SpecError(f"evolution profile: durations must be finite and >= 0, got {d}")
        if n.size and (n < 0).any():
            raise SpecError(f"evolution profile: node counts must be >= 0, got {n}")
        ends = np.cumsum(d)
        for a in (d, n, ends):
            a.flags.writeable = False
        self._durations, self._nodes, self._ends = d, n, ends
        self._ends_l: list[float] = ends.tolist()
        self._nodes_l: list[int] = n.tolist()

    @classmethod
    def from_steps(cls, steps: Iterable[tuple[float, int]]) -> EvolutionProfile:
        """An EP from ``(duration, nodes)`` pairs."""
        pairs = list(steps)
        return cls([p[0] for p in pairs], [p[1] for p in pairs])

    # ------------------------------------------------------------------------------ reading
    @property
    def durations(self) -> NDArray[np.float64]:
        """Step durations (read-only)."""
        return self._durations

    @property
    def nodes(self) -> NDArray[np.int64]:
        """Step node counts (read-only)."""
        return self._nodes

    @property
    def ends(self) -> NDArray[np.float64]:
        """End time of each step (read-only)."""
        return self._ends

    @property
    def starts(self) -> NDArray[np.float64]:
        """Start time of each step."""
        return self._ends - self._durations

    @property
    def duration(self) -> float:
        """Total duration (end of the last step; 0 when empty)."""
        return self._ends_l[-1] if self._ends_l else 0.0

    @property
    def steps(self) -> list[tuple[float, int]]:
        """The steps as ``(duration, nodes)`` pairs."""
        return list(zip(self._durations.tolist(), self._nodes_l, strict=True))

    def __len__(self) -> int:
        return len(self._nodes_l)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvolutionProfile):
            return NotImplemented
        return self.steps == other.steps

    def __hash__(self) -> int:
        return hash(tuple(self.steps))

    def __repr__(self) -> str:
        inner = ", ".join(f"({d:g}, {n})" for d, n in self.steps)
        return f"EvolutionProfile([{inner}])"

    def area(self) -> float:
        """Node-seconds: the sum of ``duration * nodes`` over the steps."""
        return float(self._durations @ self._nodes)

    def peak(self) -> int:
        """The largest node count (0 when empty)."""
        return max(self._nodes_l, default=0)

    # ------------------------------------------------------------------------------ paper helpers
    def __call__(self, t: ArrayLike) -> NDArray[np.int64]:
        """``ep(t)``: nodes at time(s) ``t``; 0 before 0 and from the end of the last step on."""
        ta = np.asarray(t, dtype=float)
        size = self._nodes.size
        if not size:
            return np.zeros(ta.shape, dtype=np.int64)
        idx = np.searchsorted(self._ends, ta, side="right")
        inside = (ta >= 0) & (idx < size)
        return np.where(inside, self._nodes[np.minimum(idx, size - 1)], 0).astype(np.int64)

    def max_loc(self, t0: float, t1: float) -> tuple[int, float]:
        """``(max(ep, t0, t1), loc(ep, t0, t1))`` in one pass over the window ``[t0, t1)``.

        ``loc`` is the end of the last step holding the maximum, clipped to ``t1``: the earliest
        ``t`` with ``max(t0, t) = max(t0, t1) > max(t, t1)``. An empty window (``t1 <= t0``)
        gives ``(0, t0)``; a maximum reached only after the last step (0) gives ``t1``.
        """
        if t1 <= t0:
            return 0, float(t0)
        ends, nodes = self._ends_l, self._nodes_l
        m = len(ends)
        best, loc = -1, t0
        k = bisect_right(ends, t0) if t0 > 0 else 0
        prev = ends[k - 1] if k else 0.0
        while k < m and prev < t1:
            end = ends[k]
            if end > prev:
                v = nodes[k]
                if v >= best:
                    best, loc = v, end
            prev = end
            k += 1
        if (t0 < 0 or (k == m and prev < t1)) and best <= 0:
            best, loc = 0, t1  # the maximum is the 0 outside the steps
        return best, float(loc if loc < t1 else t1)

    def max(self, t0: float, t1: float) -> int:
        """``max(ep, t0, t1)``: the most nodes over ``[t0, t1)``, 0 if ``t0 >= t1``."""
        return self.max_loc(t0, t1)[0]

    def loc(self, t0: float, t1: float) -> float:
        """``loc(ep, t0, t1)``: end of the last step with ``max(ep, t0, t1)``, in ``[t0, t1]``."""
        return self.max_loc(t0, t1)[1]

    def delay(self, t0: float) -> EvolutionProfile:
        """``delay(ep, t0)``: the EP ``t0`` later (a leading ``(t0, 0)`` step if ``t0 > 0``).

        Raises:
            SpecError: ``t0`` is negative or not finite.
        """
        if not (math.isfinite(t0) and t0 >= 0):
            raise SpecError(f"evolution profile: delay must be finite and >= 0, got {t0}")
        if t0 == 0:
            return self
        return EvolutionProfile(
            np.concatenate(([t0], self._durations)), np.concatenate(([0], self._nodes))
        )

    def __add__(self, other: EvolutionProfile) -> EvolutionProfile:
        """``ep1 + ep2``: ``(ep1 + ep2)(t) = ep1(t) + ep2(t)``, in canonical form (``simplify``)."""
        if not isinstance(other, EvolutionProfile):
            return NotImplemented
        cuts = np.union1d(self._ends, other._ends)
        if not cuts.size:
            return EvolutionProfile()
        starts = np.concatenate(([0.0], cuts[:-1]))
        values = self(starts) + other(starts)
        return EvolutionProfile(np.diff(np.concatenate(([0.0], cuts))), values).simplify()

    def expand(self, durations: ArrayLike) -> EvolutionProfile:
        """The expanded EP with these step durations, each at least the original one.

        Raises:
            SpecError: Wrong number of durations, or one shorter than the original step.
        """
        d = np.asarray(durations, dtype=float).ravel()
        if d.size != self._durations.size or (d < self._durations).any():
            raise SpecError(
                f"evolution profile: an expansion of {self!r} needs {self._durations.size} "
                f"durations, none shorter than the original; got {d}"
            )
        return EvolutionProfile(d, self._nodes)

    # ------------------------------------------------------------------------------ relations
    def is_expansion_of(self, requested: EvolutionProfile) -> bool:
        """Whether this EP is ``requested`` with every step at least as long (paper: expanded)."""
        return bool(
            len(self) == len(requested)
            and np.array_equal(self._nodes, requested._nodes)
            and (self._durations >= requested._durations).all()
        )

    def undelayed(self) -> tuple[float, EvolutionProfile]:
        """``(d0, ep)`` with ``self == ep.delay(d0)``: strips one leading step of 0 nodes."""
        if len(self) > 1 and self._nodes_l[0] == 0:
            return float(self._durations[0]), EvolutionProfile(self._durations[1:], self._nodes[1:])
        return 0.0, self

    # ------------------------------------------------------------------------------ transforms
    def simplify(self) -> EvolutionProfile:
        """Canonical form of a resource EP.

        No zero-length steps, equal neighbours merged, no trailing step of 0 nodes.
        """
        d, n = self._durations, self._nodes
        keep = d > 0
        d, n = d[keep], n[keep]
        if n.size:
            new = np.concatenate(([True], n[1:] != n[:-1]))
            groups = np.cumsum(new) - 1
            d = np.bincount(groups, weights=d)
            n = n[new]
            while n.size and n[-1] == 0:
                d, n = d[:-1], n[:-1]
        return EvolutionProfile(d, n)

    def after(self, t: float) -> EvolutionProfile:
        """The profile seen from time ``t`` on, shifted to start at 0 (``t >= 0``)."""
        if t <= 0:
            return self
        ends = self._ends
        k = int(np.searchsorted(ends, t, side="right"))
        if k >= ends.size:
            return EvolutionProfile()
        d = self._durations[k:].copy()
        d[0] = ends[k] - t
        return EvolutionProfile(d, self._nodes[k:])

    def window(self, t0: float, t1: float) -> EvolutionProfile:
        """The profile on ``[t0, t1)`` shifted to start at 0, padded with 0 nodes to ``t1 - t0``."""
        tail = self.after(t0)
        if t1 - t0 <= 0:
            return EvolutionProfile()
        ends = tail._ends
        k = int(np.searchsorted(ends, t1 - t0, side="left"))
        if k < ends.size:
            d = tail._durations[: k + 1].copy()
            d[-1] -= ends[k] - (t1 - t0)
            return EvolutionProfile(d, tail._nodes[: k + 1])
        pad = t1 - t0 - tail.duration
        return EvolutionProfile(
            np.concatenate((tail._durations, [pad])), np.concatenate((tail._nodes, [0]))
        )

    def reversed(self) -> EvolutionProfile:
        """The steps in reverse order (the profile mirrored in time over its duration)."""
        return EvolutionProfile(self._durations[::-1], self._nodes[::-1])
