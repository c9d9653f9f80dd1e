"""Cross-trace scenarios of the reserve-mode and evolving agents (issue 41, item 4): episodes
no agent trained on, independent, the validation split held out to name the best heuristic."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from hpcgym.bench.judged import NOT_HEURISTICS, episodes_note, unseen_starts
from hpcgym.bench.scenarios import EVOLVING_SEEDS, Scenario, drawn_seed, get, on_split
from hpcgym.envs.episodes import episode_for, load_cached, splits_of
from hpcgym.errors import SpecError
from hpcgym.workloads.sets import KLEIN_WIDE

RESERVE_CROSS = ("rlsched-sdsc-sp2-cross-v0", "rlsched-sdsc-sp2-bf-cross-v0")


@pytest.mark.parametrize("name", RESERVE_CROSS)
def test_reserve_cross_trace_plays_every_window_outside_validation(name: str) -> None:
    sc = get(name)
    kw = sc.env_kwargs
    assert sc.windows == "unseen" and "split" not in kw and kw["n_jobs"] == 256
    assert kw["workload"] == "rlsched/sdsc-sp2-v0" and kw["selection"] == "reserve"
    assert kw["reserve_backfill"] == name.endswith("-bf-cross-v0")
    w, _ = load_cached(kw["workload"], 0, {})
    parts = splits_of(w)
    starts = kw["window_starts"]
    assert len(starts) == len(sc.seeds) >= 100
    # back to back inside the train split, then inside the test split; none in validation
    train = [s for s in starts if s < parts["validation"].first]
    test = [s for s in starts if s >= parts["test"].first]
    assert len(train) + len(test) == len(starts)
    for part, chosen in ((parts["train"], train), (parts["test"], test)):
        assert chosen[0] == part.first and chosen[-1] + 256 <= part.stop
        assert all(b - a == 256 for a, b in itertools.pairwise(chosen))
        assert part.stop - (chosen[-1] + 256) < 256  # every window that fits is played
    # each seed plays its own window: no two episodes share a job
    seen: set[int] = set()
    for seed in sc.seeds[:: max(1, len(sc.seeds) // 10)]:
        ids = {j.id for j in episode_for(sc.env_id, kw, seed).jobs}
        assert len(ids) == 256 and not ids & seen
        seen |= ids
    assert "outside its validation split" in episodes_note(sc)
    # validation: that split's windows only, and the best heuristic is left to be named
    val = on_split(sc, "validation")
    vs = val.env_kwargs["window_starts"]
    assert val.env_kwargs["split"] == "validation" and val.best_heuristic == ""
    assert vs[0] == parts["validation"].first and vs[-1] + 256 <= parts["validation"].stop
    assert not set(vs) & set(starts)
    assert sc.best_heuristic in sc.policies and sc.best_heuristic not in NOT_HEURISTICS


def test_unseen_starts_are_the_train_then_test_windows() -> None:
    kw = {**get("rlsched-sdsc-sp2-cross-v0").env_kwargs}
    kw.pop("window_starts")
    starts = unseen_starts("hpcgym/Rigid-v0", kw)
    assert starts == get("rlsched-sdsc-sp2-cross-v0").env_kwargs["window_starts"]
    with pytest.raises(SpecError, match="window episodes"):
        unseen_starts("hpcgym/Evolving-v0", {})


def test_a_scenario_without_splits_still_refuses_validation() -> None:
    sc = get("rlsched-sdsc-sp2-cross-v0")
    old = dataclasses.replace(sc, name="old-v0", windows="")
    with pytest.raises(SpecError, match="no splits"):
        on_split(old, "validation")
    with pytest.raises(SpecError, match="windows must be one of"):
        Scenario("bad-v0", "hpcgym/Rigid-v0", windows="everything")


def test_evolving_cross_trace_is_the_wide_generator_on_fresh_cases() -> None:
    sc = get("evolving-klein-wide-v0")
    assert sc.metric == "makespan" and len(sc.seeds) == 1000
    assert sc.best_heuristic in sc.policies and sc.best_heuristic not in NOT_HEURISTICS
    cases = [episode_for(sc.env_id, sc.env_kwargs, s) for s in sc.seeds[:20]]
    for case in cases:
        assert case.platform.total_nodes == KLEIN_WIDE.cluster_nodes == 150
        assert KLEIN_WIDE.apps[0] <= len(case.jobs) <= KLEIN_WIDE.apps[1]
        assert max(st.nodes for j in case.jobs for st in j.evolution) <= 150
    # their generator seeds are none of the paper-width tests': no shared random stream
    drawn = {drawn_seed(s, EVOLVING_SEEDS) for s in sc.seeds}
    assert len(drawn) == len(sc.seeds)
    for v in (0, 1):
        other = get(f"evolving-klein-large-v{v}")
        assert not drawn & {drawn_seed(s, EVOLVING_SEEDS) for s in other.seeds}
