"""Worker processes of ``--vec-env subproc`` cannot hang training or its end (issue 39).

SB3's ``SubprocVecEnv.close`` joined its workers without a timeout: after a worker died it
raised ``BrokenPipeError`` and left the others running, and a worker that does not answer
made it wait forever. :class:`~hpcgym.agents.rl.vec.GuardedSubprocVecEnv` ends them all. No
wall-clock assertion: ``close`` runs in a thread joined with a generous bound; a hang shows as
that thread (and the workers) still alive.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
from stable_baselines3.common.env_util import make_vec_env

import hpcgym  # noqa: F401  (registers the presets)
from hpcgym.agents.rl import vec
from hpcgym.cli import main
from hpcgym.errors import WorkerError

BOUND = 120.0
"""Seconds the test waits for ``close``: far more than its own bound (1 s, then 2 s grace)."""


def _venv(n: int) -> vec.GuardedSubprocVecEnv:
    venv = make_vec_env(
        "hpcgym:hpcgym/Rigid-v0",
        n_envs=n,
        seed=0,
        env_kwargs={"n_jobs": 16},
        vec_env_cls=vec.GuardedSubprocVecEnv,
    )
    assert isinstance(venv, vec.GuardedSubprocVecEnv)
    venv.close_timeout = 1.0
    return venv


def _closes(venv: vec.GuardedSubprocVecEnv) -> list[BaseException]:
    """Close ``venv`` in a thread; the errors it raised (a hang fails the test)."""
    raised: list[BaseException] = []

    def close() -> None:
        try:
            venv.close()
        except BaseException as e:
            raised.append(e)

    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(BOUND)
    try:
        assert not thread.is_alive(), "close() hangs"
    finally:
        for p in venv.processes:  # never leave a worker behind, even when the test fails
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signal.SIGKILL)
    return raised


def test_close_ends_every_worker_after_one_died_and_one_stopped_answering() -> None:
    venv = _venv(3)
    venv.reset()
    dead, stopped, fine = venv.processes
    venv.step_async(np.zeros(3, dtype=np.int64))  # mid-step: answers are due first
    os.kill(dead.pid, signal.SIGKILL)  # type: ignore[arg-type]
    dead.join(BOUND)
    os.kill(stopped.pid, signal.SIGSTOP)  # type: ignore[arg-type]
    assert _closes(venv) == []
    assert [p.is_alive() for p in venv.processes] == [False, False, False]
    assert fine.exitcode == 0  # the healthy one was asked to close, and did
    assert venv.closed and all(r.closed for r in venv.remotes)
    venv.close()  # again: nothing to do


def test_a_worker_that_died_is_a_worker_error_naming_it() -> None:
    venv = _venv(2)
    venv.reset()
    victim = venv.processes[1]
    os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
    victim.join(BOUND)
    with pytest.raises(WorkerError, match=rf"env 1, pid {victim.pid}: killed by SIGKILL"):
        venv.step(np.zeros(2, dtype=np.int64))
    assert _closes(venv) == []
    assert not any(p.is_alive() for p in venv.processes)


def test_train_with_a_killed_worker_is_a_one_line_error_and_ends_its_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[vec.GuardedSubprocVecEnv] = []
    real_wait = vec.GuardedSubprocVecEnv.step_wait

    def step_wait(self: vec.GuardedSubprocVecEnv) -> object:
        if not made:
            made.append(self)
            os.kill(self.processes[0].pid, signal.SIGKILL)  # type: ignore[arg-type]
        return real_wait(self)

    monkeypatch.setattr(vec.GuardedSubprocVecEnv, "step_wait", step_wait)
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "64", "--subproc"]
    argv += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=32", "--hp", "batch_size=32"]
    argv += ["--tensorboard", "", "--eval-every", "0", "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: an env worker process") and err.count("\n") == 1, err
    assert "killed by SIGKILL" in err
    (venv,) = made
    assert venv.closed and not any(p.is_alive() for p in venv.processes)
