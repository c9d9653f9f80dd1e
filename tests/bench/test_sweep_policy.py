"""A seed sweep's folder as one bench policy: every member runs, seeds are strata."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401  (registers the presets)
from hpcgym.agents import make_agent, save_agent
from hpcgym.agents.rl.saved import card_for
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.policy_names import make_env_policy, policy_kind, policy_label, sweep_members
from hpcgym.errors import SpecError

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs") / "ppo-sweep"
    for seed in (0, 3):
        env = gym.make(ENV_ID, **KWARGS)
        model = make_agent(env, seed=seed, n_steps=64, batch_size=64, n_epochs=1)
        model.learn(64)
        card = card_for(model, "maskable_ppo", ENV_ID, KWARGS, seed=seed)
        save_agent(model, card, folder / f"s{seed}" / "agent")
    (folder / "notes").mkdir()  # not a member: other folders are ignored
    return folder


def test_a_sweep_folder_is_one_policy_whose_members_are_its_seeds(sweep: Path) -> None:
    assert policy_kind(str(sweep)) == "sweep"
    assert [k for k, _ in sweep_members(sweep)] == [0, 3]
    assert policy_label(str(sweep)) == "ppo-sweep"
    assert policy_kind(str(sweep / "s3")) == "agent"
    with pytest.raises(SpecError, match="seed sweep, not one agent"):
        make_env_policy(str(sweep))
    empty = sweep.parent / "empty"
    empty.mkdir(exist_ok=True)
    with pytest.raises(SpecError, match="seed sweep"):
        policy_kind(str(empty))


def test_the_bench_runs_every_member_and_stratifies_by_training_seed(
    sweep: Path, tmp_path: Path
) -> None:
    sc = scenarios.get("tiny-v0")
    run = tmp_path / "run"
    code = run_bench([sc], [str(sweep), "fcfs"], run_dir=run, executor="serial", progress=False)
    assert code == 0
    results = pd.read_csv(run / "results.csv")
    mine = results[results["policy"] == "ppo-sweep"]
    assert sorted(zip(mine["train_seed"], mine["seed"], strict=True)) == [
        (k, s) for k in (0, 3) for s in sc.seeds
    ]
    # Each member's episodes are exactly what the member alone gives.
    for k in (0, 3):
        alone = evaluate([str(sweep / f"s{k}")], sc.env_id, list(sc.seeds), sc.env_kwargs)
        got = mine[mine["train_seed"] == k].sort_values("seed")["mean_bsld"].to_numpy()
        assert list(got) == list(alone.sort_values("seed")["mean_bsld"])
    stats = pd.read_csv(run / "intervals.csv").set_index("policy")
    assert stats.loc["ppo-sweep", "train_seeds"] == 2
    assert stats.loc["ppo-sweep", "episodes"] == 2 * len(sc.seeds)
    assert stats.loc["fcfs", "train_seeds"] == 1
    assert stats.loc["ppo-sweep", "mean"] == pytest.approx(mine["mean_bsld"].mean())
    board = (run / "leaderboard.md").read_text()
    assert "| ppo-sweep | 4 |" in board
    # The paired win rate compares per-episode means over training seeds.
    wins = pd.read_csv(run / "win_rates.csv")
    row = wins[(wins["policy"] == "ppo-sweep") & (wins["versus"] == "fcfs")].iloc[0]
    per_episode = mine.groupby("seed")["mean_bsld"].mean()
    fcfs = results[results["policy"] == "fcfs"].set_index("seed")["mean_bsld"]
    expected = ((per_episode < fcfs) + 0.5 * (per_episode == fcfs)).mean()
    assert row["win_rate"] == pytest.approx(expected)
    # Each member's cells are stored apart, and run.json names each member's weights.
    cells = sorted(p.name for p in (run / "cells" / "tiny-v0").iterdir())
    assert cells == ["fcfs", "ppo-sweep@s0", "ppo-sweep@s3"]
    agents = json.loads((run / "run.json").read_text())["config"]["agents"]
    assert sorted(Path(p).name for p in agents) == ["s0", "s3"]
    assert all(a["sha256"] for a in agents.values())


def test_two_agents_with_one_file_name_get_labels_that_tell_them_apart(
    sweep: Path, tmp_path: Path
) -> None:
    import shutil

    from hpcgym.bench.policy_names import policy_labels
    from hpcgym.bench.runner import plan

    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        for suffix in (".safetensors", ".json"):
            shutil.copy(sweep / "s0" / f"agent{suffix}", tmp_path / run / f"best{suffix}")
    a, b = str(tmp_path / "a" / "best"), str(tmp_path / "b" / "best")
    assert policy_label(a) == policy_label(b) == "best"
    assert policy_labels([a, b, "easy"]) == ["a/best", "b/best", "easy"]
    sc = scenarios.get("malleable-small-v2")
    names = {t.name for t in plan([sc], [a, b])}
    assert names == {"a/best", "b/best"}
    with pytest.raises(SpecError, match="policies given twice: best"):
        policy_labels([a, a])
    with pytest.raises(SpecError, match="policies given twice: easy"):
        plan([sc], ["easy", "easy"])


def test_a_sweep_at_best_runs_each_members_validation_chosen_agent(
    sweep: Path, tmp_path: Path
) -> None:
    import shutil

    from hpcgym.bench.runner import plan

    folder = tmp_path / "rigid"
    shutil.copytree(sweep, folder)
    for suffix in (".safetensors", ".json"):  # s3 has no best agent: it is not a member
        shutil.copy(folder / "s0" / f"agent{suffix}", folder / "s0" / f"best{suffix}")
    name = f"{folder}@best"
    assert policy_kind(name) == "sweep" and policy_label(name) == "rigid@best"
    assert sweep_members(name) == [(0, folder / "s0" / "best")]
    assert [k for k, _ in sweep_members(folder)] == [0, 3]  # without @best: the final agents
    tasks = plan([scenarios.get("malleable-small-v2")], [str(folder), name])
    assert {t.name for t in tasks} == {"rigid", "rigid@best"}
    assert {t.policy for t in tasks if t.name == "rigid@best"} == {str(folder / "s0" / "best")}
