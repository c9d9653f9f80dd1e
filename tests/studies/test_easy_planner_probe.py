"""The EASY planner probe's forward play is EASY-F1's engine schedule, and its planner is EASY-F1
when it has one candidate (``studies/probes/easy_planner_probe.py``; figures in docs/results.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PROBES = Path(__file__).resolve().parents[2] / "studies" / "probes"
sys.path.insert(0, str(PROBES))

import easy_planner_probe as ep  # noqa: E402

from hpcgym.baselines.priority import EasyPriority  # noqa: E402
from hpcgym.sim import Simulator  # noqa: E402


def test_the_forward_play_over_the_true_future_is_easy_f1s_schedule() -> None:
    ep.check("validation", [1000, 1002, 1004])  # raises on any difference


def test_a_wrong_forward_play_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ep.easy_forward_cost
    monkeypatch.setattr(ep, "easy_forward_cost", lambda *a: real(*a) * (1 + 1e-6))
    with pytest.raises(AssertionError):
        ep.check("validation", [1000])


def test_one_candidate_plays_easy_f1_and_four_change_the_schedule() -> None:
    platform, jobs, config = ep._episode("validation", 1001)
    runs = {}
    for name, sched in (
        ("f1", EasyPriority("f1")),
        ("one", ep.LookaheadEasy(candidates=1, samples=2)),
        ("four", ep.LookaheadEasy(candidates=4, samples=4)),
    ):
        sim = Simulator(platform, jobs, config)
        sched.run(sim)
        runs[name] = sim.result().jobs["start"].tolist()
    assert runs["one"] == runs["f1"]
    assert runs["four"] != runs["f1"]
