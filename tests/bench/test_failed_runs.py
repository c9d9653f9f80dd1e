"""A bench run where nothing runs, or nothing works, ends honestly (issue "Hardening III", N6).

When every cell failed the report raised ``KeyError: "Columns not found: 'mean_bsld'"`` and
run.json said "running" for ever; a run.json with ``policies: []`` or an unknown ``metric``
went as far as a run folder and the same ``KeyError``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import hpcgym.bench.command as command
from hpcgym.baselines import registry
from hpcgym.baselines.base import BaseScheduler
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.runinfo import read_record
from hpcgym.cli import main
from hpcgym.errors import SpecError

MICRO = scenarios.Scenario("micro-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5, 6), ("fcfs",))


class _Broken(BaseScheduler):
    """A scheduler that fails at its first decision point."""

    def schedule(self, sim: object) -> None:
        raise RuntimeError("broken on purpose")


def test_every_cell_failing_gives_a_report_and_a_failed_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(registry._FACTORIES, "broken-test", _Broken)
    folder = tmp_path / "r"
    code = run_bench([MICRO], ["broken-test"], run_dir=folder, executor="serial", progress=False)
    assert code == 1
    record = read_record(folder)
    assert record["status"] == "failed"
    assert record["cells"] == {"total": 2, "done": 0, "failed": 2}
    failures = pd.read_csv(folder / "failures.csv")
    assert failures["seed"].tolist() == [5, 6]
    board = (folder / "leaderboard.md").read_text()
    assert "| 1 | broken-test |" in board and "every episode failed" in board
    out = capsys.readouterr().out
    assert "every episode failed" in out and "failures.csv" in out
    assert not (folder / "results.csv").exists()


def test_a_report_that_raises_leaves_run_json_crashed_not_running(tmp_path, monkeypatch):
    def broken_report(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the report")  # a full disk: tests/bench/test_full_disk.py

    monkeypatch.setattr(command, "write_report", broken_report)
    folder = tmp_path / "r"
    with pytest.raises(RuntimeError, match="a bug in the report"):
        run_bench([MICRO], ["fcfs"], run_dir=folder, executor="serial", progress=False)
    assert read_record(folder)["status"] == "crashed"
    assert len(list((folder / "cells").rglob("*.json"))) == 2  # the results are kept


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("rec") / "a"
    assert run_bench([MICRO], ["fcfs"], run_dir=folder, executor="serial", progress=False) == 0
    return read_record(folder)


def _from(tmp_path: Path, record: dict[str, object], capsys) -> tuple[int, str]:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(record))
    capsys.readouterr()
    code = main(["bench", "--from", str(path), "--executor", "serial", "--run-dir",
                 str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    return code, capsys.readouterr().err


def test_a_run_json_with_an_unknown_metric_is_refused_before_any_folder(tmp_path, recorded, capsys):
    record = json.loads(json.dumps(recorded))
    record["config"]["scenarios"][0]["metric"] = "nonsense"
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists()
    assert "edited.json" in err and "metric 'nonsense'" in err and "mean_bsld" in err
    assert err.count("\n") == 1


def test_a_run_json_with_no_policies_is_refused_before_any_folder(tmp_path, recorded, capsys):
    record = json.loads(json.dumps(recorded))
    record["config"]["policies"] = []
    record["config"]["scenarios"][0]["policies"] = []
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists()
    assert "edited.json" in err and "no policies" in err and err.count("\n") == 1


@pytest.mark.parametrize("policies", ["easy", [1, 2], {"a": 1}])
def test_a_run_json_whose_policies_are_not_a_list_of_names_is_refused(
    tmp_path, recorded, capsys, policies
):
    record = json.loads(json.dumps(recorded))
    record["config"]["policies"] = policies
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists() and "policies" in err


def test_a_scenario_without_policies_is_refused_before_any_folder(tmp_path):
    bare = scenarios.Scenario("bare-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5,), ())
    with pytest.raises(SpecError, match="bare-test: no policies to run"):
        run_bench([bare], None, run_dir=tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


def test_an_unknown_metric_is_refused_in_a_scenario():
    with pytest.raises(SpecError, match="metric 'nonsense' is not an episode metric"):
        scenarios.Scenario("m-test", "hpcgym/Rigid-v0", {}, (1,), ("fcfs",), metric="nonsense")


# Issue 39, L4: seeds out of range ran (each cell failing, exit 1), or made cells named
# True.json; seen failing before the fix.
@pytest.mark.parametrize(
    "seeds",
    [[-1], [2**32], [5, 1.5], [True], [5, "6"], [None], [[5]], "56", 5, [], [5, 5], None],
)
def test_a_run_json_with_seeds_out_of_range_is_refused_before_any_folder(
    tmp_path, recorded, capsys, seeds
):
    record = json.loads(json.dumps(recorded))
    record["config"]["scenarios"][0]["seeds"] = seeds
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists(), err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "edited.json" in err and "seeds" in err.replace(str(tmp_path), "")


def test_the_largest_seed_is_accepted():
    sc = scenarios.Scenario("m-test", "hpcgym/Rigid-v0", {}, (0, 2**32 - 1), ("fcfs",))
    assert sc.seeds == (0, 2**32 - 1)


# Issue 39, L4 (found by tests/fuzz/test_bench_files_fuzz.py): an env_kwargs that is not an
# object ended in a ValueError traceback; seen failing before the fix.
@pytest.mark.parametrize(
    ("where", "value", "words"),
    [
        ("env_kwargs", "n_jobs", "'env_kwargs' must be an object"),
        ("env_kwargs", [["n_jobs", 4]], "'env_kwargs' must be an object"),
        ("env_kwargs", None, "'env_kwargs' must be an object"),
        ("description", ["a"], "'description' must be a string"),
        ("metric", None, "'metric' must be a string"),
        ("windows", 3, "'windows' must be a string"),
        ("env_id", None, "env_id None is not an hpcgym preset"),
        ("name", ["x"], "scenario name"),
    ],
)
def test_a_run_json_scenario_with_a_field_of_the_wrong_type_is_refused(
    tmp_path, recorded, capsys, where, value, words
):
    record = json.loads(json.dumps(recorded))
    record["config"]["scenarios"][0][where] = value
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists(), err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "edited.json" in err and words in err


@pytest.mark.parametrize("config", [[], "x", {"scenarios": []}, {"scenarios": [3]}, {}])
def test_a_run_json_whose_config_is_not_one_is_refused(tmp_path, recorded, capsys, config):
    record = json.loads(json.dumps(recorded))
    record["config"] = config
    code, err = _from(tmp_path, record, capsys)
    assert code == 2 and not (tmp_path / "run").exists(), err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err


def test_from_keeps_a_scenarios_windows_and_best_heuristic(tmp_path, capsys):
    """--from dropped them: the repeated run had another configuration hash (so --from with
    --resume of a judged scenario's run was refused) and no best-heuristic line."""
    judged = scenarios.Scenario(
        "judged-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5,), ("fcfs", "easy"),
        best_heuristic="easy",
    )  # fmt: skip
    first = tmp_path / "a"
    assert run_bench([judged], None, run_dir=first, executor="serial", progress=False) == 0
    recorded = read_record(first)
    argv = ["bench", "--from", str(first / "run.json"), "--executor", "serial", "--no-progress"]
    assert main([*argv, "--run-dir", str(tmp_path / "b")]) == 0
    assert read_record(tmp_path / "b")["config_hash"] == recorded["config_hash"]
    assert main([*argv, "--run-dir", str(first), "--resume"]) == 0


def test_a_run_json_that_is_not_text_is_refused(tmp_path, capsys):
    """A run.json of bytes (not UTF-8) ended --from in a UnicodeDecodeError traceback."""
    (tmp_path / "run.json").write_bytes(b"\xff\xfe\x00not text")
    assert main(["bench", "--from", str(tmp_path / "run.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "run.json" in err and "UTF-8" in err
