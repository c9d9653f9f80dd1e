"""The judged Shared and MultiCluster scenarios: bounded stretch, fresh independent traces."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.judged import MULTICLUSTER_HEURISTICS, NOT_HEURISTICS, SHARED_HEURISTICS
from hpcgym.bench.scenarios import drawn_seed, get, on_split
from hpcgym.envs.episodes import episode_for, split_seeds

SEEDED = {
    "shared-dfrs-v1": ("hpcgym/Shared-v1", SHARED_HEURISTICS),
    "multicluster-koala-v1": ("hpcgym/MultiCluster-v1", MULTICLUSTER_HEURISTICS),
}


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_a_judged_seeded_scenario_plays_distinct_fresh_test_traces(name: str) -> None:
    env_id, heuristics = SEEDED[name]
    sc = get(name)
    assert sc.env_id == env_id and sc.metric == "mean_bounded_stretch"
    assert len(sc.seeds) >= 100
    spec = gym.spec(env_id)
    assert spec.kwargs["reward"] == "bstretch" and spec.kwargs["episode"] == "seeded"
    n_seeds = spec.kwargs["n_seeds"]
    drawn = [drawn_seed(s, n_seeds) for s in sc.seeds]
    assert len(set(drawn)) == len(drawn)  # no two episodes are the same generated trace
    assert set(drawn) <= set(split_seeds("test", n_seeds))
    assert not set(drawn) & set(split_seeds("train", n_seeds))
    assert set(heuristics) <= set(sc.policies)
    assert all(p in sc.policies for p in ("random",))
    assert sc.best_heuristic == "" or (
        sc.best_heuristic in heuristics and sc.best_heuristic not in NOT_HEURISTICS
    )
    # the validation copy draws from the validation share of the same generator seeds
    val = on_split(sc, "validation")
    assert val.env_kwargs["split"] == "validation" and val.best_heuristic == ""


def test_two_seeds_of_a_judged_seeded_scenario_are_two_traces() -> None:
    sc = get("multicluster-koala-v1")
    a, b = (episode_for(sc.env_id, dict(sc.env_kwargs), s) for s in sc.seeds[:2])
    assert len(a.jobs) == len(b.jobs) == 300
    # KOALA's arrivals are a fixed period; the mix of applications and sizes is drawn
    sizes = [np.array([(j.nodes, j.work) for j in e.jobs]) for e in (a, b)]
    assert not np.array_equal(sizes[0], sizes[1])


def test_on_shared_v1_the_fair_share_rule_no_longer_scores_a_perfect_one() -> None:
    """DFRS gives every job a fair CPU share at once: its bounded slowdown, divided by the
    stretched run, is 1.00; its bounded stretch counts the stretch."""
    r = evaluate(["dfrs", "easy-sjf"], "hpcgym/Shared-v1", [1000], {"split": "validation"})
    dfrs = r[r["policy"] == "dfrs"].iloc[0]
    assert dfrs["mean_bsld"] == pytest.approx(1.0, abs=0.01)
    assert dfrs["mean_bounded_stretch"] > 2.0
    assert r.attrs.get("metric", "mean_bounded_stretch") == "mean_bounded_stretch"


def test_on_multicluster_v1_growing_a_job_scores_below_one() -> None:
    r = evaluate(
        ["koala-static", "koala-pra-egs"], "hpcgym/MultiCluster-v1", [1000], {"split": "test"}
    )
    by = r.set_index("policy")
    assert by.loc["koala-static", "mean_bounded_stretch"] == pytest.approx(1.0, abs=0.05)
    assert by.loc["koala-pra-egs", "mean_bounded_stretch"] < 0.9  # malleable jobs grew
    assert by.loc["koala-static", "mean_bsld"] == pytest.approx(1.0, abs=0.05)
    assert by.loc["koala-pra-egs", "mean_bsld"] == pytest.approx(1.0, abs=0.05)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "multicluster-koala-v1",
        "shared-dfrs-v1",  # about 25 CPU-minutes (DFRS: 12 s an episode)
        "evolving-klein-large-v1",
        "rigid-synlublin-large-v0",
        "rlsched-synlublin-large-v0",
        "rlsched-synlublin-bf-large-v0",
        "rlsched-sdsc-sp2-cross-v0",
        "rlsched-sdsc-sp2-bf-cross-v0",
        "evolving-klein-wide-v0",
    ],
)
def test_the_named_best_heuristic_is_the_validation_argmin(name: str) -> None:
    from hpcgym.bench.judged import best_of

    sc = on_split(get(name), "validation")
    heuristics = [p for p in sc.policies if p not in NOT_HEURISTICS]
    results = evaluate(heuristics, sc.env_id, list(sc.seeds), dict(sc.env_kwargs))
    means = results.groupby("policy")[sc.metric].mean().to_dict()
    assert best_of(means) == get(name).best_heuristic
