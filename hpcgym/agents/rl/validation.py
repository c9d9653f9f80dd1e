"""Validation during training: a learning curve on the validation split, and the best agent kept.

Every ``every`` steps (at the first rollout boundary at or after each multiple), the current
policy plays ``episodes`` episodes of the training preset on its *validation* split (the env's
``split="validation"``; training uses ``"train"``), always the same reset seeds,
deterministically under the card's decoding (``hpcgym.agents.rl.decode``: greedy unless the run
set ``decode=kind``) and masked. The episode objective is minus the episode's return (the
rewards of a finished episode sum to minus it), so lower is better. Each evaluation appends a
row to ``validation.csv`` and redraws ``learning_curve.png``; when its mean objective is the best
so far the agent is saved as ``best`` (``best.safetensors`` and ``best.json``) beside the final
agent.

Evaluating neither draws from the training generators nor changes the model, so a run with
validation trains exactly the same agent as one without. On ``--resume`` the rows after the
checkpoint are dropped and played again: the same steps give the same rows and the same best.
"""

from __future__ import annotations

import csv
import inspect
import io
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from hpcgym import atomic
from hpcgym.agents.rl.decode import agent_action, sample_rng
from hpcgym.agents.rl.saved import AgentCard, save_agent
from hpcgym.envs.episodes import disjoint_starts
from hpcgym.errors import SpecError
from hpcgym.policies.layout import menu_blocks

VALIDATION_SEEDS = 30_000
"""Validation episodes use reset seeds from here (away from training, demo and bench seeds)."""

EVAL_WINDOWS = ("random", "disjoint")
"""How validation draws its episodes (see :class:`ValidationCallback`)."""

COLUMNS = ("timesteps", "episodes", "mean_objective", "iqm_objective", "best", "truncated")


class ValidationCallback(BaseCallback):
    """Evaluate on the validation split every ``every`` steps; keep the curve and the best agent.

    Args:
        env_id: The training preset.
        env_kwargs: The training env's arguments (``split`` is replaced by ``"validation"``).
        every: Steps between evaluations (rounded up to whole rollouts).
        episodes: Episodes per evaluation.
        run_dir: Where ``validation.csv``, ``learning_curve.png`` and ``best.*`` go.
        card: The agent's card (the best agent is saved with it).
        resume_at: The checkpoint step a resumed run continues from (``None``: a new run).
        windows: ``"random"``: ``episodes`` episodes drawn by seed; ``"disjoint"``: every
            disjoint window of the validation split, each once (``episodes`` is not used), as
            a judged scenario's validation run plays them. Random windows over-weight a
            split's busiest stretches when the windows are short (docs/results.md,
            "Pre-registered tests of new agents").

    Raises:
        SpecError: ``windows`` is unknown, or ``"disjoint"`` for episodes that are not windows
            of a trace.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        every: int,
        episodes: int,
        run_dir: Path,
        card: AgentCard,
        resume_at: int | None = None,
        windows: str = "random",
    ) -> None:
        super().__init__()
        if every <= 0 or episodes <= 0:
            raise ValueError("validation needs every > 0 and episodes > 0")
        if windows not in EVAL_WINDOWS:
            raise SpecError(f"unknown validation windows {windows!r}; choose from random, disjoint")
        self.env_id = env_id
        self.env_kwargs = {**dict(env_kwargs), "split": "validation"}
        self.every = every
        self.starts: tuple[int, ...] | None = None
        if windows == "disjoint":
            self.starts = disjoint_starts(env_id, self.env_kwargs)
        self.episodes = episodes if self.starts is None else len(self.starts)
        self.run_dir = run_dir
        self.card = card
        self.csv = run_dir / "validation.csv"
        self.rows: list[dict[str, Any]] = []
        if resume_at is not None and self.csv.is_file():
            with self.csv.open() as f:
                self.rows = [r for r in csv.DictReader(f) if int(r["timesteps"]) <= resume_at]
        self.best = min((float(r["mean_objective"]) for r in self.rows), default=np.inf)
        self._next = (int(self.rows[-1]["timesteps"]) if self.rows else 0) + every
        self._env: Any = None

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        if self.num_timesteps >= self._next:
            self.evaluate()
            while self._next <= self.num_timesteps:
                self._next += self.every

    def _on_training_end(self) -> None:
        if not self.rows or int(self.rows[-1]["timesteps"]) < self.num_timesteps:
            self.evaluate()
        if self._env is not None:
            self._env.close()

    def objectives(self) -> tuple[np.ndarray, int]:
        """The current policy's objective on each validation episode, and how many truncated."""
        import gymnasium as gym

        if self._env is None:
            self._env = gym.make(self.env_id, **self.env_kwargs)
        env = self._env
        predict: Any = self.model.predict  # MaskablePPO's takes the masks, plain SB3's not
        masked = "action_masks" in inspect.signature(predict).parameters
        blocks = menu_blocks(env)
        out, truncated = [], 0
        for k in range(self.episodes):
            options = None if self.starts is None else {"start": self.starts[k]}
            obs, _ = env.reset(seed=VALIDATION_SEEDS + k, options=options)
            rng = sample_rng(VALIDATION_SEEDS + k)  # only sample decoding draws from it
            total, done = 0.0, False
            while not done:
                mask = env.unwrapped.action_masks() if masked else None
                action = agent_action(self.model, obs, mask, self.card.decode, blocks, rng)
                obs, reward, term, trunc, _ = env.step(action)
                total += float(reward)
                done = term or trunc
            truncated += int(trunc and not term)
            out.append(-total)
        return np.asarray(out), truncated

    def evaluate(self) -> None:
        """One evaluation: a row, the curve, and the agent if it is the best so far."""
        from scipy import stats

        values, truncated = self.objectives()
        mean = float(values.mean())
        best = mean < self.best and truncated == 0
        if best:
            self.best = mean
            card = replace(self.card, timesteps=self.num_timesteps)
            save_agent(self.model, card, self.run_dir / "best")
        self.rows.append(
            {
                "timesteps": self.num_timesteps,
                "episodes": len(values),
                "mean_objective": round(mean, 6),
                "iqm_objective": round(float(stats.trim_mean(values, 0.25)), 6),
                "best": int(best),
                "truncated": truncated,
            }
        )
        self.logger.record("validation/mean_objective", mean)
        self._write()

    def _write(self) -> None:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        atomic.write_text(self.csv, buf.getvalue())
        plot_curve(self.rows, self.run_dir / "learning_curve.png", self.env_id)


LOG_SCALE_SPAN = 20.0
"""A curve whose values span more than this factor is drawn on a log scale."""


def set_objective_scale(ax: Any, values: list[float]) -> None:
    """A log y axis when the (positive) objective values span more than :data:`LOG_SCALE_SPAN`.

    One diverging seed (a validation mean of thousands beside others near 10) would otherwise
    flatten every other curve to a line along the axis.
    """
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) > LOG_SCALE_SPAN * min(positive):
        ax.set_yscale("log")


def plot_curve(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    """The validation objective against training steps, best points marked (written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [int(r["timesteps"]) for r in rows]
    mean = [float(r["mean_objective"]) for r in rows]
    iqm = [float(r["iqm_objective"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, mean, marker="o", label="mean")
    ax.plot(steps, iqm, marker=".", linestyle="--", label="IQM")
    best = [(s, m) for s, m, r in zip(steps, mean, rows, strict=True) if int(r["best"])]
    if best:
        xs, ys = zip(*best, strict=True)
        ax.scatter(xs, ys, s=80, facecolors="none", edgecolors="k", label="best")
    set_objective_scale(ax, mean + iqm)
    ax.set_xlabel("training steps")
    ax.set_ylabel("validation objective (lower is better)")
    ax.set_title(f"{title}: validation split")
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic.write_bytes(path, buf.getvalue())
