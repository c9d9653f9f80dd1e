"""The base fit and compacting against an exhaustive search on small integer worlds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile as EP
from hpcgym.baselines.evolving.fit import (
    base_fit,
    earliest_starts,
    is_feasible,
    latest_starts,
    rigid_fit,
    step_limits,
)
from hpcgym.errors import SpecError

NNODES = 6


def all_schedules(
    req: EP, res: EP, nnodes: int, limits: list[float], horizon: int
) -> list[tuple[int, ...]]:
    """Every feasible schedule (step start times) on the integer grid up to ``horizon``."""
    dur = [int(d) for d in req.durations]
    nodes = req.nodes.tolist()
    n = len(dur)

    def room(j: int, a: int, b: int) -> bool:
        return res.max(a, b) <= nnodes - nodes[j]

    out: list[tuple[int, ...]] = []

    def extend(prefix: list[int]) -> None:
        j = len(prefix) - 1
        s = prefix[-1]
        if j == n - 1:
            if room(j, s, s + dur[j]):
                out.append(tuple(prefix))
            return
        hi = s + dur[j] if j == 0 else min(s + limits[j] * dur[j], horizon)
        for nxt in range(s + dur[j], int(hi) + 1):
            if room(j, s, nxt):
                extend([*prefix, nxt])

    for s0 in range(horizon + 1):
        extend([s0])
    return out


worlds = st.tuples(
    st.lists(
        st.tuples(st.integers(1, 6).map(float), st.integers(1, NNODES)), min_size=1, max_size=4
    ),
    st.lists(st.tuples(st.integers(1, 8).map(float), st.integers(0, NNODES)), max_size=5),
    st.sampled_from([1.0, 2.0, 3.0, math.inf]),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(worlds)
def test_fit_is_the_earliest_schedule(world: tuple) -> None:
    req_steps, res_steps, limit, expand_decreases = world
    req, res = EP.from_steps(req_steps), EP.from_steps(res_steps)
    limits = step_limits(req, limit, expand_decreases=expand_decreases)
    horizon = int(res.duration + req.duration) + 1
    feasible = all_schedules(req, res, NNODES, limits, horizon)
    assert feasible, "the exhaustive search finds a schedule after the resource EP ends"
    ts, epx = base_fit(req, res, NNODES, limit, expand_decreases=expand_decreases)
    # Never overflows, never shortens a step, respects the limits.
    assert is_feasible(req, ts, epx, res, NNODES, limit, expand_decreases=expand_decreases)
    assert (epx.durations >= req.durations).all()
    # Earliest completion, and the component-wise earliest schedule.
    best_end = min(s[-1] + req.durations[-1] for s in feasible)
    assert ts + epx.duration == best_end
    got = earliest_starts(req.durations.tolist(), req.nodes.tolist(), limits, res, NNODES, 0.0)
    assert got == [min(s[j] for s in feasible) for j in range(len(req))]
    # Compacting keeps the completion time and gives the component-wise latest schedule.
    cts, cx = base_fit(req, res, NNODES, limit, compact=True, expand_decreases=expand_decreases)
    assert cts + cx.duration == best_end
    assert is_feasible(req, cts, cx, res, NNODES, limit, expand_decreases=expand_decreases)
    assert cx.area() <= epx.area()
    same_end = [s for s in feasible if s[-1] + req.durations[-1] == best_end]
    late = latest_starts(
        req.durations.tolist(), req.nodes.tolist(), limits, res, NNODES, 0.0, best_end
    )
    assert late == [max(s[j] for s in same_end) for j in range(len(req))]


@settings(max_examples=60, deadline=None)
@given(worlds, st.integers(0, 10).map(float))
def test_fit_respects_release_time(world: tuple, t0: float) -> None:
    req_steps, res_steps, limit, _ = world
    req, res = EP.from_steps(req_steps), EP.from_steps(res_steps)
    for compact in (False, True):
        ts, epx = base_fit(req, res, NNODES, limit, t0=t0, compact=compact)
        assert ts >= t0
        assert is_feasible(req, ts, epx, res, NNODES, limit)


def test_hand_built_profile() -> None:
    # 5 of 10 nodes busy until 1000; the last step needs all 10.
    res = EP.from_steps([(1000, 5)])
    req = EP.from_steps([(100, 1), (100, 5), (100, 10)])
    cases = {
        (1.0, False): (800.0, [100, 100, 100]),
        (2.0, False): (700.0, [100, 200, 100]),
        (math.inf, False): (0.0, [100, 900, 100]),
        (2.0, True): (800.0, [100, 100, 100]),
        (math.inf, True): (800.0, [100, 100, 100]),
    }
    for (limit, compact), (start, lengths) in cases.items():
        ts, epx = base_fit(req, res, 10, limit, compact=compact)
        assert (ts, epx.durations.tolist()) == (start, lengths), (limit, compact)


def test_first_step_delayed_not_expanded() -> None:
    # Step 2 (8 nodes) only fits from 50; the 2-node first step is moved, not held.
    res = EP.from_steps([(50, 5)])
    req = EP.from_steps([(10, 2), (10, 8)])
    ts, epx = base_fit(req, res, 10, math.inf)
    assert (ts, epx.steps) == (40.0, [(10, 2), (10, 8)])


def test_wait_only_before_a_larger_step_by_default() -> None:
    # Step 4 (9 nodes) fits from 40 only; with limit 2 the 4 s step 3 may wait 4 s, so it
    # starts at 32. Step 2 (5 nodes) is followed by a smaller step: the engine cannot hold it,
    # so by default the application starts later; the paper's literal model holds step 2.
    res = EP.from_steps([(40, 2)])
    req = EP.from_steps([(10, 1), (10, 5), (4, 3), (10, 9)])
    ts, epx = base_fit(req, res, 10, 2.0)
    assert (ts, epx.steps) == (12.0, [(10, 1), (10, 5), (8, 3), (10, 9)])
    ts, epx = base_fit(req, res, 10, 2.0, expand_decreases=True)
    assert (ts, epx.steps) == (2.0, [(10, 1), (20, 5), (8, 3), (10, 9)])
    assert not is_feasible(req, ts, epx, res, 10, 2.0)
    assert is_feasible(req, ts, epx, res, 10, 2.0, expand_decreases=True)


def test_holding_before_a_smaller_step_never_helps_without_limit() -> None:
    # Whatever blocks a smaller next step also blocks holding the current one.
    res = EP.from_steps([(25, 0), (10, 8)])
    req = EP.from_steps([(10, 1), (10, 5), (10, 3), (10, 2)])
    assert base_fit(req, res, 10, math.inf) == base_fit(
        req, res, 10, math.inf, expand_decreases=True
    )


def test_rigid_fit_takes_peak_for_total() -> None:
    res = EP.from_steps([(100, 5)])
    req = EP.from_steps([(10, 2), (30, 6)])
    assert rigid_fit(req, res, 10) == (100.0, EP([40], [6]))
    assert rigid_fit(EP.from_steps([(10, 2), (30, 5)]), res, 10) == (0.0, EP([40], [5]))


def test_fit_rejects_bad_requests() -> None:
    res = EP()
    with pytest.raises(SpecError):
        base_fit(EP(), res, 10)
    with pytest.raises(SpecError):
        base_fit(EP([0.0], [1]), res, 10)
    with pytest.raises(SpecError):
        base_fit(EP([1.0], [11]), res, 10)
    with pytest.raises(SpecError):
        base_fit(EP([1.0], [1]), res, 10, 0.5)
