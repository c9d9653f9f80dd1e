"""Evolution-profile algebra: hand-checked values and properties against a pointwise oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile as EP
from hpcgym.errors import SpecError

steps = st.lists(
    st.tuples(st.integers(0, 20).map(float), st.integers(0, 9)), min_size=0, max_size=6
)
profiles = steps.map(EP.from_steps)
times = st.integers(-5, 130).map(float)


def pointwise(ep: EP, t: float) -> int:
    """ep(t) straight from the definition."""
    start = 0.0
    for d, n in ep.steps:
        if start <= t < start + d:
            return n
        start += d
    return 0


def grid(t0: float, t1: float) -> np.ndarray:
    """Sample points of [t0, t1) fine enough for integer breakpoints."""
    return np.arange(t0, t1, 0.5)


# ---------------------------------------------------------------------------- hand-checked
def test_paper_resource_example() -> None:
    res = EP.from_steps([(1200, 10), (3600, 20)])
    assert [int(res(t)) for t in (-1, 0, 1199, 1200, 4799, 4800)] == [0, 10, 10, 20, 20, 0]
    assert res.duration == 4800 and res.area() == 1200 * 10 + 3600 * 20 and res.peak() == 20
    assert res.max(0, 1200) == 10 and res.max(0, 1201) == 20 and res.max(5, 5) == 0
    assert res.loc(0, 1000) == 1000 and res.loc(0, 6000) == 4800 and res.loc(0, 3000) == 3000


def test_loc_takes_last_step_holding_max() -> None:
    ep = EP.from_steps([(10, 5), (10, 2), (10, 5), (10, 1)])
    assert ep.max_loc(0, 40) == (5, 30.0)
    assert ep.max_loc(12, 25) == (5, 25.0)
    assert ep.max_loc(31, 50) == (1, 40.0)
    assert ep.max_loc(41, 50) == (0, 50.0)


def test_delay_sum_expand() -> None:
    a = EP.from_steps([(10, 2), (5, 3)])
    b = EP.from_steps([(3, 1), (20, 4)])
    assert a.delay(4).steps == [(4, 0), (10, 2), (5, 3)]
    assert a.delay(0) is a
    assert (a + b).steps == [(3, 3), (7, 6), (5, 7), (8, 4)]
    assert a.expand([12, 5]).is_expansion_of(a)
    assert a.delay(4).undelayed() == (4.0, a)
    with pytest.raises(SpecError):
        a.expand([9, 5])
    with pytest.raises(SpecError):
        a.delay(-1)


def test_invalid_profiles() -> None:
    with pytest.raises(SpecError):
        EP([1, 2], [1])
    with pytest.raises(SpecError):
        EP([-1], [1])
    with pytest.raises(SpecError):
        EP([1], [-1])


def test_zero_length_steps_occupy_no_time() -> None:
    ep = EP.from_steps([(5, 1), (0, 9), (5, 2)])
    assert int(ep(5)) == 2 and ep.max(0, 10) == 2
    assert ep.simplify().steps == [(5, 1), (5, 2)]


# ---------------------------------------------------------------------------- properties
@given(profiles, st.lists(times, min_size=1, max_size=10))
def test_call_matches_definition(ep: EP, ts: list[float]) -> None:
    assert ep(np.array(ts)).tolist() == [pointwise(ep, t) for t in ts]
    assert all(int(ep(t)) == pointwise(ep, t) for t in ts)


@given(profiles, times, times)
def test_max_and_loc_match_definition(ep: EP, a: float, b: float) -> None:
    t0, t1 = min(a, b), max(a, b)
    m, loc = ep.max_loc(t0, t1)
    if t0 == t1:
        assert (m, loc) == (0, t0)
        return
    assert m == max(pointwise(ep, t) for t in grid(t0, t1))
    assert t0 < loc <= t1
    # max(ep, t0, loc) = max(ep, t0, t1) > max(ep, loc, t1)
    assert max(pointwise(ep, t) for t in grid(t0, loc)) == m
    if m > 0 and loc < t1:
        assert max(pointwise(ep, t) for t in grid(loc, t1)) < m


@given(profiles, profiles, st.lists(times, min_size=1, max_size=10))
def test_sum_is_pointwise(a: EP, b: EP, ts: list[float]) -> None:
    s = a + b
    assert [int(s(t)) for t in ts] == [pointwise(a, t) + pointwise(b, t) for t in ts]
    assert s.area() == pytest.approx(a.area() + b.area())
    assert s == b + a


@given(profiles, st.integers(0, 30).map(float), st.lists(times, min_size=1, max_size=10))
def test_delay_shifts(ep: EP, d0: float, ts: list[float]) -> None:
    shifted = ep.delay(d0)
    assert [int(shifted(t)) for t in ts] == [pointwise(ep, t - d0) for t in ts]
    assert shifted.area() == ep.area()


@given(profiles, st.integers(0, 60).map(float), st.integers(0, 60).map(float))
def test_after_and_window(ep: EP, a: float, w: float) -> None:
    tail = ep.after(a)
    win = ep.window(a, a + w)
    for u in grid(0, 80):
        assert int(tail(u)) == pointwise(ep, a + u)
    assert win.duration == pytest.approx(w)
    for u in grid(0, w):
        assert int(win(u)) == pointwise(ep, a + u)


@given(profiles)
@settings(max_examples=50)
def test_reversed_mirrors(ep: EP) -> None:
    rev = ep.reversed()
    total = ep.duration
    for u in grid(0, total):
        assert int(rev(u + 0.25)) == pointwise(ep, total - u - 0.25)


@given(steps.filter(lambda s: len(s) > 0), st.lists(st.integers(0, 10), min_size=6))
def test_expand_keeps_nodes(s: list[tuple[float, int]], extra: list[int]) -> None:
    ep = EP.from_steps(s)
    longer = ep.durations + np.array(extra[: len(ep)], dtype=float)
    x = ep.expand(longer)
    assert x.is_expansion_of(ep) and x.area() >= ep.area()
    assert x.nodes.tolist() == ep.nodes.tolist()


@given(profiles)
def test_simplify_keeps_function(ep: EP) -> None:
    simple = ep.simplify()
    for t in grid(-1, ep.duration + 2):
        assert int(simple(t)) == pointwise(ep, t)
    n = simple.nodes
    assert (simple.durations > 0).all() and (n[1:] != n[:-1]).all()


def test_docstring_examples() -> None:
    import doctest

    import hpcgym.baselines.evolving.evolution_profile as module

    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
