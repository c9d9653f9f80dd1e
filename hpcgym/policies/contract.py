"""The one contract every policy acting on an hpcgym env follows.

A policy is bound to an env once, told each episode's reset seed, and asked for one menu index
per step given the observation and the action mask. Whatever produces the decision (a built-in
rule, an engine baseline through the adapter, a saved SB3 agent), the benchmark, ``hpcgym
evaluate`` and imitation run it through these three calls only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

EPISODE_KEYS = frozenset(
    {"workload", "workload_options", "workload_seed", "episode", "n_jobs", "n_seeds"}
    | {"platform", "cores", "kill_on_walltime", "max_steps", "split", "window_starts"}
)
"""Env arguments that choose the episode: a policy's ``env_overrides`` never set these from an
agent's card (an agent trained on the train split is evaluated on the scenario's split, the test
split); a baseline's own setting may (MEBF runs without walltime kills)."""


class EnvPolicy:
    """A policy acting through the env: ``bind``, then per episode ``reset`` and ``act`` per step.

    ``bind(env)`` once, ``reset(seed)`` per episode, then ``act(obs, mask)`` per step.
    ``env_overrides`` are the env arguments the policy needs (a baseline's menu levels, an
    agent's observation encoding); whoever makes the env applies them over the scenario's.
    """

    env_overrides: dict[str, Any] = {}  # noqa: RUF012  (read-only; subclasses set their own)

    def bind(self, env: Any) -> None:
        """Check ``env`` suits the policy (called once, before the first reset)."""

    def reset(self, seed: int) -> None:
        """Start an episode whose reset seed is ``seed``."""

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The menu entry to take (legal under ``mask``)."""
        raise NotImplementedError
