"""Damaged agent weights and a full disk are one-line errors (issue "Hardening III", L4).

A safetensors file cut short, a tensor of another shape, or a disk that fills up while
``hpcgym train`` or ``hpcgym evaluate`` writes: each ends the command with exactly one line
``hpcgym: error: ...`` naming the file and what to do (exit status 2), never a traceback.
``load_agent`` raises the package's own :class:`~hpcgym.errors.SpecError`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpcgym import atomic
from hpcgym.agents.rl.saved import load_agent
from hpcgym.cli import main
from hpcgym.errors import SpecError

ENV = "hpcgym/Rigid-v0"
TRAIN = ["train", "--env", ENV, "--timesteps", "128", "--env-kwargs", '{"n_jobs": 16}']
TRAIN += ["--hp", "n_steps=32", "--hp", "batch_size=32", "--tensorboard", "", "--no-progress"]
TRAIN += ["--eval-every", "0", "--checkpoint-every", "64"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run: 128 steps, checkpoints at 64 and 128."""
    folder = tmp_path_factory.mktemp("run") / "r"
    assert main([*TRAIN, "--out", str(folder)]) == 0
    assert (folder / "checkpoints" / "state_64_steps.pt").is_file()
    return folder


def _one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    return err


def _cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _reshape(path: Path) -> str:
    """Store one matrix of ``path`` transposed in shape (same bytes); return its name."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(path), framework="pt") as f:
        metadata = f.metadata()
    tensors = load_file(str(path))
    name = next(
        k for k in sorted(tensors) if tensors[k].dim() == 2 and len(set(tensors[k].shape)) == 2
    )
    rows, cols = tensors[name].shape
    tensors[name] = tensors[name].reshape(cols, rows).contiguous()
    save_file(tensors, str(path), metadata=metadata)
    return name


def _copy_agent(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "agent"
    copy.mkdir()
    for name in ("agent.safetensors", "agent.json"):
        shutil.copy(run / name, copy / name)
    return copy


DAMAGE = ["cut-0", "cut-7", "cut-100", "cut-half", "cut-last-byte", "reshaped"]


def _damage(weights: Path, how: str) -> None:
    size = weights.stat().st_size
    keep = {"cut-0": 0, "cut-7": 7, "cut-100": 100, "cut-half": size // 2}
    if how == "reshaped":
        _reshape(weights)
    else:
        _cut(weights, keep.get(how, size - 1))


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_weights_are_one_line_errors_of_load_agent_and_evaluate(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    agent = _copy_agent(run, tmp_path)
    _damage(agent / "agent.safetensors", how)
    with pytest.raises(SpecError) as info:
        load_agent(agent)
    message = str(info.value)
    assert str(agent) in message and "agent.safetensors" in message and "\n" not in message
    assert "again" in message  # what to do: copy it, or train it, again
    if how.startswith("cut"):
        assert "cut short" in message and "copy the agent" in message
    argv = ["evaluate", "--env", ENV, "--n-jobs", "16", "--episodes", "1", "--policy", str(agent)]
    assert main(argv) == 2
    _one_line(capsys, "agent.safetensors")


@pytest.mark.parametrize("how", DAMAGE)
def test_resuming_from_damaged_checkpoint_weights_is_a_one_line_error(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    folder = tmp_path / "r"
    shutil.copytree(run, folder)
    for name in ("agent.safetensors", "agent.json"):  # as if stopped after the last checkpoint
        (folder / name).unlink()
    record = json.loads((folder / "run.json").read_text())
    record["segments"][-1]["status"] = "failed"
    (folder / "run.json").write_text(json.dumps(record))
    weights = folder / "checkpoints" / "agent_128_steps.safetensors"
    _damage(weights, how)
    assert main([*TRAIN, "--out", str(folder), "--resume"]) == 2
    err = _one_line(capsys, str(weights), "--overwrite")
    assert "state_128_steps.pt" in err  # what to remove to resume from the checkpoint before


def _full_disk_at(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the write of the file called ``name`` fail half-way, as on a full disk."""
    real = atomic.atomic_path

    @contextlib.contextmanager
    def filling(path: str | Path) -> Iterator[Path]:
        with real(path) as tmp:
            if Path(path).name == name:
                tmp.write_bytes(b"half")
                raise OSError(errno.ENOSPC, "No space left on device")
            yield tmp

    monkeypatch.setattr(atomic, "atomic_path", filling)


@pytest.mark.parametrize(
    "name", ["hyperparams.json", "agent_64_steps.safetensors", "state_64_steps.pt", "timing.json"]
)
def test_a_full_disk_while_training_is_a_one_line_error_saying_how_to_continue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    folder = tmp_path / "r"
    _full_disk_at(monkeypatch, name)
    assert main([*TRAIN, "--out", str(folder)]) == 2
    err = _one_line(capsys, name, "No space left on device", "--resume")
    assert str(folder) in err
    assert not list(folder.rglob("*.tmp"))  # the half-written file is gone
    if (folder / "run.json").is_file():  # the invocation's segment says it failed, and why
        last = json.loads((folder / "run.json").read_text())["segments"][-1]
        assert last["status"] == "failed" and "No space left on device" in last["error"]
    monkeypatch.undo()  # room again: the run continues
    assert main([*TRAIN, "--out", str(folder), "--resume"]) == 0
    assert json.loads((folder / "run.json").read_text())["segments"][-1]["status"] == "finished"


def test_a_full_disk_while_appending_to_the_episode_log_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.agents.rl.callbacks import EpisodeMetricsCallback

    def full(self: EpisodeMetricsCallback) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(EpisodeMetricsCallback, "_on_rollout_end", full)
    folder = tmp_path / "r"
    assert main([*TRAIN, "--out", str(folder)]) == 2
    _one_line(capsys, f"writing in {folder}", "No space left on device", "--resume")
    last = json.loads((folder / "run.json").read_text())["segments"][-1]
    assert last["status"] == "failed" and last["error"].startswith("OSError: [Errno 28]")


def test_other_os_errors_in_training_are_not_called_a_full_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.agents.rl.callbacks import EpisodeMetricsCallback
    from hpcgym.errors import OutputError

    real = atomic.atomic_path

    @contextlib.contextmanager
    def refusing(path: str | Path) -> Iterator[Path]:
        if Path(path).name == "timing.json":
            raise OutputError(f"{path} is a folder, not a file: give a file name to write to")
        with real(path) as tmp:
            yield tmp

    monkeypatch.setattr(atomic, "atomic_path", refusing)
    assert main([*TRAIN, "--out", str(tmp_path / "r")]) == 2
    err = _one_line(capsys, "timing.json is a folder")
    assert "training stopped" not in err and "--resume" not in err

    def denied(self: EpisodeMetricsCallback) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(EpisodeMetricsCallback, "_on_rollout_end", denied)
    with pytest.raises(PermissionError):  # not hpcgym's: a traceback, as any unexpected error
        main([*TRAIN, "--out", str(tmp_path / "r2")])


def test_evaluate_into_a_full_device_is_a_one_line_error(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    argv = ["evaluate", "--env", ENV, "--n-jobs", "16", "--episodes", "1", "--policy", str(run)]
    assert main([*argv, "--out", "/dev/full"]) == 2
    _one_line(capsys, "/dev/full")
