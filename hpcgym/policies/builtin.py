"""Policies written over the action mask alone: ``advance``, ``random``, ``first-fit``, ``fcfs``.

* ``advance`` always chooses *advance* (the env then starts the head job only when the machine
  would otherwise stall, so this is a very lazy FCFS);
* ``random`` is uniform over the legal entries, from a generator seeded with the episode's seed;
* ``first-fit`` starts the first queue slot whose first start level is legal, else advances
  (backfilling without a reservation);
* ``fcfs`` (a menu expert for imitation, :func:`make_expert`) starts queue slot 0 at its first
  start level when legal, else advances: with ``queue_order="fcfs"`` this is FCFS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hpcgym.errors import SpecError
from hpcgym.policies.contract import EnvPolicy
from hpcgym.policies.layout import Blocks, menu_blocks

BUILTIN = ("advance", "random", "first-fit")
"""The built-in env policies, by name."""

EXPERTS = ("fcfs", "first-fit")
"""The menu experts of :func:`make_expert`."""

Expert = Callable[[np.ndarray], int]
"""A menu policy: the action for a mask."""


def _starts(blocks: Blocks) -> np.ndarray:
    offset, slots, levels = blocks["start"]
    return offset + levels * np.arange(slots)


def make_expert(name: str, blocks: Blocks) -> Expert:
    """The menu expert ``name`` (``fcfs`` or ``first-fit``) over a menu layout."""
    starts = _starts(blocks)
    if name == "fcfs":
        head = int(starts[0])
        return lambda mask: head if mask[head] else 0
    if name == "first-fit":

        def first_fit(mask: np.ndarray) -> int:
            legal = starts[mask[starts] == 1]
            return int(legal[0]) if legal.size else 0

        return first_fit
    raise SpecError(f"unknown menu expert {name!r}; choose from {', '.join(EXPERTS)}")


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


class FirstFitPolicy(EnvPolicy):
    """Start the first queued job that fits at its first start level; else advance."""

    def __init__(self) -> None:
        self._act: Expert | None = None

    def bind(self, env: Any) -> None:
        """Read the menu layout."""
        self._act = make_expert("first-fit", menu_blocks(env))

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The expert's action."""
        if self._act is None:
            raise SpecError("FirstFitPolicy.bind(env) first")
        return int(self._act(mask))


def builtin_policy(name: str) -> EnvPolicy:
    """The built-in policy ``name`` (one of :data:`BUILTIN`)."""
    if name == "advance":
        return AdvancePolicy()
    if name == "random":
        return RandomPolicy()
    if name == "first-fit":
        return FirstFitPolicy()
    raise SpecError(f"unknown built-in policy {name!r}; choose from {', '.join(BUILTIN)}")
