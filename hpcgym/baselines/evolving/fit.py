"""Fit functions of the evolving-application list scheduler (Klein and Perez, Algorithm 2).

A fit places a requested EP over a resource EP ``res`` (absolute time, other applications'
nodes) on ``nnodes`` nodes and returns ``(ts, epx)``: the start time and the expanded EP, with
``res(t) + delay(epx, ts)(t) <= nnodes`` everywhere.

**The problem, restated.** Step ``j`` of the schedule occupies ``nodes[j]`` over the interval
``[s_j, s_{j+1})`` (its work, then the wait for step ``j+1``'s extra nodes). Its length is at
least ``d_j`` and at most ``limits[j] * d_j``; the first step is delayed, never expanded, and the
last is never expanded. Feasible schedules are closed under the component-wise minimum (and
maximum), so there is a unique earliest one: ``base_fit`` finds it with the paper's Algorithm 2
(the recursion unrolled into a loop over the step index), hence the earliest completion time.
``compact`` finds the latest schedule with that completion time (the paper's right-to-left
compacting) by running the same algorithm on the problem mirrored in time.

The three jump rules of Algorithm 2, at step ``i`` placed at ``ts``:
  1. the step does not fit on ``[ts, ts + d)``: jump to ``loc(res, ts, ts + d)``;
  2. the previous step would last more than ``l`` times its duration: it must start at
     ``ts - l * d_prev`` or later (back-track one step);
  3. the previous step's wait ``[t0, ts)`` lacks nodes: it must start at ``loc(res, t0, ts)``
     or later (back-track one step).

**Choice (engine semantics).** In the engine an evolving job waits (expands a step) only before
a *larger* step; a step followed by one of the same size or smaller moves on by itself. With
``expand_decreases=False`` (the default) such steps get an expansion limit of 1, so every plan
can be executed through engine commands. ``True`` is the paper's literal model, where the
scheduler may hold any step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile
from hpcgym.errors import SpecError

_FENCE = 1e15
"""Seconds: length of the all-busy block that keeps the mirrored fit from crossing ``t0``."""


def step_limits(
    req: EvolutionProfile, limit: float, *, expand_decreases: bool = False
) -> list[float]:
    """Expand limit of each step of ``req``: ``limit``, or 1 where the step may not wait.

    The last step never waits. Unless ``expand_decreases``, neither does a step followed by one
    needing no more nodes (see the module docstring).
    """
    nodes = req.nodes.tolist()
    out = []
    for j in range(len(nodes)):
        grows = j + 1 < len(nodes) and (expand_decreases or nodes[j + 1] > nodes[j])
        out.append(float(limit) if grows else 1.0)
    return out


def _check(req: EvolutionProfile, nnodes: int, limit: float) -> None:
    if not len(req):
        raise SpecError("fit: the requested evolution profile has no step")
    if (req.durations <= 0).any():
        raise SpecError(f"fit: step durations must be > 0, got {req.durations.tolist()}")
    if req.peak() > nnodes:
        raise SpecError(f"fit: a step needs {req.peak()} nodes, the platform has {nnodes}")
    if not limit >= 1:
        raise SpecError(f"fit: the expand limit must be >= 1, got {limit}")


def earliest_starts(
    dur: Sequence[float],
    nodes: Sequence[int],
    limits: Sequence[float],
    res: EvolutionProfile,
    nnodes: int,
    t0: float,
    *,
    pinned: bool = False,
) -> list[float]:
    """Algorithm 2: the earliest start time of every step (the earliest schedule).

    Args:
        dur: Step durations (> 0).
        nodes: Step node counts (each <= ``nnodes``).
        limits: Expand limit of each step (>= 1).
        res: Resource EP in absolute time.
        nnodes: Platform size.
        t0: Earliest start of the first step.
        pinned: The first step already runs from ``t0`` (online re-planning): it is neither
            moved nor checked, and may wait for the second step as long as needed.

    Returns:
        ``s`` with step ``j`` on ``[s[j], s[j + 1])``; the last step ends at ``s[-1] + dur[-1]``.
    """
    n_steps = len(dur)
    ts = [0.0] * n_steps
    ts[0] = t0
    max_loc = res.max_loc
    i = 0
    while i < n_steps:
        d, room = dur[i], nnodes - nodes[i]
        t = ts[i]
        if not (pinned and i == 0):
            while True:  # rule 1: jump past the blocking maximum
                m, loc = max_loc(t, t + d)
                if m <= room:
                    break
                t = loc
        ts[i] = t
        if i > 0 and not (pinned and i == 1):
            prev, dprev = ts[i - 1], dur[i - 1]
            earliest_prev = t - limits[i - 1] * dprev
            if earliest_prev > prev:  # rule 2: the previous step would expand too much
                ts[i - 1] = earliest_prev
                i -= 1
                continue
            m, loc = max_loc(prev + dprev, t)
            if m > nnodes - nodes[i - 1]:  # rule 3: no room for the previous step's wait
                ts[i - 1] = loc
                i -= 1
                continue
        if i + 1 < n_steps:
            ts[i + 1] = t + d
        i += 1
    if n_steps > 1 and not pinned:
        ts[0] = ts[1] - dur[0]  # the first step is delayed, never expanded
    return ts


def base_fit(
    req: EvolutionProfile,
    res: EvolutionProfile,
    nnodes: int,
    limit: float = 1.0,
    *,
    t0: float = 0.0,
    compact: bool = False,
    expand_decreases: bool = False,
) -> tuple[float, EvolutionProfile]:
    """The base fit (Algorithm 2), optionally followed by compacting.

    Args:
        req: Requested EP (positive durations, node counts <= ``nnodes``).
        res: Resource EP of the applications already placed, in absolute time.
        nnodes: Platform size.
        limit: Expand limit ``l >= 1`` (``math.inf``: unlimited).
        t0: Earliest start (the submission time, or now).
        compact: Re-place the steps right to left, keeping the completion time, to cut waste.
        expand_decreases: Let steps followed by no larger one wait (paper's literal model).

    Returns:
        ``(ts, epx)``: start time and expanded EP; ``delay(epx, ts) + res`` fits ``nnodes``.

    Raises:
        SpecError: Empty request, a non-positive duration, a step wider than the platform,
            or ``limit < 1``.
    """
    _check(req, nnodes, limit)
    dur, nodes = req.durations.tolist(), req.nodes.tolist()
    limits = step_limits(req, limit, expand_decreases=expand_decreases)
    starts = earliest_starts(dur, nodes, limits, res, nnodes, t0)
    end = starts[-1] + dur[-1]
    if compact and len(dur) > 2:
        starts = latest_starts(dur, nodes, limits, res, nnodes, t0, end)
    return starts[0], EvolutionProfile(_lengths(starts, end), nodes)


def latest_starts(
    dur: Sequence[float],
    nodes: Sequence[int],
    limits: Sequence[float],
    res: EvolutionProfile,
    nnodes: int,
    t0: float,
    end: float,
) -> list[float]:
    """Compacting: the latest start of every step for a schedule ending at ``end``.

    Runs ``earliest_starts`` on the mirrored problem (steps reversed, ``res`` on ``[t0, end)``
    reversed, everything before ``t0`` busy): a wait after step ``j`` becomes, in the mirror,
    a wait before it, which is the same interval ``[s_j, s_{j+1})`` at ``nodes[j]``.
    ``end`` must be reachable (the base fit's completion time).
    """
    n_steps = len(dur)
    span = end - t0
    mirror = res.window(t0, end).reversed()
    mirror = EvolutionProfile(
        [*mirror.durations.tolist(), _FENCE], [*mirror.nodes.tolist(), nnodes + 1]
    )
    u = earliest_starts(dur[::-1], nodes[::-1], limits[::-1], mirror, nnodes, 0.0)
    u.append(u[-1] + dur[0])
    if u[-1] > span + 1e-9 * max(1.0, abs(span)):
        raise AssertionError(f"compacting crossed t0: {u} over {span}")  # pragma: no cover
    return [end - u[n_steps - j] for j in range(n_steps)]


def rigid_fit(
    req: EvolutionProfile, res: EvolutionProfile, nnodes: int, *, t0: float = 0.0
) -> tuple[float, EvolutionProfile]:
    """The paper's ``rigid`` placement: the request as one block at the earliest time it fits.

    The block holds the request's peak node count for its total duration (conservative
    backfilling's placement of the application seen as a rigid job).
    """
    _check(req, nnodes, 1.0)
    block = EvolutionProfile([req.duration], [req.peak()])
    starts = earliest_starts([req.duration], [req.peak()], [1.0], res, nnodes, t0)
    return starts[0], block


def _lengths(starts: Sequence[float], end: float) -> list[float]:
    bounds = [*starts, end]
    return [bounds[k + 1] - bounds[k] for k in range(len(starts))]


def is_feasible(
    req: EvolutionProfile,
    start: float,
    epx: EvolutionProfile,
    res: EvolutionProfile,
    nnodes: int,
    limit: float = math.inf,
    *,
    expand_decreases: bool = False,
    tol: float = 1e-9,
) -> bool:
    """Whether ``delay(epx, start)`` is a valid schedule of ``req`` over ``res``.

    Checks the paper's C1 (an expansion of ``req``, first and last steps not expanded, limits
    respected) and C2 (``res + delay(epx, start) <= nnodes``).
    """
    if not epx.is_expansion_of(req) or start < 0:
        return False
    limits = step_limits(req, limit, expand_decreases=expand_decreases)
    stretch = epx.durations - req.durations
    if stretch[0] > tol or stretch[-1] > tol:
        return False
    if (epx.durations > req.durations * limits + tol).any():
        return False
    return (res + epx.delay(start)).peak() <= nnodes
