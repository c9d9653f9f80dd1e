"""Crash a short ``hpcgym train`` at every write it makes (issue "Hardening III", L8 and L4).

Every file of a run folder is written through :func:`hpcgym.atomic.atomic_path` (the episode
log is appended, and its header written so). A clean run counts its writes; then, for a write
``k``, a run into a new folder is crashed half-way through its ``k``-th write, either

* ``killed``: SIGKILL in a forked child (no handler runs: the temporary file stays, and the
  record says ``running``), or
* ``disk-full``: an ``OSError(ENOSPC)`` in this process (the command must end with one line).

Contract: after the crash no run file is half-written (each parses); the next plain run either
trains to the clean run's result (nothing was kept) or is refused with one line naming
``--resume``; ``--resume`` then trains to the clean run's result, bit for bit, and leaves no
temporary file. Never a traceback. The default run crashes at a spread of writes; the slow one
(``pytest -m slow``) at every write, both ways.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

from hpcgym import atomic
from hpcgym.agents.rl import callbacks
from hpcgym.cli import main

ARGV = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "192"]
ARGV += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=32", "--hp", "batch_size=32"]
ARGV += ["--tensorboard", "", "--no-progress", "--checkpoint-every", "64"]
ARGV += ["--eval-every", "128", "--eval-episodes", "1"]
"""Three rollouts of 2 x 32 steps; checkpoints at 64, 128, 192; validation at 128 and 192."""

IDENTICAL = ("agent.safetensors", "best.safetensors", "episodes.csv", "validation.csv")
IDENTICAL += ("hyperparams.json",)
CARDS = ("agent.json", "best.json")


def _argv(folder: Path, *extra: str) -> list[str]:
    return [*ARGV, "--out", str(folder), *extra]


@contextlib.contextmanager
def _writes(on_write: Callable[[int, Path, Path], None]) -> Iterator[None]:
    """Call ``on_write(k, target, tmp)`` at each write's end, before its rename."""
    real = atomic.atomic_path
    count = [0]

    @contextlib.contextmanager
    def watched(path: str | Path) -> Iterator[Path]:
        with real(path) as tmp:
            yield tmp
            count[0] += 1
            on_write(count[0], Path(path), tmp)

    saved = atomic.atomic_path, callbacks.atomic_path
    atomic.atomic_path = callbacks.atomic_path = watched  # type: ignore[assignment]
    try:
        yield
    finally:
        atomic.atomic_path, callbacks.atomic_path = saved


def _half(tmp: Path) -> None:
    tmp.write_bytes(tmp.read_bytes()[: tmp.stat().st_size // 2])


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The uncrashed run, and the names of the files it wrote, in order."""
    folder = tmp_path_factory.mktemp("clean") / "run"
    names: list[str] = []
    with _writes(lambda k, target, tmp: names.append(target.name)):
        assert main(_argv(folder)) == 0
    assert names[:2] == ["hyperparams.json", "run.json"] and names[-1] == "run.json"
    return folder, names


# ---------------------------------------------------------------------------- crashing
def _die_at(k: int) -> Callable[[int, Path, Path], None]:
    def on_write(n: int, target: Path, tmp: Path) -> None:
        if n == k:
            _half(tmp)
            os.kill(os.getpid(), signal.SIGKILL)

    return on_write


def _killed_child(argv: list[str], k: int) -> None:
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    with _writes(_die_at(k)):
        try:
            main(argv)
        except BaseException:
            os._exit(99)
    os._exit(0)


def _crash_killed(folder: Path, k: int) -> None:
    p = multiprocessing.get_context("fork").Process(target=_killed_child, args=(_argv(folder), k))
    p.start()
    p.join(600)
    assert p.exitcode == -signal.SIGKILL, f"write {k}: the child ended with {p.exitcode}"


def _crash_disk_full(folder: Path, k: int, capsys: pytest.CaptureFixture[str]) -> None:
    def on_write(n: int, target: Path, tmp: Path) -> None:
        if n == k:
            _half(tmp)
            raise OSError(errno.ENOSPC, "No space left on device")

    capsys.readouterr()
    with _writes(on_write):
        code = main(_argv(folder))
    err = capsys.readouterr().err
    assert code == 2, f"write {k}: exit {code}"
    _one_line(err, "No space left on device", "--resume")
    assert not list(folder.rglob("*.tmp")), f"write {k}: a temporary file stayed"


# ---------------------------------------------------------------------------- checks
def _one_line(err: str, *words: str) -> None:
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err, err
    for word in words:
        assert word in err, err


def _complete(path: Path) -> None:
    """``path`` parses as what its name says."""
    name = path.name
    if name.endswith(".json"):
        json.loads(path.read_text())
    elif name.endswith(".safetensors"):
        from safetensors.torch import load_file

        load_file(str(path))
    elif name.endswith(".pt"):
        import torch

        torch.load(path, weights_only=True)
    elif name.endswith(".csv"):
        rows = list(csv.reader(path.open(newline="")))
        assert rows and all(len(r) == len(rows[0]) for r in rows), rows
    elif name.endswith(".png"):
        data = path.read_bytes()
        assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    else:
        raise AssertionError(f"unexpected file {path}")


def _no_half_written_file(folder: Path, k: int) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and not path.name.startswith("."):
            try:
                _complete(path)
            except Exception as e:
                raise AssertionError(f"write {k}: {path} is not complete ({e})") from e


def _card(path: Path) -> dict[str, object]:
    card = json.loads(path.read_text())
    card["training"].pop("produced_by")
    return card  # type: ignore[no-any-return]


def _same_as_clean(clean: Path, folder: Path, k: int) -> None:
    for name in IDENTICAL:
        assert (clean / name).read_bytes() == (folder / name).read_bytes(), f"write {k}: {name}"
    for name in CARDS:
        assert _card(clean / name) == _card(folder / name), f"write {k}: {name}"
    files = sorted(p.name for p in (clean / "checkpoints").iterdir())
    assert files == sorted(p.name for p in (folder / "checkpoints").iterdir()), f"write {k}"
    for name in files:
        if name.endswith(".safetensors"):
            a, b = clean / "checkpoints" / name, folder / "checkpoints" / name
            assert a.read_bytes() == b.read_bytes(), f"write {k}: {name}"
    assert {p.name for p in clean.iterdir()} == {p.name for p in folder.iterdir()}, f"write {k}"
    last = json.loads((folder / "run.json").read_text())["segments"][-1]
    assert (last["status"], last["timesteps"]) == ("finished", 192), f"write {k}"


def _recovers(
    clean: Path, folder: Path, k: int, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the crash at write ``k``: the next runs, as the module docstring says."""
    _no_half_written_file(folder, k)
    capsys.readouterr()
    code = main(_argv(folder))
    err = capsys.readouterr().err
    if code == 0:  # nothing was kept (a crash in the first write): a new run
        assert k == 1, f"write {k}: a plain run went on over a crashed run"
    else:
        assert code == 2, f"write {k}: exit {code}: {err}"
        _one_line(err, str(folder), "--resume", "--overwrite")
        code = main(_argv(folder, "--resume"))
        err = capsys.readouterr().err
        assert code == 0, f"write {k}: --resume exited {code}: {err}"
        segments = json.loads((folder / "run.json").read_text())["segments"]
        if len(segments) > 1:  # the crashed invocation had opened its record
            assert segments[-2]["status"] == ("crashed" if how == "killed" else "failed")
            assert segments[-2]["error"]
    _same_as_clean(clean, folder, k)
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")], f"write {k}"


def _crash_and_recover(
    clean: Path, tmp_path: Path, k: int, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / f"{how}-{k}" / "run"
    if how == "killed":
        _crash_killed(folder, k)
    else:
        _crash_disk_full(folder, k, capsys)
    _recovers(clean, folder, k, how, capsys)


SPREAD = ("first", "second", "third", "a third", "half", "two thirds", "last but one", "last")


def _write_number(where: str, n: int) -> int:
    return {
        "first": 1,
        "second": 2,
        "third": 3,
        "a third": n // 3,
        "half": n // 2,
        "two thirds": 2 * n // 3,
        "last but one": n - 1,
        "last": n,
    }[where]


@pytest.mark.parametrize("where", SPREAD)
def test_a_training_killed_at_a_write_resumes_to_the_same_result(
    clean: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    folder, names = clean
    _crash_and_recover(folder, tmp_path, _write_number(where, len(names)), "killed", capsys)


@pytest.mark.parametrize("where", ["first", "half", "last"])
def test_a_training_stopped_by_a_full_disk_resumes_to_the_same_result(
    clean: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    folder, names = clean
    _crash_and_recover(folder, tmp_path, _write_number(where, len(names)), "disk-full", capsys)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["killed", "disk-full"])
def test_every_write_crashed_both_ways(
    clean: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    folder, names = clean
    for k in range(1, len(names) + 1):
        _crash_and_recover(folder, tmp_path, k, how, capsys)
