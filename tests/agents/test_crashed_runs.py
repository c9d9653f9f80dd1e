"""A training killed outright, or two trainings into one folder (issue "Hardening III", L8).

A process killed mid-write (SIGKILL, out of memory) used to leave its temporary file and a
``run.json`` segment saying ``running``: the next run had to guess, and ``--resume`` of a run
killed after its agent was saved said "nothing to resume", so only ``--overwrite`` went on.
Now a run holds its folder's lock while it runs; the next one finds the lock free, so the
``running`` segment is one whose process is gone: it is marked ``crashed``, its stale
temporary files are removed, and ``--resume`` continues to the agent an uninterrupted run
gives (a plain run is refused with one line saying so). Two trainings into one folder: one
runs, the other is refused.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpcgym import atomic
from hpcgym.agents.rl import callbacks
from hpcgym.agents.runrecord import lock_run_folder
from hpcgym.cli import main

TRAIN = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "192"]
TRAIN += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=32", "--hp", "batch_size=32"]
TRAIN += ["--tensorboard", "", "--no-progress", "--eval-every", "0", "--checkpoint-every", "64"]


def _argv(folder: Path, *extra: str) -> list[str]:
    return [*TRAIN, "--out", str(folder), *extra]


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The uninterrupted run."""
    folder = tmp_path_factory.mktemp("whole") / "run"
    assert main(_argv(folder)) == 0
    return folder


def _killed_at(name: str, nth: int = 1) -> None:
    """In this (child) process: SIGKILL itself half-way through the ``nth`` write of ``name``."""
    real = atomic.atomic_path
    seen = [0]

    @contextlib.contextmanager
    def dying(path: str | Path) -> Iterator[Path]:
        with real(path) as tmp:
            yield tmp
            if Path(path).name == name:
                seen[0] += 1
                if seen[0] == nth:
                    tmp.write_bytes(tmp.read_bytes()[: tmp.stat().st_size // 2])
                    os.kill(os.getpid(), signal.SIGKILL)

    atomic.atomic_path = dying  # type: ignore[assignment]


def _child(argv: list[str], name: str, nth: int) -> None:
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    _killed_at(name, nth)
    try:
        code = main(argv)
    except BaseException:
        code = 99
    os._exit(code)


def _killed_run(folder: Path, name: str, nth: int = 1) -> None:
    """Run the training in a child process killed while it writes ``name``."""
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=_child, args=(_argv(folder), name, nth))
    p.start()
    p.join(600)
    assert p.exitcode == -signal.SIGKILL, p.exitcode


def _one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def _files(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()
    }


def _same_run(a: Path, b: Path) -> None:
    """The same agent, episode log and checkpoints' weights as the uninterrupted run."""
    for name in ("agent.safetensors", "episodes.csv", "hyperparams.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ckpt = sorted(p.name for p in (a / "checkpoints").iterdir())
    assert ckpt == sorted(p.name for p in (b / "checkpoints").iterdir())
    for name in ckpt:
        if name.endswith(".safetensors"):
            assert (a / "checkpoints" / name).read_bytes() == (
                b / "checkpoints" / name
            ).read_bytes()
    assert not [p for p in b.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("name", "nth"),
    [("state_128_steps.pt", 1), ("agent.safetensors", 1), ("timing.json", 1), ("run.json", 2)],
)
def test_a_run_killed_mid_write_is_recognised_and_resumes_to_the_same_agent(
    whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, nth: int
) -> None:
    folder = tmp_path / "run"
    _killed_run(folder, name, nth)
    stale = [p for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert stale  # the half-written temporary file of the killed process
    (seg,) = json.loads((folder / "run.json").read_text())["segments"]
    assert seg["status"] == "running" and seg["pid"] != os.getpid()
    # A plain run is refused, saying what happened and what to do; it changes no run file
    # (the dead process's temporary file is gone).
    before = _files(folder)
    assert main(_argv(folder)) == 2
    _one_line(capsys, str(folder), "ended without finishing", "--resume", "--overwrite")
    assert _files(folder) == {k: v for k, v in before.items() if not k.endswith(".tmp")}
    # --resume continues it to the uninterrupted run's agent.
    assert main(_argv(folder, "--resume")) == 0
    _same_run(whole, folder)
    first, second = json.loads((folder / "run.json").read_text())["segments"]
    assert first["status"] == "crashed" and "killed" in first["error"]
    assert second["status"] == "finished" and second["timesteps"] == 192


def test_stale_temporary_files_alone_do_not_block_a_new_run(
    whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    _killed_run(folder, "hyperparams.json")  # the first write: nothing but its temporary file
    assert next(p.name for p in folder.iterdir()).startswith(".hyperparams.json.")
    assert main(_argv(folder)) == 0
    _same_run(whole, folder)


def test_a_killed_run_whose_segment_was_never_written_needs_resume(
    whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    _killed_run(folder, "run.json")  # hyperparams.json written, the record not
    assert main(_argv(folder)) == 2
    _one_line(capsys, "--resume")
    assert main(_argv(folder, "--resume")) == 0
    _same_run(whole, folder)


def test_a_folder_in_use_by_another_training_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    with lock_run_folder(folder):  # as another process training into it would hold it
        for extra in ((), ("--resume",), ("--overwrite",)):
            assert main(_argv(folder, *extra)) == 2
            _one_line(capsys, str(folder), "in use by another hpcgym train", "another --out")
    assert list(folder.iterdir()) == []


def test_a_cut_row_at_the_end_of_the_episode_log_is_dropped_on_resume(
    whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed while appending an episode row: only its first digits reached the file."""
    folder = tmp_path / "run"
    shutil.copytree(whole, folder)
    for name in ("agent.safetensors", "agent.json", "timing.json"):
        (folder / name).unlink()
    for path in (folder / "checkpoints").glob("*_192_steps*"):
        path.unlink()
    record = json.loads((folder / "run.json").read_text())
    record["segments"][-1].update(status="running", pid=2**22 + 1)
    (folder / "run.json").write_text(json.dumps(record))
    rows = (folder / "episodes.csv").read_text().splitlines(keepends=True)
    late = next(r for r in rows[1:] if int(r.split(",")[0]) > 128)
    kept = [r for r in rows if r[0].isalpha() or int(r.split(",")[0]) <= 128]
    (folder / "episodes.csv").write_text("".join(kept) + late[:1])  # "1" of "1xx,..."
    assert main(_argv(folder, "--resume")) == 0
    _same_run(whole, folder)


def _race(barrier: object, argv: list[str], log: str) -> None:
    with open(log, "w") as f:
        sys.stdout = sys.stderr = f
        barrier.wait(60)  # type: ignore[attr-defined]
        try:
            code = main(argv)
        except BaseException as e:
            traceback.print_exc(file=f)  # the log says where, if this ever fails again
            print(f"raised {e!r}", file=f)
            code = 99
        f.flush()
    os._exit(code)


@pytest.mark.parametrize("trial", range(2))
def test_two_trainings_into_one_folder_exactly_one_proceeds(
    whole: Path, tmp_path: Path, trial: int
) -> None:
    folder = tmp_path / "run"
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    logs = [str(tmp_path / f"log-{k}.txt") for k in range(2)]
    argvs = [_argv(folder), _argv(folder, "--resume")]
    procs = [
        ctx.Process(target=_race, args=(barrier, a, log))
        for a, log in zip(argvs, logs, strict=True)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
    codes = [p.exitcode for p in procs]
    texts = [Path(log).read_text() for log in logs]
    if sorted(codes) != [0, 2]:  # type: ignore[type-var]
        pytest.fail(f"exit codes {codes}; the logs:\n" + "\n---\n".join(texts))
    loser = texts[codes.index(2)]
    assert "hpcgym: error: " in loser and str(folder) in loser and "Traceback" not in loser
    (segment,) = json.loads((folder / "run.json").read_text())["segments"]
    assert segment["status"] == "finished"
    _same_run(whole, folder)


def test_the_episode_log_keeps_only_whole_rows(tmp_path: Path) -> None:
    log = tmp_path / "episodes.csv"
    header = ",".join(callbacks.EPISODE_COLUMNS)
    whole_row = "64," + ",".join(["0"] * (len(callbacks.EPISODE_COLUMNS) - 1))
    log.write_text(f"{header}\n{whole_row}\n1\n12,0,1.5\n")
    metrics = callbacks.EpisodeMetricsCallback(log, resume_at=128)
    assert metrics._kept_rows() == [whole_row.split(",")]
