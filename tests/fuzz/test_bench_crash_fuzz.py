"""A bench run killed between any two of its writes, then resumed (issue 39).

A clean tiny run (2 policies x 1 scenario x 2 seeds) makes N atomic writes (run.json, cells,
Gantt charts, the report, run.json again), each ending in ``hpcgym.atomic._commit``. For every k
below N, a run is crashed just before its (k+1)-th write: from then on every write fails as in a
process that died (a ``BaseException``, so not even run.json's "crashed" status gets written),
and a half-written temporary is left beside the file being written, as a killed process leaves
one. Then:

* no file in the run folder is half-written: each is the reference run's file, or for cells and
  run.json, complete JSON (cells with the reference's rows);
* ``--resume`` gives the uncrashed run's tables and plots byte for byte, and leaves no temporary
  behind; or, when the crash came before run.json was first written, refuses in one line.

The default run tries a few crash points; ``pytest -m slow`` tries every one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hpcgym.atomic as atomic
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.errors import SpecError

TINY = scenarios.Scenario("crash-test", "hpcgym/Rigid-v0", {"n_jobs": 8}, (5, 6), ("fcfs",))
POLICIES = ["fcfs", "easy"]
KW = {"executor": "serial", "progress": False}


class _Crash(BaseException):
    """The process died here."""


def _temporary(p: Path) -> bool:
    return p.name.startswith(".") and p.name.endswith(".tmp")


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not _temporary(p)
    }


def _tables(folder: Path) -> dict[str, bytes]:
    """Tables and plots: not run.json, nor the cells (they record CPU seconds)."""
    return {
        name: data
        for name, data in _files(folder).items()
        if name != "run.json" and not name.startswith("cells/")
    }


def _count_writes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    real = atomic._commit
    targets: list[Path] = []

    def counting(tmp: Path, target: Path) -> None:
        targets.append(target)
        real(tmp, target)

    monkeypatch.setattr(atomic, "_commit", counting)
    return targets


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """The uncrashed run, and the files it wrote, in order."""
    folder = tmp_path_factory.mktemp("ref") / "run"
    with pytest.MonkeyPatch.context() as mp:
        written = _count_writes(mp)
        assert run_bench([TINY], POLICIES, run_dir=folder, **KW) == 0
    return folder, written


def _crash_after(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """Let ``k`` writes through; the next one (and every later one) dies half-way."""
    real = atomic._commit
    done = [0]

    def dying(tmp: Path, target: Path) -> None:
        if done[0] >= k:
            data = tmp.read_bytes()
            (target.parent / f".{target.name}.killed.tmp").write_bytes(data[: len(data) // 2])
            raise _Crash
        done[0] += 1
        real(tmp, target)

    monkeypatch.setattr(atomic, "_commit", dying)


def crash_and_resume(k: int, reference: tuple[Path, list[Path]], folder: Path) -> None:
    ref = reference[0]
    with pytest.MonkeyPatch.context() as mp:
        _crash_after(mp, k)
        with pytest.raises(_Crash):
            run_bench([TINY], POLICIES, run_dir=folder, **KW)
    # Nothing is half-written: every file is the reference's, or complete JSON.
    for name, data in _files(folder).items():
        if name == "run.json" or (name.startswith("cells/") and name.endswith(".json")):
            record = json.loads(data)
            if name != "run.json":
                assert record["row"] == json.loads((ref / name).read_text())["row"], name
        else:
            assert data == (ref / name).read_bytes(), name
    assert any(_temporary(p) for p in folder.rglob("*"))  # what the killed write left
    if (folder / "run.json").is_file():
        assert run_bench([TINY], POLICIES, run_dir=folder, resume=True, **KW) == 0
    else:  # killed before anything was recorded: nothing to resume, and the folder is free
        assert k == 0
        with pytest.raises(SpecError, match="nothing to resume") as refused:
            run_bench([TINY], POLICIES, run_dir=folder, resume=True, **KW)
        assert "\n" not in str(refused.value) and "leave out --resume" in str(refused.value)
        assert run_bench([TINY], POLICIES, run_dir=folder, **KW) == 0
    assert _tables(folder) == _tables(ref)
    assert not [p for p in folder.rglob("*") if _temporary(p)]
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "complete" and record["cells"]["done"] == 4


def test_the_reference_run_writes_each_file_once_in_order(reference):
    _, written = reference
    names = [p.name for p in written]
    assert names[0] == "run.json" and names[-1] == "run.json"
    assert sum(n.endswith(".gantt.png") for n in names) == 2  # the first seed of each policy
    assert sum(n in ("5.json", "6.json") for n in names) == 4
    assert len(names) > 12


@pytest.mark.parametrize("where", ["run.json", "a cell", "the report"])
def test_a_crash_between_writes_resumes_to_the_same_tables(where, reference, tmp_path):
    k = {"run.json": 0, "a cell": 3, "the report": len(reference[1]) - 4}[where]
    crash_and_resume(k, reference, tmp_path / "run")


@pytest.mark.slow
def test_a_crash_between_any_two_writes_resumes_to_the_same_tables(reference, tmp_path):
    for k in range(len(reference[1])):
        crash_and_resume(k, reference, tmp_path / f"run{k}")
