"""Policies the benchmark can run, by name: baselines, ``random``, ``advance`` and saved agents.

A policy name is resolved in this order:

* ``advance``: always chooses *advance* (the env then starts the head job only when the machine
  would otherwise stall, so this is a very lazy FCFS);
* ``random``: uniform over the legal entries of the mask, seeded with the episode's seed;
* a name of :func:`hpcgym.baselines.names` (``fcfs``, ``easy``, ``mebf``, ...): an engine
  scheduler, run on the bare engine over exactly the episode the env draws for that seed
  (``hpcgym.baselines`` has no env adapter yet; see :mod:`hpcgym.bench.episode`);
* anything else is the path of an agent saved by ``hpcgym train`` (``.zip`` optional).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.baselines import names as baseline_names
from hpcgym.errors import SpecError

BUILTIN = ("advance", "random")


class EnvPolicy:
    """A policy acting through the env: ``reset(seed)`` per episode, then ``act`` per step."""

    env_overrides: dict[str, Any] = {}  # noqa: RUF012  (read-only; agents set their own)

    def reset(self, seed: int) -> None:
        """Start an episode whose reset seed is ``seed``."""

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The menu entry to take (legal under ``mask``)."""
        raise NotImplementedError


class AdvancePolicy(EnvPolicy):
    """Always *advance*."""

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """Entry 0, always legal."""
        return 0


class RandomPolicy(EnvPolicy):
    """Uniform over the legal entries, from a generator seeded with the episode's seed."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        """Reseed from the episode's seed (so every episode is reproducible on its own)."""
        self._rng = np.random.default_rng([seed, 0x5EED])

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """A legal entry drawn uniformly."""
        legal = np.flatnonzero(mask)
        return int(legal[self._rng.integers(len(legal))])


class AgentPolicy(EnvPolicy):
    """A saved SB3 agent, acting deterministically with the mask applied when it can take one."""

    def __init__(self, path: str | Path) -> None:
        from hpcgym.agents.saved import load_agent

        self.model, self.card = load_agent(path)
        self.env_overrides = dict(self.card.env_kwargs)
        self._masked = self.card.algo == "maskable_ppo"

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The model's deterministic action; an unmasked model's illegal choice becomes advance."""
        if self._masked:
            action, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
            return int(action)
        action, _ = self.model.predict(obs, deterministic=True)
        a = int(action)
        return a if mask[a] else 0


def policy_kind(name: str) -> str:
    """``"builtin"``, ``"baseline"`` or ``"agent"`` (see the module docstring)."""
    if name in BUILTIN:
        return "builtin"
    if name in baseline_names():
        return "baseline"
    if name.endswith(".zip") or Path(name).with_suffix(".zip").is_file():
        return "agent"
    raise SpecError(
        f"unknown policy {name!r}: not advance, random, a baseline "
        f"({', '.join(baseline_names())}) or a saved agent (no {name}.zip)"
    )


def make_env_policy(name: str) -> EnvPolicy:
    """The env policy ``name`` (``advance``, ``random`` or an agent path)."""
    kind = policy_kind(name)
    if kind == "baseline":
        raise SpecError(f"{name!r} is an engine baseline, not an env policy")
    if name == "advance":
        return AdvancePolicy()
    if name == "random":
        return RandomPolicy()
    return AgentPolicy(name)


def policy_label(name: str) -> str:
    """A short name for tables: agents by their file stem."""
    return Path(name).with_suffix("").name if policy_kind(name) == "agent" else name
