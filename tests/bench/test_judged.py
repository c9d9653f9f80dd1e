"""Judged scenarios: disjoint windows, every heuristic and the trivial rules, the best heuristic
named on validation, tables that show the other axes."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pandas as pd
import pytest

from hpcgym.bench import scenarios
from hpcgym.bench.axes import dominated_on_response
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.judged import (
    ELASTIC_HEURISTICS,
    NOT_HEURISTICS,
    RIGID_HEURISTICS,
    TRIVIAL_RULES,
    best_of,
    episodes_note,
)
from hpcgym.bench.report import intervals, leaderboard, statistics_markdown, win_rates
from hpcgym.bench.scenarios import get, on_split
from hpcgym.envs.episodes import episode_for, load_cached, splits_of

JUDGED_ELASTIC = ("malleable-small-v3", "malleable-small-kth-v1")
JUDGED_RIGID_SCENARIOS = ("rigid-sdsc-sp2-v1", "rigid-kth-v1")
JUDGED = (*JUDGED_ELASTIC, *JUDGED_RIGID_SCENARIOS)


@pytest.mark.parametrize("name", JUDGED)
def test_a_judged_scenario_plays_every_disjoint_window_of_its_split(name: str) -> None:
    sc = get(name)
    if name in JUDGED_ELASTIC:
        assert sc.env_id == "hpcgym/Malleable-v1" and sc.metric == "mean_bounded_stretch"
    else:  # rigid jobs cannot be stretched: bounded slowdown stays
        assert sc.env_id == "hpcgym/Rigid-v0" and sc.metric == "mean_bsld"
    assert sc.windows == "disjoint" and len(sc.seeds) >= 100
    kw = sc.env_kwargs
    n = kw["n_jobs"]
    workload = kw.get("workload", "elastic/sdsc-sp2-mebf-v0")
    default_options = {"n_jobs": None} if name in JUDGED_ELASTIC else {}
    w, _ = load_cached(workload, 0, kw.get("workload_options", default_options))
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
    if name in JUDGED_ELASTIC:
        assert set(ELASTIC_HEURISTICS) | set(TRIVIAL_RULES) <= set(sc.policies)
    else:
        assert set(RIGID_HEURISTICS) <= set(sc.policies)
        # every registered EASY ordering and classic scheduler that plays rigid jobs
        assert {f"easy-{s}" for s in ("sjf", "f1", "wfp3", "unicep")} <= set(sc.policies)
    assert sc.policies[-2:] == NOT_HEURISTICS  # the floor, last
    assert sc.best_heuristic in sc.policies and sc.best_heuristic not in NOT_HEURISTICS


@pytest.mark.parametrize("name", JUDGED)
def test_the_named_best_heuristic_is_the_best_of_all_on_the_validation_split(name: str) -> None:
    sc = on_split(get(name), "validation")
    heuristics = [p for p in sc.policies if p not in NOT_HEURISTICS]
    results = evaluate(heuristics, sc.env_id, list(sc.seeds), dict(sc.env_kwargs))
    kills = "off" if name in JUDGED_ELASTIC else "on"
    assert results.attrs["kill_rule"].startswith(f"walltime kills: {kills} for every policy")
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


def test_a_bench_run_names_the_best_heuristic_and_shows_every_axis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judged scenario's run: every policy with objective, response, makespan, utilization,
    worst job and resizes per job; the best heuristic named in the output, the leaderboard and
    the intervals; the truncated policy last in every file."""
    from hpcgym.cli import main

    sc = get("malleable-small-v3")  # its first 3 episodes, each still its own window
    monkeypatch.setitem(scenarios._SCENARIOS, sc.name, dataclasses.replace(sc, seeds=sc.seeds[:3]))
    argv = ["bench", "--scenario", "malleable-small-v3", "--out", str(tmp_path)]
    assert main([*argv, "--executor", "serial"]) == 0
    printed = capsys.readouterr().out
    assert "malleable-small-v3: Best heuristic: easy-min, named on the validation split" in printed
    folder = next((tmp_path / "malleable-small-v3").iterdir())
    board = (folder / "leaderboard.md").read_text()
    assert "Best heuristic: **easy-min**" in board
    header = next(line for line in board.splitlines() if line.startswith("| rank"))
    for col in (
        "mean_bounded_stretch",
        "max_bounded_stretch",
        "mean_response",
        "makespan",
        "utilization",
        "resizes_per_job",
        "killed",
        "unfinished",
        "dominated_on_response",
    ):
        assert col in header
    spread = pd.read_csv(folder / "intervals.csv")
    results = pd.read_csv(folder / "results.csv")
    assert set(spread["policy"]) == set(get("malleable-small-v3").policies)
    for table in (pd.read_csv(folder / "intervals.csv"), pd.read_csv(folder / "win_rates.csv")):
        assert table["policy"].iloc[-1] == "random"  # truncated: last
    assert results.loc[results["policy"] == "random", "truncated"].all()
    rows = [line for line in board.splitlines() if line.startswith("| ") and "rank" not in line]
    assert "random" in rows[-1]
    text = (folder / "intervals.md").read_text()
    assert "Best heuristic: **easy-min**" in text and "no two share a job" in text


def test_an_agent_of_malleable_v0_plays_v1_which_has_its_spaces_but_not_another_preset() -> None:
    """The shipped malleable agents (trained on Malleable-v0) are judged on Malleable-v1's
    scenarios: same menu and observations, another objective. Another preset is refused."""
    from hpcgym.errors import SpecError

    agent = str(Path(__file__).resolve().parents[2] / "agents" / "malleable-100k" / "s0" / "best")
    sc = get("malleable-small-v3")
    table = evaluate([agent], sc.env_id, [sc.seeds[0]], dict(sc.env_kwargs))
    assert not table["truncated"].any() and table["mean_bounded_stretch"].iloc[0] >= 1.0
    with pytest.raises(SpecError, match="trained on hpcgym/Malleable-v0, asked to run on"):
        evaluate([agent], "hpcgym/Rigid-v0", [1000], {"n_jobs": 16})
