"""Availability profiles against brute force on random small timelines."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import Profile, shadow

CAP = 8
releases_st = st.lists(st.tuples(st.integers(1, 30), st.integers(1, 3)), max_size=6)
jobs_st = st.lists(st.tuples(st.integers(1, CAP), st.integers(1, 12)), min_size=1, max_size=6)


def free_at(t: int, now_free: int, releases, reserved) -> int:  # type: ignore[no-untyped-def]
    free = now_free + sum(n for r, n in releases if r <= t)
    return free - sum(n for s, d, n in reserved if s <= t < s + d)


@settings(max_examples=200, deadline=None)
@given(releases=releases_st, jobs=jobs_st)
def test_earliest_and_reserve_match_brute_force(releases, jobs) -> None:  # type: ignore[no-untyped-def]
    held = sum(n for _, n in releases)
    if held > CAP:
        return
    now_free = CAP - held
    profile = Profile(0.0, now_free, [(float(t), n) for t, n in releases])
    reserved: list[tuple[int, int, int]] = []
    for size, dur in jobs:
        # Brute force on whole seconds: every step starts at an integer here.
        expect = next(
            t
            for t in range(0, 100)
            if all(free_at(u, now_free, releases, reserved) >= size for u in range(t, t + dur))
        )
        got = profile.earliest(size, float(dur))
        assert got == expect
        profile.reserve(got, float(dur), size)
        reserved.append((expect, dur, size))
        for u in range(0, 60):
            assert profile.free_at(float(u)) == free_at(u, now_free, releases, reserved)


@settings(max_examples=200, deadline=None)
@given(releases=releases_st, need=st.integers(1, 12), free=st.integers(0, 4))
def test_shadow_matches_brute_force(releases, need, free) -> None:  # type: ignore[no-untyped-def]
    rel = sorted((float(t), n) for t, n in releases)
    t_shadow, extra = shadow(0.0, free, need, rel)
    total = free + sum(n for _, n in rel)
    if total < need:
        assert (t_shadow, extra) == (math.inf, 0)
        return
    expect = next(
        t for t in [0.0] + [r for r, _ in rel] if free + sum(n for r, n in rel if r <= t) >= need
    )
    assert t_shadow == expect
    assert extra == free + sum(n for r, n in rel if r <= expect) - need


def test_profile_never_fits_too_big() -> None:
    assert Profile(0.0, 2, [(5.0, 2)]).earliest(5, 1.0) == math.inf
