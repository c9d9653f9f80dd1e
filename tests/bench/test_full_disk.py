"""A full disk mid-run (issue "Hardening III", L9 and the disk part of L4).

run.json counted a cell whose file could not be written (``done`` was updated before the write),
and the ``OSError`` ended the command in a traceback. Now a cell counts once its file is written,
a failed write ends the run with one ``hpcgym: error:`` line (status 2) and ``status: failed`` in
run.json, and ``--resume`` runs that cell again, to the tables of an uninterrupted run.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

import hpcgym.bench.cells as cells
import hpcgym.bench.command as command
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.runinfo import read_record
from hpcgym.cli import main

MICRO = scenarios.Scenario("micro-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5, 6), ("fcfs",))
POLICIES = ["easy", "random"]


def _tables(folder: Path) -> dict[str, bytes]:
    """Tables and plots (not run.json, nor the cells, which record CPU seconds)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "run.json" and "cells" not in p.parts
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ref") / "run"
    assert run_bench([MICRO], POLICIES, run_dir=folder, executor="serial", progress=False) == 0
    return folder


@pytest.fixture
def micro(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)


def _argv(folder: Path, *more: str) -> list[str]:
    argv = ["bench", "--scenario", MICRO.name, "--policy", POLICIES[0], "--policy", POLICIES[1]]
    return [*argv, "--executor", "serial", "--no-progress", "--run-dir", str(folder), *more]


def _one_error(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def _full_disk() -> OSError:
    return OSError(errno.ENOSPC, "No space left on device")


def test_a_cell_that_cannot_be_stored_is_not_counted_and_resume_runs_it(
    tmp_path: Path, reference: Path, micro: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    folder = tmp_path / "run"
    real = cells.write_text
    writes: list[Path] = []

    def full_at_the_third_cell(path: Path, text: str) -> Path:
        if Path(path).suffix == ".json" and "cells" in Path(path).parts:
            writes.append(Path(path))
            if len(writes) == 3:
                raise _full_disk()
        return real(path, text)

    monkeypatch.setattr(cells, "write_text", full_at_the_third_cell)
    assert main(_argv(folder)) == 2
    _one_error(capsys, str(writes[2]), "No space left on device", "--resume")
    record = read_record(folder)
    assert record["status"] == "failed"
    stored = sorted(folder.glob("cells/*/*/*.json"))
    assert stored == sorted(writes[:2])  # the cell that failed to be written is not there ...
    assert record["cells"] == {"total": 4, "done": 2, "failed": 0}  # ... nor counted
    assert "No space left on device" in record["error"]
    monkeypatch.undo()
    monkeypatch.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)
    assert main(_argv(folder, "--resume")) == 0
    assert _tables(folder) == _tables(reference)
    record = read_record(folder)
    assert record["status"] == "complete" and record["cells"]["done"] == 4


def test_a_report_that_cannot_be_written_is_a_one_line_error(
    tmp_path: Path, reference: Path, micro: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise _full_disk()

    monkeypatch.setattr(command, "write_report", full)
    folder = tmp_path / "run"
    assert main(_argv(folder)) == 2
    _one_error(capsys, "No space left on device", "--resume")
    assert read_record(folder)["status"] == "failed"
    assert len(list(folder.glob("cells/*/*/*.json"))) == 4  # the results are kept
    monkeypatch.undo()
    monkeypatch.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)
    assert main(_argv(folder, "--resume")) == 0
    assert _tables(folder) == _tables(reference)


def test_a_run_json_that_cannot_be_written_is_a_one_line_error(
    tmp_path: Path, micro: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def full(path: Path, text: str) -> Path:
        raise _full_disk()

    monkeypatch.setattr(command, "write_text", full)
    folder = tmp_path / "run"
    assert main(_argv(folder)) == 2
    _one_error(capsys, "run.json", "No space left on device")
    assert not list(folder.glob("cells/*/*/*.json"))  # refused before any episode


def test_a_failed_write_of_a_failure_is_a_one_line_error(
    tmp_path: Path, micro: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import hpcgym.bench.runner as runner

    def broken(task: runner.Task) -> runner.TaskOutcome:
        raise RuntimeError("boom")

    def full(path: Path, text: str) -> Path:
        raise _full_disk()

    monkeypatch.setattr(runner, "run_task", broken)
    monkeypatch.setattr(cells, "write_text", full)
    folder = tmp_path / "run"
    assert main(_argv(folder)) == 2
    _one_error(capsys, "failures", "No space left on device")
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "failed" and record["cells"]["failed"] == 0


def test_a_run_folder_that_cannot_be_made_is_a_one_line_error(
    tmp_path: Path, micro: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    def full(*args: object, **kwargs: object) -> Path:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "x"))

    monkeypatch.setattr(command, "new_run_dir", full)
    argv = ["bench", "--scenario", MICRO.name, "--policy", "easy", "--executor", "serial"]
    assert main([*argv, "--no-progress", "--out", str(tmp_path / "out")]) == 2
    _one_error(capsys, "No space left on device", str(tmp_path / "out"))
