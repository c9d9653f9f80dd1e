from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.bench.episode import run_episode
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.policy_names import policy_kind
from hpcgym.cli import main
from hpcgym.envs.episodes import episode_for
from hpcgym.errors import SpecError

TINY = {"n_jobs": 24}


@pytest.mark.parametrize("env_id", ["hpcgym/Rigid-v0", "hpcgym/Malleable-v0"])
def test_engine_path_schedules_the_jobs_the_env_draws_for_the_seed(env_id: str) -> None:
    env = gym.make(env_id, **TINY)
    env.reset(seed=11)
    sim = env.unwrapped.sim  # type: ignore[attr-defined]
    ep = episode_for(env_id, TINY, 11)
    assert [j.id for j in ep.jobs] == list(sim.jobs)
    assert [j.submit for j in ep.jobs] == [j.spec.submit for j in sim.jobs.values()]
    assert ep.platform.total_nodes == sim.platform.total_nodes


def test_evaluate_is_deterministic_and_every_policy_sees_the_same_jobs() -> None:
    a = evaluate(["easy", "random", "advance"], "hpcgym/Rigid-v0", [3, 4], TINY)
    b = evaluate(["easy", "random", "advance"], "hpcgym/Rigid-v0", [3, 4], TINY)
    pd.testing.assert_frame_equal(a, b)
    assert list(a["path"]) == ["engine"] * 2 + ["env"] * 4
    assert (a["jobs"] == 24).all()
    assert not a["truncated"].any()
    assert (a["invalid_actions"] == 0).all()


def test_random_policy_only_takes_legal_actions() -> None:
    out = run_episode("random", "hpcgym/Malleable-v0", 5, TINY)
    assert out.path == "env"
    assert out.invalid_actions == 0
    assert out.summary["jobs"] == 24
    assert np.isfinite(out.summary["mean_bsld"])


def test_gantt_and_timeline_are_recorded_on_both_paths() -> None:
    for policy in ("mebf", "first-fit"):
        out = run_episode(policy, "hpcgym/Malleable-v0", 2, TINY, gantt=True)
        assert out.gantt is not None and out.gantt.ndim == 3
        assert out.timeline["time"].is_monotonic_increasing
        assert out.timeline["utilization"].between(0, 1).all()


def test_unknown_policy_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="no-such"):
        policy_kind("no-such")


def test_evaluate_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev.csv"
    argv = ["evaluate", "--env", "hpcgym/Rigid-v0", "--n-jobs", "16", "--episodes", "2"]
    argv += ["--policy", "fcfs", "--policy", "random", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "fcfs=engine" in printed and "random=env" in printed
    table = pd.read_csv(out)
    assert list(table["seed"]) == [0, 1, 0, 1]
    assert "'split': 'test'" in printed  # the test split unless asked otherwise
    assert main(["evaluate", "--policy", "nobody"]) == 2


def test_one_table_runs_every_policy_under_one_kill_rule() -> None:
    """Issue 38, item 7 (seen failing before: easy and first-fit ran with kills, mebf without).
    MEBF's setting has no walltime kills, so a table with it runs every policy without them."""
    table = evaluate(["easy", "mebf", "first-fit"], "hpcgym/Malleable-v0", [3], TINY)
    assert list(table["kill_on_walltime"]) == [False, False, False]
    assert "off for every policy (mebf runs without them" in table.attrs["kill_rule"]
    kills = evaluate(["easy", "first-fit"], "hpcgym/Malleable-v0", [3], TINY)
    assert kills["kill_on_walltime"].all()
    assert kills.attrs["kill_rule"].startswith("walltime kills: on for every policy")
    no_kills = evaluate(
        ["easy", "first-fit"], "hpcgym/Malleable-v0", [3], {**TINY, "kill_on_walltime": False}
    )
    assert not no_kills["kill_on_walltime"].any()


@pytest.mark.parametrize("policies", [["mebf@env", "easy@env"], ["mebf", "easy"]])
def test_evaluate_states_one_kill_rule_for_all_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policies: list[str]
) -> None:
    out = tmp_path / "ev.csv"
    argv = ["evaluate", "--env", "hpcgym/Malleable-v0", "--n-jobs", "16", "--episodes", "2"]
    for p in policies:
        argv += ["--policy", p]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rules = pd.read_csv(out)["kill_on_walltime"]
    assert rules.nunique() == 1
    state = "on" if rules.iloc[0] else "off"
    assert f"walltime kills: {state} for every policy" in printed
    assert "ranked by mean_bsld (the preset's objective)" in printed


def test_evaluate_ranks_by_the_presets_objective_and_shows_the_other_axes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["evaluate", "--env", "hpcgym/Malleable-v1", "--n-jobs", "16", "--episodes", "2"]
    assert main([*argv, "--policy", "easy", "--policy", "asap-min"]) == 0
    printed = capsys.readouterr().out
    assert "ranked by mean_bounded_stretch" in printed
    header = next(line for line in printed.splitlines() if line.startswith("  "))
    for column in ("max_bounded_stretch", "mean_response", "makespan", "utilization"):
        assert column in header
    assert "resizes_per_job" in header and "unfinished" in header
    assert "dominated_on_response" in header


def test_a_bench_table_runs_every_policy_under_one_kill_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tiny-v0 plays Malleable-v0 (walltime kills) with mebf (none): every policy runs without
    kills and the run says so (issue 38, item 7; before: fcfs and easy killed, mebf did not)."""
    argv = ["bench", "--scenario", "tiny-v0", "--executor", "serial", "--out", str(tmp_path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "tiny-v0: walltime kills: off for every policy (mebf runs without them" in printed
    folder = next((tmp_path / "tiny-v0").iterdir())
    results = pd.read_csv(folder / "results.csv")
    assert set(results["policy"]) == {"fcfs", "easy", "mebf", "random"}
    assert not results["kill_on_walltime"].any()
    # without mebf the scenario's own rule holds, for every policy
    argv = [*argv[:-2], "--policy", "fcfs", "--policy", "easy", "--out", str(tmp_path / "b")]
    assert main(argv) == 0
    assert "walltime kills" not in capsys.readouterr().out
    results = pd.read_csv(next((tmp_path / "b" / "tiny-v0").iterdir()) / "results.csv")
    assert results["kill_on_walltime"].all()


def test_an_agent_trained_without_kills_sets_the_tables_rule() -> None:
    from hpcgym.bench.episode import forced_kill_rule

    agent = str(Path(__file__).resolve().parents[2] / "agents" / "malleable-100k" / "s0" / "best")
    assert forced_kill_rule(agent) is False  # its card: kill_on_walltime false
    assert forced_kill_rule("easy") is None and forced_kill_rule("mebf@env") is False


def test_two_agents_with_the_same_file_name_keep_separate_rows() -> None:
    # Two seeds' best checkpoints are both called "best": each keeps its own rows (a shared
    # label merged them into one policy of twice the episodes), named as hpcgym bench names them.
    root = Path(__file__).resolve().parents[2] / "agents" / "malleable-100k"
    members = [str(root / "s0" / "best"), str(root / "s1" / "best")]
    table = evaluate(members, "hpcgym/Malleable-v0", [7], {"n_jobs": 24, "split": "test"})
    assert list(table["policy"]) == ["s0/best", "s1/best"]
    with pytest.raises(SpecError, match="given twice"):
        evaluate([members[0], members[0]], "hpcgym/Malleable-v0", [7], {"n_jobs": 24})
