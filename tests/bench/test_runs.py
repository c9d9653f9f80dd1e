"""Bench runs lose nothing: new folders, stored cells, resume, failures, run.json and --from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import hpcgym.bench.runner as runner
from hpcgym.baselines import registry
from hpcgym.baselines.base import BaseScheduler
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.runinfo import read_record
from hpcgym.cli import main
from hpcgym.errors import SpecError

MICRO = scenarios.Scenario("micro-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5, 6), ("fcfs",))
POLICIES = ["easy", "random"]
TABLES = (
    "results.csv",
    "jobs.csv",
    "leaderboard.md",
    "intervals.md",
    "intervals.csv",
    "win_rates.csv",
)


def _files(folder: Path) -> dict[str, bytes]:
    """Tables and plots (not run.json, nor the cells, which record CPU seconds)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "run.json" and "cells" not in p.parts
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted serial run of ``MICRO`` with easy and random."""
    folder = tmp_path_factory.mktemp("ref") / "run"
    assert run_bench([MICRO], POLICIES, run_dir=folder, executor="serial", progress=False) == 0
    return folder


def _fail_on(monkeypatch: pytest.MonkeyPatch, calls: int, error: BaseException) -> list[str]:
    """Make the ``calls``-th episode raise ``error``; return the log of episodes started."""
    real = runner.run_task
    started: list[str] = []

    def flaky(task: runner.Task) -> runner.TaskOutcome:
        started.append(f"{task.policy}/{task.seed}")
        if len(started) == calls:
            raise error
        return real(task)

    monkeypatch.setattr(runner, "run_task", flaky)
    return started


def test_an_interrupted_bench_resumes_to_the_same_tables(
    tmp_path: Path, reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    _fail_on(monkeypatch, 3, KeyboardInterrupt())
    code = run_bench([MICRO], POLICIES, run_dir=folder, executor="serial", progress=False)
    assert code == 130
    assert len(list((folder / "cells").rglob("*.json"))) == 2  # the two finished cells
    assert not (folder / "results.csv").exists()
    assert read_record(folder)["status"] == "interrupted"
    monkeypatch.undo()
    started = _fail_on(monkeypatch, 0, RuntimeError())  # records, never fails
    kw = {"run_dir": folder, "executor": "serial", "progress": False}
    assert run_bench([MICRO], POLICIES, resume=True, **kw) == 0
    assert started == ["random/5", "random/6"]  # only the missing cells ran
    assert _files(folder) == _files(reference)  # tables, plots and cells, to the byte
    record = read_record(folder)
    assert record["status"] == "complete" and len(record["sessions"]) == 2


def test_a_failing_policy_is_recorded_and_the_others_finish(
    tmp_path: Path, reference: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    _fail_on(monkeypatch, 4, ValueError("boom in the policy"))
    code = run_bench([MICRO], POLICIES, run_dir=folder, executor="serial", progress=False)
    assert code == 1
    failures = pd.read_csv(folder / "failures.csv")
    assert failures[["scenario", "policy", "seed"]].values.tolist() == [["micro-test", "random", 6]]
    assert failures["error"].iloc[0] == "ValueError: boom in the policy"
    trace = (folder / failures["traceback_file"].iloc[0]).read_text()
    assert "policy random, scenario micro-test, episode seed 6" in trace
    assert "Traceback" in trace and "boom in the policy" in trace
    results = pd.read_csv(folder / "results.csv")
    assert len(results) == 3  # the other cells are there
    board = (folder / "leaderboard.md").read_text()
    assert "failures.csv" in board
    monkeypatch.undo()
    assert run_bench([MICRO], POLICIES, run_dir=folder, resume=True, executor="serial") == 0
    assert not (folder / "failures.csv").exists()
    for name in TABLES:
        assert (folder / name).read_bytes() == (reference / name).read_bytes()


class _Broken(BaseScheduler):
    """A scheduler that fails at its first decision point."""

    def schedule(self, sim: object) -> None:
        raise RuntimeError("broken on purpose")


def test_a_policy_failing_everywhere_ranks_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry._FACTORIES, "broken-test", _Broken)
    code = run_bench(
        [MICRO], ["easy", "broken-test"], run_dir=tmp_path / "r", executor="serial", progress=False
    )
    assert code == 1
    board = (tmp_path / "r" / "leaderboard.md").read_text()
    rows = [line for line in board.splitlines() if line.startswith("| ") and "rank" not in line]
    assert rows[0].startswith("| 1 | easy |") and rows[1].startswith("| 2 | broken-test |")


def test_a_missing_agent_is_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no agent weights and card at"):
        run_bench([MICRO], ["easy", "no-such-agent"], run_dir=tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


def test_each_run_gets_a_new_folder_and_explicit_folders_are_guarded(
    tmp_path: Path, reference: Path
) -> None:
    kw = {"executor": "serial", "progress": False}
    assert run_bench([MICRO], ["easy"], out=tmp_path, **kw) == 0
    (first,) = (tmp_path / "micro-test").iterdir()
    before = _files(first)
    assert run_bench([MICRO], ["easy"], out=tmp_path, **kw) == 0
    runs = sorted((tmp_path / "micro-test").iterdir())
    assert len(runs) == 2 and _files(first) == before
    # the folder names end with the same configuration hash
    assert runs[0].name.split("-")[-1] == runs[1].name.split("-")[-1]
    with pytest.raises(SpecError, match="already exists"):
        run_bench([MICRO], ["easy"], run_dir=first, **kw)
    assert _files(first) == before
    with pytest.raises(SpecError, match="another configuration"):
        run_bench([MICRO], ["fcfs"], run_dir=first, resume=True, **kw)
    plain = tmp_path / "mine"
    plain.mkdir()
    (plain / "notes.txt").write_text("keep")
    with pytest.raises(SpecError, match="not a bench run folder"):
        run_bench([MICRO], ["easy"], run_dir=plain, overwrite=True, **kw)
    assert (plain / "notes.txt").read_text() == "keep"
    assert run_bench([MICRO], ["fcfs"], run_dir=first, overwrite=True, **kw) == 0
    assert "| fcfs |" in (first / "leaderboard.md").read_text()
    with pytest.raises(SpecError, match="nothing to resume"):
        run_bench([MICRO], ["sjf"], out=tmp_path, resume=True, **kw)


def test_run_json_explains_the_run_and_round_trips_through_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--scenario", "tiny-v0", "--policy", "easy", "--executor", "serial"]
    assert main([*argv, "--run-dir", str(tmp_path / "a")]) == 0
    record = json.loads((tmp_path / "a" / "run.json").read_text())
    assert record["command"] == ["hpcgym", *argv, "--run-dir", str(tmp_path / "a")]
    assert record["status"] == "complete"
    (sc,) = record["config"]["scenarios"]
    assert sc["name"] == "tiny-v0" and sc["seeds"] == [1000, 1001]
    assert sc["env_kwargs"] == {"n_jobs": 16} and record["config"]["policies"] == ["easy"]
    assert record["versions"]["numpy"] and record["versions"]["python"]
    assert record["machine"]["cpus"] >= 1 and record["wall_seconds"] > 0
    assert record["cpu_seconds"] > 0 and record["executor"]["ran"] == "serial"
    assert "git_commit" in record and record["hpcgym_version"]
    capsys.readouterr()
    from_argv = ["bench", "--from", str(tmp_path / "a" / "run.json"), "--executor", "serial"]
    assert main([*from_argv, "--run-dir", str(tmp_path / "b")]) == 0
    assert "repeating the run recorded in" in capsys.readouterr().out
    again = json.loads((tmp_path / "b" / "run.json").read_text())
    assert again["config"] == record["config"]
    assert again["config_hash"] == record["config_hash"]
    for name in TABLES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    (tmp_path / "x.json").write_text("{}")
    capsys.readouterr()
    assert main(["bench", "--from", str(tmp_path / "x.json")]) == 2
    assert "not a bench run.json" in capsys.readouterr().err


def test_the_executor_line_says_what_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert runner.resolve_executor("process", 2, 1).describe() == "serial (this process)"
    assert runner.resolve_executor("auto", 1, 9).describe() == "serial (this process)"
    assert runner.resolve_executor("auto", 2, 9).describe() == "process pool (2 worker processes)"


def test_the_bench_bar_counts_every_cell_with_an_eta(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpcgym.bench.command import _Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = _Progress(3, enabled=True)
    for seed in (5, 6, 7):
        bar.step(f"micro-test easy seed {seed}")
    bar.close()
    err = capsys.readouterr().err
    assert "3/3" in err and "eta" in err and "easy seed 7" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    quiet = _Progress(3, enabled=True)
    quiet.step("x")
    quiet.close()
    assert capsys.readouterr().err == ""


def test_an_agents_decoding_is_part_of_the_configuration() -> None:
    from hpcgym.bench.runinfo import config_hash

    def config(card: dict[str, object] | None) -> dict[str, object]:
        agent = {"file": "/x/agent.safetensors", "sha256": "ab" * 32, "card": card}
        return {"scenarios": [], "policies": ["x"], "agents": {"x": agent}}

    old = config_hash(config(None))  # a card from before decodings, or none
    assert config_hash(config({"algo": "maskable_ppo"})) == old
    assert config_hash(config({"algo": "maskable_ppo", "decode": "greedy"})) == old
    assert config_hash(config({"algo": "maskable_ppo", "decode": "kind"})) != old


def test_a_run_without_its_job_table_writes_it_on_resume(
    reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    kw = {"run_dir": folder, "executor": "serial", "progress": False}
    assert run_bench([MICRO], POLICIES, job_table="none", **kw) == 0
    assert "--resume writes it" in capsys.readouterr().out
    assert not (folder / "jobs.csv").exists() and not (folder / "jobs.parquet").exists()
    assert not (folder / "plots" / "micro-test_slowdown.png").exists()
    for name in TABLES:  # everything else as in a run with the table
        if name != "jobs.csv":
            assert (folder / name).read_bytes() == (reference / name).read_bytes()
    assert read_record(folder)["sessions"][0]["job_table"] == "none"
    # parquet only: the same jobs as the reference's CSV, and no CSV
    assert run_bench([MICRO], POLICIES, job_table="parquet", resume=True, **kw) == 0
    assert not (folder / "jobs.csv").exists()
    pd.testing.assert_frame_equal(
        pd.read_parquet(folder / "jobs.parquet"),
        pd.read_csv(reference / "jobs.csv"),
        check_dtype=False,
    )
    # the default again: the reference's files byte for byte
    assert run_bench([MICRO], POLICIES, resume=True, **kw) == 0
    assert _files(folder) == _files(reference)
    # and back to none: no stale job outputs describing an earlier state are left behind
    assert run_bench([MICRO], POLICIES, job_table="none", resume=True, **kw) == 0
    assert not (folder / "jobs.csv").exists() and not (folder / "jobs.parquet").exists()
    assert not (folder / "plots" / "micro-test_slowdown.png").exists()


def test_a_report_without_pyarrow_leaves_no_parquet_of_an_earlier_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    kw = {"run_dir": folder, "executor": "serial", "progress": False}
    assert run_bench([MICRO], POLICIES, **kw) == 0
    assert (folder / "jobs.parquet").is_file() and (folder / "results.parquet").is_file()
    import hpcgym.bench.report as report

    # as on a machine without pyarrow (pandas itself cannot run with pyarrow hidden)
    monkeypatch.setattr(report, "has_pyarrow", lambda: False)
    assert run_bench([MICRO], POLICIES, resume=True, **kw) == 0
    assert (folder / "jobs.csv").is_file()
    assert not (folder / "jobs.parquet").exists() and not (folder / "results.parquet").exists()


def test_a_job_table_that_cannot_be_written_is_refused_before_any_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SpecError, match="one of csv, parquet, none"):
        run_bench([MICRO], POLICIES, run_dir=tmp_path / "a", job_table="xlsx")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as on a machine without pyarrow
    with pytest.raises(SpecError, match="needs pyarrow: pip install pyarrow"):
        run_bench([MICRO], POLICIES, run_dir=tmp_path / "b", job_table="parquet")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(SystemExit):
        main(["bench", "--scenario", "tiny-v0", "--job-table", "xlsx"])


def test_with_defaults_runs_each_scenarios_own_policies_and_from_repeats_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(scenarios, "_SCENARIOS", dict(scenarios._SCENARIOS))
    one = scenarios.Scenario("micro-one", "hpcgym/Rigid-v0", {"n_jobs": 8}, (5,), ("fcfs",))
    two = scenarios.Scenario("micro-two", "hpcgym/Rigid-v0", {"n_jobs": 8}, (6,), ("sjf",))
    scenarios.register(one)
    scenarios.register(two)
    argv = ["bench", "--scenario", "micro-one", "--scenario", "micro-two", "--policy", "easy"]
    argv += ["--with-defaults", "--executor", "serial", "--no-progress"]
    assert main([*argv, "--run-dir", str(tmp_path / "a")]) == 0
    ran = pd.read_csv(tmp_path / "a" / "results.csv")
    pairs = sorted(zip(ran["scenario"], ran["policy"], strict=True))
    assert pairs == [
        ("micro-one", "easy"),
        ("micro-one", "fcfs"),
        ("micro-two", "easy"),
        ("micro-two", "sjf"),
    ]
    capsys.readouterr()
    again = ["bench", "--from", str(tmp_path / "a" / "run.json"), "--executor", "serial"]
    assert main([*again, "--run-dir", str(tmp_path / "b")]) == 0
    assert "differs from the registered one" not in capsys.readouterr().out
    for name in TABLES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
