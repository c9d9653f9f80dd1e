"""Training instrumentation through SB3 callbacks and a VecEnv wrapper (no custom loops).

* :class:`EpisodeMetricsCallback`: at every finished episode, the env's final ``info["metrics"]``
  (``hpcgym.sim.metrics``) into the SB3 logger (so TensorBoard when configured) and a CSV row.
* :class:`TimedVecEnv`: time spent inside the VecEnv (``reset``, ``step``, and the action
  masks fetched through ``env_method``), so a run can report env time against learner time
  (everything else: inference, rollout buffer, callbacks, updates), in wall and CPU seconds.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from hpcgym.atomic import atomic_path

EPISODE_COLUMNS = (
    "timesteps",
    "env",
    "return",
    "length",
    "truncated",
    "invalid_actions",
    "mean_bsld",
    "mean_wait",
    "utilization",
    "makespan",
    "reconfigurations",
)


class TimedVecEnv(VecEnvWrapper):
    """Accumulates the time spent in the wrapped VecEnv: the env's share of training.

    Timed: ``reset``, ``step_async``, ``step_wait`` (the envs, their wrappers and the VecEnv's
    own work: copies, resets of finished episodes, inter-process traffic) and ``env_method`` /
    ``get_attr`` / ``has_attr`` (MaskablePPO fetches the action masks through ``env_method``
    before every step). Everything else in ``learn`` is the learner: policy forward passes
    during rollouts, the rollout buffer, callbacks and the gradient updates.

    ``env_seconds`` is wall time; ``env_cpu_seconds`` is this process's CPU time (threads
    included), steadier on a shared machine. With ``SubprocVecEnv`` the envs' own CPU time is
    spent in the workers and is not in ``env_cpu_seconds``. ``first_reset_seconds`` is the wall
    time of the first reset (it loads the workload; part of ``env_seconds``).
    """

    def __init__(self, venv: VecEnv) -> None:
        self.venv = venv  # VecEnv.__init__ already asks the envs for attributes
        self.env_seconds = 0.0
        self.env_cpu_seconds = 0.0
        self.first_reset_seconds: float | None = None
        super().__init__(venv)
        self.env_seconds = self.env_cpu_seconds = 0.0

    def _timed(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        self.env_cpu_seconds += time.process_time() - c0
        self.env_seconds += time.perf_counter() - t0
        return out

    def reset(self) -> Any:
        """Reset the envs, timed."""
        t0 = time.perf_counter()
        obs = self._timed(self.venv.reset)
        if self.first_reset_seconds is None:
            self.first_reset_seconds = time.perf_counter() - t0
        return obs

    def step(self, actions: np.ndarray) -> Any:
        """Step the envs, timed once (``step_async`` then ``step_wait``)."""
        return self._timed(self._step, actions)

    def _step(self, actions: np.ndarray) -> Any:
        self.venv.step_async(actions)
        return self.venv.step_wait()

    def step_async(self, actions: np.ndarray) -> None:
        """Send the actions, timed."""
        self._timed(self.venv.step_async, actions)

    def step_wait(self) -> Any:
        """Collect the results, timed."""
        return self._timed(self.venv.step_wait)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of the envs (the action masks, for MaskablePPO), timed."""
        return self._timed(
            self.venv.env_method, method_name, *method_args, indices=indices, **method_kwargs
        )

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """An attribute of the envs, timed."""
        return self._timed(self.venv.get_attr, attr_name, indices)

    def has_attr(self, attr_name: str) -> bool:
        """Whether the envs have ``attr_name``, timed."""
        return bool(self._timed(self.venv.has_attr, attr_name))


class EpisodeMetricsCallback(BaseCallback):
    """Log each finished episode's metrics to the SB3 logger and to ``csv_path``.

    Args:
        csv_path: The CSV file (created, with a header, when training starts).
        resume_at: Training resumes from a checkpoint at this step: the file keeps its rows up
            to that step (later ones were written after the checkpoint, and will be again).
    """

    def __init__(
        self, csv_path: str | Path, verbose: int = 0, resume_at: int | None = None
    ) -> None:
        super().__init__(verbose)
        self.csv_path = Path(csv_path)
        self.resume_at = resume_at
        self._file: TextIO | None = None
        self._writer: Any = None
        self.episodes = 0

    def _kept_rows(self) -> list[list[str]]:
        if self.resume_at is None or not self.csv_path.is_file():
            return []
        with self.csv_path.open(newline="") as f:
            rows = list(csv.reader(f))[1:]
        # Whole rows only: a training killed while appending leaves a cut row at the end.
        whole = [r for r in rows if len(r) == len(EPISODE_COLUMNS) and r[0].isdigit()]
        return [r for r in whole if int(r[0]) <= self.resume_at]

    def _on_training_start(self) -> None:
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        kept = self._kept_rows()
        with atomic_path(self.csv_path) as tmp, tmp.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(EPISODE_COLUMNS)
            writer.writerows(kept)
        self.episodes = len(kept)
        self._file = self.csv_path.open("a", newline="")
        self._writer = csv.writer(self._file)

    def _on_step(self) -> bool:
        infos = self.locals.get("infos", [])
        dones = self.locals.get("dones", np.zeros(len(infos), dtype=bool))
        for i, (info, done) in enumerate(zip(infos, dones, strict=False)):
            if not done or "metrics" not in info:
                continue
            m = info["metrics"]
            ep = info.get("episode", {})
            row = [
                self.num_timesteps,
                i,
                float(ep.get("r", np.nan)),
                int(ep.get("l", 0)),
                bool(info.get("TimeLimit.truncated", False)),
                int(info.get("invalid_actions", 0)),
                *(float(m[k]) for k in EPISODE_COLUMNS[6:]),
            ]
            self._writer.writerow(row)
            for key in EPISODE_COLUMNS[6:]:
                self.logger.record_mean(f"episode/{key}", float(m[key]))
            self.episodes += 1
        return True

    def _on_rollout_end(self) -> None:
        if self._file is not None:
            self._file.flush()

    def _on_training_end(self) -> None:
        self.close()

    def close(self) -> None:
        """Close the CSV file (training ended, or stopped with an error)."""
        if self._file is not None:
            file, self._file = self._file, None
            file.close()


class UpdateTimer(BaseCallback):
    """CPU and wall seconds of the gradient updates: from each rollout's end to the next start.

    (SB3's ``learn`` runs ``train()`` between two rollouts, after logging; the last update runs
    before training ends.) The rest of the learner's time is rollout-side: policy forward
    passes, the rollout buffer and the returns.
    """

    def __init__(self, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self._mark: tuple[float, float] | None = None

    def _close(self) -> None:
        if self._mark is not None:
            self.seconds += time.perf_counter() - self._mark[0]
            self.cpu_seconds += time.process_time() - self._mark[1]
            self._mark = None

    def _on_rollout_start(self) -> None:
        self._close()

    def _on_rollout_end(self) -> None:
        self._mark = (time.perf_counter(), time.process_time())

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self._close()
