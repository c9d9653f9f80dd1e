"""``--resume`` of a run whose seed sweep gained members plays only the new members' episodes.

A sweep that gained seeds changes the run's configuration hash (each member is an agent of it),
which used to make ``--resume`` refuse the run: every cell had to be played again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401  (registers the presets)
from hpcgym.agents import make_agent, save_agent
from hpcgym.agents.rl.saved import card_for
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.gained import added_agents
from hpcgym.bench.runinfo import config_hash, read_record
from hpcgym.errors import SpecError

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}
RUN = {"executor": "serial", "progress": False}


def _member(sweep: Path, seed: int) -> None:
    model = make_agent(gym.make(ENV_ID, **KWARGS), seed=seed, n_steps=64, batch_size=64, n_epochs=1)
    model.learn(64)
    save_agent(
        model,
        card_for(model, "maskable_ppo", ENV_ID, KWARGS, seed=seed),
        sweep / f"s{seed}" / "agent",
    )


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three trained members, s0-s2, to copy into sweeps."""
    folder = tmp_path_factory.mktemp("members")
    for seed in range(3):
        _member(folder, seed)
    return folder


def _sweep(members: Path, where: Path, seeds: tuple[int, ...]) -> Path:
    sweep = where / "sweep"
    sweep.mkdir(parents=True, exist_ok=True)
    for k in seeds:
        if not (sweep / f"s{k}").exists():
            shutil.copytree(members / f"s{k}", sweep / f"s{k}")
    return sweep


def _cells(run: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(run)): p.read_bytes() for p in sorted((run / "cells").rglob("*.json"))
    }


def _results(run: Path) -> pd.DataFrame:
    table = pd.read_csv(run / "results.csv").drop(columns=["cpu_seconds"], errors="ignore")
    return table.sort_values(["policy", "train_seed", "seed"]).reset_index(drop=True)


def test_resume_plays_only_the_new_members_and_records_the_extension(members, tmp_path):
    sc = scenarios.get("tiny-v0")
    sweep = _sweep(members, tmp_path, (0,))
    run = tmp_path / "run"
    assert run_bench([sc], [str(sweep), "fcfs"], run_dir=run, **RUN) == 0
    before = _cells(run)
    old_hash = read_record(run)["config_hash"]

    _sweep(members, tmp_path, (0, 1, 2))
    assert run_bench([sc], [str(sweep), "fcfs"], run_dir=run, resume=True, **RUN) == 0
    record = read_record(run)
    after = _cells(run)
    # The stored cells are kept byte for byte; only the new members' episodes were played.
    assert {k: after[k] for k in before} == before
    new = set(after) - set(before)
    assert {Path(k).parent.name for k in new} == {"sweep@s1", "sweep@s2"}
    assert len(new) == 2 * len(sc.seeds)
    assert record["sessions"][-1]["cells_run"] == 2 * len(sc.seeds)
    assert record["config_hash"] == config_hash(record["config"]) != old_hash
    (entry,) = record["extends"]
    assert entry["from_hash"] == old_hash
    assert entry["added_agents"] == [str(sweep / "s1"), str(sweep / "s2")]
    # The tables are those of a run of the grown sweep from scratch.
    fresh = tmp_path / "fresh"
    assert run_bench([sc], [str(sweep), "fcfs"], run_dir=fresh, **RUN) == 0
    pd.testing.assert_frame_equal(_results(run), _results(fresh))
    assert sorted(_results(run)["train_seed"].dropna().unique()) == [0, 1, 2]

    # Resumed again unchanged: nothing runs, the history stays.
    assert run_bench([sc], [str(sweep), "fcfs"], run_dir=run, resume=True, **RUN) == 0
    again = read_record(run)
    assert again["sessions"][-1]["cells_run"] == 0
    assert again["extends"] == record["extends"]


def test_resume_without_run_dir_finds_the_run_a_sweep_outgrew(members, tmp_path):
    sc = scenarios.get("tiny-v0")
    sweep = _sweep(members, tmp_path, (0,))
    out = tmp_path / "out"
    assert run_bench([sc], [str(sweep)], out=out, **RUN) == 0
    (folder,) = (out / "tiny-v0").iterdir()
    _sweep(members, tmp_path, (0, 1))
    assert run_bench([sc], [str(sweep)], out=out, resume=True, **RUN) == 0
    assert [p.name for p in (out / "tiny-v0").iterdir()] == [folder.name]
    record = read_record(folder)
    assert record["sessions"][-1]["cells_run"] == len(sc.seeds)
    assert len(record["extends"]) == 1


def test_a_member_removed_or_retrained_is_no_extension(members, tmp_path):
    sc = scenarios.get("tiny-v0")
    sweep = _sweep(members, tmp_path, (0, 1))
    run = tmp_path / "run"
    assert run_bench([sc], [str(sweep)], run_dir=run, **RUN) == 0
    stored = _cells(run)
    shutil.rmtree(sweep / "s1")
    with pytest.raises(SpecError, match="another configuration"):
        run_bench([sc], [str(sweep)], run_dir=run, resume=True, **RUN)
    shutil.copytree(members / "s2", sweep / "s1")  # other weights under s1
    with pytest.raises(SpecError, match="has changed since the run"):
        run_bench([sc], [str(sweep)], run_dir=run, resume=True, **RUN)
    assert _cells(run) == stored
    assert read_record(run)["status"] == "complete"


def test_a_hand_edited_history_is_refused(members, tmp_path):
    sc = scenarios.get("tiny-v0")
    sweep = _sweep(members, tmp_path, (0,))
    run = tmp_path / "run"
    assert run_bench([sc], [str(sweep)], run_dir=run, **RUN) == 0
    record = read_record(run)
    record["extends"] = [{"from_hash": "not a hash"}]
    (run / "run.json").write_text(json.dumps(record))
    with pytest.raises(SpecError, match="'extends' entry"):
        run_bench([sc], [str(sweep)], run_dir=run, resume=True, **RUN)


def test_only_added_agents_count_as_an_extension():
    agent = {"file": "a", "sha256": "1" * 64, "card": {}}
    base = {"scenarios": [{"name": "x", "seeds": [1, 2]}], "policies": None, "agents": {"a": agent}}
    grown = {**base, "agents": {"a": agent, "b": {**agent, "sha256": "2" * 64}}}
    assert added_agents(base, grown) == ["b"]
    assert added_agents(base, base) == []
    assert added_agents(grown, base) is None  # an agent removed
    other_seeds = {**grown, "scenarios": [{"name": "x", "seeds": [1, 3]}]}
    assert added_agents(base, other_seeds) is None
    retrained = {**grown, "agents": {"a": {**agent, "sha256": "3" * 64}, "b": agent}}
    assert added_agents(base, retrained) is None
    kind_first = {
        **grown,
        "agents": {**grown["agents"], "a": {**agent, "card": {"decode": "kind"}}},
    }
    assert added_agents(base, kind_first) is None  # the same weights decoded otherwise
    assert added_agents({"agents": "damaged"}, grown) is None
