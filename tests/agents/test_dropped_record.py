"""What ``drop_oversized`` leaves out is recorded in the run.json of train and bench (issue 42)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.agents.rl.train import TrainConfig, train
from hpcgym.bench.command import run_bench
from hpcgym.bench.scenarios import Scenario
from hpcgym.envs.episodes import dropped_record


def _trace(path: Path, wide: tuple[int, ...] = (5, 77, 140)) -> Path:
    """A 100-node SWF trace of 200 jobs; the jobs at ``wide`` use all 100 nodes."""
    rng = np.random.default_rng(3)
    lines = ["; MaxNodes: 100", "; MaxProcs: 100", "; UnixStartTime: 0"]
    for i in range(200):
        size = 100 if i in wide else int(rng.integers(1, 25))
        run = int(rng.integers(60, 3000))
        fields = [i + 1, i * 100, -1, run, size, -1, -1, size, run * 2, -1, 1, 1, 1, -1, 1, -1]
        lines.append(" ".join(str(f) for f in [*fields, -1, -1]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _kwargs(trace: Path, platform: list[int]) -> dict[str, object]:
    return {"workload": str(trace), "platform": platform, "drop_oversized": True, "n_jobs": 16}


def test_the_record_counts_the_jobs_left_out_and_is_absent_without_dropping(tmp_path):
    trace = _trace(tmp_path / "mine.swf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dropped_record("hpcgym/Rigid-v0", _kwargs(trace, [64]))
        assert got == {"workload": str(trace), "platform": [64], "jobs": 200, "dropped_jobs": 3}
        assert dropped_record("hpcgym/Rigid-v0", _kwargs(trace, [100]))["dropped_jobs"] == 0
    assert dropped_record("hpcgym/Rigid-v0", {"workload": str(trace)}) is None
    assert dropped_record("hpcgym/Rigid-v0", {}) is None


def test_training_records_the_dropped_jobs_in_its_run_json(tmp_path):
    trace = _trace(tmp_path / "mine.swf")
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        timesteps=64,
        env_kwargs=_kwargs(trace, [64]),
        overrides={"n_steps": 64, "batch_size": 64, "n_epochs": 1, "n_envs": 1},
        out=str(tmp_path / "run"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train(cfg)
    (segment,) = json.loads((tmp_path / "run" / "run.json").read_text())["segments"]
    assert segment["status"] == "finished"
    assert segment["dropped_jobs"]["dropped_jobs"] == 3
    assert segment["dropped_jobs"]["platform"] == [64]


def test_a_bench_run_records_the_dropped_jobs_per_scenario(tmp_path):
    trace = _trace(tmp_path / "mine.swf")
    mine = Scenario("mine-v0", "hpcgym/Rigid-v0", _kwargs(trace, [64]), (0, 1), ("fcfs",))
    whole = Scenario("whole-v0", "hpcgym/Rigid-v0", {"workload": str(trace), "n_jobs": 16}, (0,))
    run = tmp_path / "bench"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = run_bench([mine, whole], ["fcfs"], run_dir=run, executor="serial", progress=False)
    assert code == 0
    record = json.loads((run / "run.json").read_text())
    assert list(record["dropped_jobs"]) == ["mine-v0"]
    assert record["dropped_jobs"]["mine-v0"]["dropped_jobs"] == 3
