"""A training progress bar whose total is the steps that will really run, with episode metrics.

SB3 runs whole rollouts (``n_steps`` per env) or whole collection rounds (``train_freq``), so a
budget of 30,000 steps with rollouts of 1,024 runs 30,720: :func:`planned_timesteps` gives that
number up front and the bar counts to it. After each finished episode the bar shows its mean
bounded slowdown, utilization and return.
"""

from __future__ import annotations

import math
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback


def rollout_steps(model: Any) -> int | None:
    """Timesteps SB3 collects between two updates (``None``: counted in episodes)."""
    n_envs = int(model.n_envs)
    if hasattr(model, "n_steps") and hasattr(model, "rollout_buffer"):
        return int(model.n_steps) * n_envs
    freq = getattr(model, "train_freq", None)
    if freq is not None and str(getattr(freq.unit, "value", freq.unit)) == "step":
        return int(freq.frequency) * n_envs
    return None


def planned_timesteps(model: Any, total: int) -> int:
    """The step count ``model.learn(total)`` reaches from ``model.num_timesteps`` (0 at start).

    ``learn`` stops at the first whole rollout that reaches ``total``; a checkpoint is taken at
    a rollout boundary, so resuming keeps the same count.
    """
    per = rollout_steps(model)
    if per is None:
        return total
    done = int(model.num_timesteps)
    return done + max(0, math.ceil((total - done) / per)) * per


class ProgressBar(BaseCallback):
    """A rich progress bar over the planned steps, the latest episode's metrics on a line below.

    The bar's line keeps its bar, count, elapsed time and ETA at any terminal width (80
    columns included): the episode's metrics, the long part, have a line of their own, cut
    with an ellipsis when the terminal is narrower than they are.

    Args:
        total: The steps the run will reach (:func:`planned_timesteps`).
        description: The bar's label.
        console: Where to draw (default: rich's console on the terminal).
    """

    def __init__(self, total: int, description: str = "training", console: Any = None) -> None:
        super().__init__(0)
        self.total = total
        self.description = description
        self.console = console
        self._progress: Any = None
        self._task: Any = None

    def _on_training_start(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class TwoLines(Progress):
            episode = ""

            def get_renderables(self) -> Any:
                yield self.make_tasks_table(self.tasks)
                if self.episode:
                    yield Text(self.episode, no_wrap=True, overflow="ellipsis")

        self._progress = TwoLines(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            refresh_per_second=4,
            console=self.console,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            self.description, total=self.total, completed=self.num_timesteps
        )

    def _on_step(self) -> bool:
        last = None
        for info, done in zip(
            self.locals.get("infos", []), self.locals.get("dones", []), strict=False
        ):
            if done and "metrics" in info:
                last = info
        if last is not None:
            m, ep = last["metrics"], last.get("episode", {})
            self._progress.episode = (
                f"last episode: bsld {float(m['mean_bsld']):.2f}, "
                f"util {float(m['utilization']):.1%}, return {float(ep.get('r', float('nan'))):.2f}"
            )
        self._progress.update(self._task, completed=self.num_timesteps)
        return True

    def _on_training_end(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.num_timesteps)
            self._progress.stop()
            self._progress = None
