"""``--resume`` does not trust the stored cells blindly (issue "Hardening III", L11 and L4).

A damaged cell file (truncated, not JSON, wrong types) ended ``--resume`` in a traceback, or
reached the tables; a cell file naming another policy, scenario or seed than its file name added
a phantom row; and a ``config_hash`` edited by hand let one agent's cells be read as another's.
Now a damaged or misplaced cell is run again, with one warning line; a cell of another
configuration is refused with one error line naming it and what to do.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
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
def copy(reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the reference run, to damage."""
    monkeypatch.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)
    folder = tmp_path / "run"
    shutil.copytree(reference, folder)
    return folder


def _resume(folder: Path, policies: list[str] = POLICIES) -> int:
    argv = ["bench", "--scenario", MICRO.name, *(a for p in policies for a in ("--policy", p))]
    argv += ["--executor", "serial", "--no-progress", "--run-dir", str(folder), "--resume"]
    return main(argv)


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def _set(*keys: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        for key in keys[:-1]:
            record = record[key]
        record[keys[-1]] = value

    return change


DAMAGES: dict[str, Callable[[Path], None]] = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "empty": lambda p: p.write_bytes(b""),
    "not JSON": lambda p: p.write_text("this is not a cell"),
    "not UTF-8": lambda p: p.write_bytes(b"\xff\xfe\x00garbage"),
    "a list": lambda p: p.write_text("[1, 2, 3]"),
    "row is a list": lambda p: _edit(p, _set("row", value=[1, 2])),
    "a metric is a string": lambda p: _edit(p, _set("row", "mean_bsld", value="low")),
    "a metric is missing": lambda p: _edit(p, lambda r: r["row"].pop("mean_bsld")),
    "seed is a bool": lambda p: _edit(p, _set("row", "seed", value=True)),
    "jobs is a number": lambda p: _edit(p, _set("jobs", value=3)),
    "jobs data is a string": lambda p: _edit(p, _set("jobs", "data", value="x")),
    "jobs columns differ": lambda p: _edit(p, _set("jobs", "columns", value=["a"])),
    "a job value has the wrong type": lambda p: _edit(
        p, lambda r: r["jobs"]["data"][r["jobs"]["columns"].index("wait")].__setitem__(0, "x")
    ),
    "a dtype is unknown": lambda p: _edit(
        p, lambda r: r["jobs"]["dtypes"].__setitem__(0, "module.Class")
    ),
    "columns of unequal length": lambda p: _edit(p, lambda r: r["jobs"]["data"][5].pop()),
    "timeline is a string": lambda p: _edit(p, _set("timeline", value="x")),
    "no timeline": lambda p: _edit(p, _set("timeline", value=None)),
    "gantt is a string": lambda p: _edit(p, _set("gantt", value="yes")),
    "cpu_seconds is a list": lambda p: _edit(p, _set("cpu_seconds", value=[1])),
    "its gantt chart is damaged": lambda p: p.with_suffix(".gantt.png").write_bytes(b"\x89PNG"),
    "its gantt chart is missing": lambda p: p.with_suffix(".gantt.png").unlink(),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_cell_is_run_again_with_one_warning(
    copy: Path, reference: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = copy / "cells" / MICRO.name / "easy" / "5.json"  # a detailed cell: it has a chart
    DAMAGES[damage](cell)
    capsys.readouterr()
    assert _resume(copy) == 0
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: warning: ") and err.count("\n") == 1, err
    assert str(cell) in err and "running it again" in err
    assert _tables(copy) == _tables(reference)
    assert (
        json.loads(cell.read_text())["row"]
        == json.loads((reference / cell.relative_to(copy)).read_text())["row"]
    )


@pytest.mark.parametrize(
    ("source", "target"),
    [("easy/6.json", "random/6.json"), ("easy/6.json", "easy/5.json")],
)
def test_a_cell_of_another_policy_or_seed_adds_no_phantom_row(
    copy: Path, reference: Path, source: str, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cells = copy / "cells" / MICRO.name
    shutil.copy(cells / source, cells / target)
    capsys.readouterr()
    assert _resume(copy) == 0
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: warning: ") and err.count("\n") == 1, err
    assert str(cells / target) in err and "running it again" in err
    assert _tables(copy) == _tables(reference)


def _score_agent(folder: Path, weights: list[float]) -> str:
    from hpcgym.agents.engine.score import FEATURES, ScoreCard

    folder.mkdir(parents=True)
    card = ScoreCard("hpcgym/Rigid-v0", {}, tuple(weights))
    (folder / "score.json").write_text(card.to_json())
    assert len(weights) == len(FEATURES)
    return str(folder)


def test_an_edited_config_hash_never_mixes_two_agents_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)
    # Two agents with the same label, "best": their cells have the same file names.
    one = _score_agent(tmp_path / "x" / "best", [1, 0, 0, 0, 0, 0, 1, 0])
    two = _score_agent(tmp_path / "y" / "best", [0, 1, 0, 0, 0, 0, 0, 0])
    ran_one, ran_two = tmp_path / "one", tmp_path / "two"
    kw: dict[str, Any] = {"executor": "serial", "progress": False}
    assert run_bench([MICRO], [one], run_dir=ran_one, **kw) == 0
    assert run_bench([MICRO], [two], run_dir=ran_two, **kw) == 0
    two_hash = json.loads((ran_two / "run.json").read_text())["config_hash"]
    # Only the hash edited: run.json's own configuration says it is another run.
    _edit(ran_one / "run.json", _set("config_hash", value=two_hash))
    capsys.readouterr()
    assert _resume(ran_one, [two]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert str(ran_one / "run.json") in err and "config_hash" in err
    # The other run's run.json put in its place: the cells say they are not this run's.
    shutil.copy(ran_two / "run.json", ran_one / "run.json")
    assert _resume(ran_one, [two]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    cell = ran_one / "cells" / MICRO.name / "best" / "5.json"
    assert str(cell) in err and "another configuration" in err and "delete" in err
    # A cell's own hash edited by hand is refused the same way.
    _edit(ran_two / "cells" / MICRO.name / "best" / "6.json", _set("config_hash", value="0" * 8))
    assert _resume(ran_two, [two]) == 2
    err = capsys.readouterr().err
    assert "6.json" in err and "another configuration" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("config", ["x", None, [1], 3])
def test_resume_of_a_run_json_whose_config_is_not_an_object_is_one_line(
    copy: Path, config: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by tests/fuzz/test_bench_files_fuzz.py: an AttributeError traceback before."""
    _edit(copy / "run.json", _set("config", value=config))
    capsys.readouterr()
    assert _resume(copy) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert str(copy / "run.json") in err and "config" in err


@pytest.mark.parametrize("sessions", ["abc", [1, {"wall_seconds": "x"}], {"a": 1}, [math.inf]])
def test_resume_of_a_run_json_with_odd_sessions_keeps_its_times_numbers(
    copy: Path, sessions: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited sessions list ended --resume in an AttributeError or TypeError traceback."""
    _edit(copy / "run.json", _set("sessions", value=sessions))
    assert _resume(copy) == 0
    record = json.loads((copy / "run.json").read_text())
    assert all(isinstance(s, dict) for s in record["sessions"])
    assert math.isfinite(record["wall_seconds"]) and math.isfinite(record["cpu_seconds"])
