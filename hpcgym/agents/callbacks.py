"""Training instrumentation through SB3 callbacks and a VecEnv wrapper (no custom loops).

* :class:`EpisodeMetricsCallback`: at every finished episode, the env's final ``info["metrics"]``
  (``hpcgym.sim.metrics``) into the SB3 logger (so TensorBoard when configured) and a CSV row.
* :class:`TimedVecEnv`: wall time spent inside the envs (``reset`` and ``step``), so a run can
  report env time against learner time (everything else: inference, updates, callbacks).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

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
    """Accumulates the wall seconds spent in the wrapped VecEnv's ``reset`` and ``step``."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.env_seconds = 0.0

    def reset(self) -> Any:
        """Reset the envs, timed."""
        t0 = time.perf_counter()
        obs = self.venv.reset()
        self.env_seconds += time.perf_counter() - t0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Send the actions, timed."""
        t0 = time.perf_counter()
        self.venv.step_async(actions)
        self.env_seconds += time.perf_counter() - t0

    def step_wait(self) -> Any:
        """Collect the results, timed."""
        t0 = time.perf_counter()
        out = self.venv.step_wait()
        self.env_seconds += time.perf_counter() - t0
        return out


class EpisodeMetricsCallback(BaseCallback):
    """Log each finished episode's metrics to the SB3 logger and to ``csv_path``.

    Args:
        csv_path: The CSV file (created, with a header, when training starts).
    """

    def __init__(self, csv_path: str | Path, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.csv_path = Path(csv_path)
        self._file: TextIO | None = None
        self._writer: Any = None
        self.episodes = 0

    def _on_training_start(self) -> None:
        self.csv_path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.csv_path.open("w", newline="")
        self._writer = csv.writer(self._file)
        self._writer.writerow(EPISODE_COLUMNS)

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
        if self._file is not None:
            self._file.close()
            self._file = None
