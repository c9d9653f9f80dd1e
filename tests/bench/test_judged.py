"""Judged scenarios: disjoint windows, every heuristic and the trivial rules, the best heuristic
named on validation, tables that show the other axes."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from hpcgym.bench.axes import dominated_on_response
from hpcgym.bench.episode import episode_for
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.judged import (
    ELASTIC_HEURISTICS,
    NOT_HEURISTICS,
    TRIVIAL_RULES,
    best_of,
    episodes_note,
)
from hpcgym.bench.report import intervals, leaderboard, statistics_markdown, win_rates
from hpcgym.bench.scenarios import get, on_split
from hpcgym.envs.episodes import load_cached, splits_of

JUDGED = ("malleable-small-v3", "malleable-small-kth-v1")


@pytest.mark.parametrize("name", JUDGED)
def test_a_judged_scenario_plays_every_disjoint_window_of_its_split(name: str) -> None:
    sc = get(name)
    assert sc.env_id == "hpcgym/Malleable-v1" and sc.metric == "mean_bounded_stretch"
    assert sc.windows == "disjoint" and len(sc.seeds) >= 100
    kw = sc.env_kwargs
    n = kw["n_jobs"]
    workload = kw.get("workload", "elastic/sdsc-sp2-mebf-v0")
    w, _ = load_cached(workload, 0, kw.get("workload_options", {"n_jobs": None}))
    test = splits_of(w)["test"]
    starts = kw["window_starts"]
    assert starts[0] == test.first and starts[-1] + n <= test.stop
    assert all(b - a == n for a, b in itertools.pairwise(starts))
    # each seed draws its own window: the episodes share no job
    seen: set[int] = set()
    for seed in sc.seeds[:: max(1, len(sc.seeds) // 12)]:
        ids = {j.id for j in episode_for(sc.env_id, kw, seed).jobs}
        assert len(ids) == n and not ids & seen
        seen |= ids
    firsts = [episode_for(sc.env_id, kw, s).jobs[0].id for s in sc.seeds]
    assert len(set(firsts)) == len(sc.seeds)
    # on validation: that split's disjoint windows, none of the test split's jobs
    val = on_split(sc, "validation")
    vs = val.env_kwargs["window_starts"]
    part = splits_of(w)["validation"]
    assert vs[0] == part.first and vs[-1] + n <= part.stop < test.first + 1
    assert len(val.seeds) == len(vs) and val.windows == "disjoint"
    assert "no two share a job" in episodes_note(sc)


@pytest.mark.parametrize("name", JUDGED)
def test_a_judged_scenario_lists_every_heuristic_and_the_trivial_rules(name: str) -> None:
    sc = get(name)
    assert set(ELASTIC_HEURISTICS) | set(TRIVIAL_RULES) <= set(sc.policies)
    assert sc.policies[-2:] == NOT_HEURISTICS  # the floor, last
    assert sc.best_heuristic in sc.policies and sc.best_heuristic not in NOT_HEURISTICS


@pytest.mark.parametrize("name", JUDGED)
def test_the_named_best_heuristic_is_the_best_of_all_on_the_validation_split(name: str) -> None:
    sc = on_split(get(name), "validation")
    heuristics = [p for p in sc.policies if p not in NOT_HEURISTICS]
    results = evaluate(heuristics, sc.env_id, list(sc.seeds), dict(sc.env_kwargs))
    assert results.attrs["kill_rule"].startswith("walltime kills: off for every policy")
    means = results.groupby("policy")[sc.metric].mean().to_dict()
    assert set(means) == set(heuristics)
    assert best_of(means) == get(name).best_heuristic


def _rows() -> pd.DataFrame:
    """Two policies on four episodes: ``gamer`` wins the objective, loses response on 3."""
    return pd.DataFrame(
        {
            "scenario": ["s"] * 8,
            "policy": ["gamer"] * 4 + ["fair"] * 4,
            "seed": [1, 2, 3, 4] * 2,
            "truncated": [False] * 8,
            "mean_bounded_stretch": [2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0],
            "max_bounded_stretch": [9.0, 9.0, 9.0, 9.0, 5.0, 5.0, 5.0, 5.0],
            "mean_response": [10.0, 10.0, 10.0, 1.0, 5.0, 5.0, 5.0, 5.0],
            "makespan": [100.0] * 8,
            "utilization": [0.5] * 8,
            "reconfigurations": [0.0] * 4 + [8.0] * 4,
            "jobs": [4.0] * 8,
            "mean_bsld": [1.0] * 8,
            "max_bsld": [1.0] * 8,
            "killed": [0.0] * 8,
            "unfinished": [0.0] * 8,
        }
    )


def test_a_policy_that_wins_the_objective_but_loses_response_is_marked() -> None:
    rows = _rows()
    assert dominated_on_response(rows, "mean_bounded_stretch", ["gamer", "fair"]) == {
        "gamer": "by fair (0.75)"
    }
    board = leaderboard(rows, {"s": "mean_bounded_stretch"})
    assert list(board["policy"]) == ["gamer", "fair"]
    assert list(board["dominated_on_response"]) == ["by fair (0.75)", ""]
    cols = list(board.columns)
    assert cols.index("mean_bounded_stretch") < cols.index("max_bounded_stretch")
    for c in ("mean_response", "makespan", "utilization", "resizes_per_job", "unfinished"):
        assert c in cols
    assert list(board["resizes_per_job"]) == [0.0, 2.0]
    # not marked when it also wins response on most episodes
    rows.loc[rows["policy"] == "gamer", "mean_response"] = 1.0
    assert dominated_on_response(rows, "mean_bounded_stretch", ["gamer", "fair"]) == {}


def test_a_truncated_policy_is_never_first_in_the_interval_tables() -> None:
    rows = _rows()
    rows.loc[rows["policy"] == "gamer", "truncated"] = True
    metrics = {"s": "mean_bounded_stretch"}
    board = leaderboard(rows, metrics)
    assert list(board["policy"]) == ["fair", "gamer"]
    from hpcgym.bench.report import _in_board_order

    spread, wins = _in_board_order(board, intervals(rows, metrics), win_rates(rows, metrics))
    assert list(spread["policy"]) == ["fair", "gamer"]
    assert list(wins["policy"]) == ["fair", "gamer"]
    text = statistics_markdown(spread, wins, {"s": "4 per policy, disjoint"})
    table = text[text.index("| policy |") :]
    assert table.index("| fair |") < table.index("| gamer |")
    assert "Episodes: 4 per policy, disjoint." in text
    assert "worst job (max_bounded_stretch)" in text and "mean response" in text
    assert list(spread["truncated"]) == [0, 4]
