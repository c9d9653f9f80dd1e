"""A resize budget per job, so that a learning agent cannot keep the env busy with resizes.

Every resize ends in a reconfiguration-end decision point, and the env's potential-based reward
barely notices a shrink followed by an expand, so an early policy that resizes the same jobs
over and over runs into the step limit, where a truncated episode even looks cheap. The guard
narrows the env's mask, never widens it: a running job that has been reconfigured ``budget``
times can no longer be shrunk or expanded. It reads the count from the observation (the
``running`` block's reconfiguration feature ``c / (c + 1)``), so it needs no state.

The same rule is a training wrapper (:class:`ResizeBudget`) and is applied by saved agents at
evaluation (``hpcgym.agents.rl.env_policy.AgentPolicy``), as the agent's card records.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from hpcgym.policies.layout import Blocks, menu_blocks

RECONFIG_FEATURE = 8
"""Column of ``obs["running"]`` holding ``c / (c + 1)`` for ``c`` reconfigurations."""
_RESIZE_BLOCKS = ("shrink", "expand")


class DecisionGuard:
    """The rule over one menu layout.

    Args:
        blocks: The menu layout (``menu_blocks(env)``).
        budget: Reconfigurations a job may have before its resize entries are masked.
    """

    def __init__(self, blocks: Blocks, budget: int) -> None:
        self.budget = budget
        entries: list[np.ndarray] = []
        for name in _RESIZE_BLOCKS:
            if name in blocks:
                offset, slots, levels = blocks[name]
                entries.append(offset + np.arange(slots * levels).reshape(slots, levels))
        self._entries = np.concatenate(entries, axis=1) if entries else None
        # c / (c + 1) >= budget / (budget + 1), with a margin for float32 rounding.
        self._threshold = budget / (budget + 1.0) - 1e-4
        self._keep: dict[bytes, np.ndarray | None] = {}
        """0/1 factors by the over-budget pattern of the running slots (None: none over)."""

    def restrict(self, mask: np.ndarray, obs: dict[str, np.ndarray]) -> np.ndarray:
        """``mask`` without the resizes of jobs over budget (a new array when changed)."""
        if self._entries is None:
            return mask
        over = obs["running"][:, RECONFIG_FEATURE] >= self._threshold
        key = over.tobytes()
        try:
            keep = self._keep[key]
        except KeyError:
            keep = self._factors(over, mask.size, mask.dtype)
        return mask if keep is None else np.multiply(mask, keep)

    def _factors(self, over: np.ndarray, size: int, dtype: np.dtype[Any]) -> np.ndarray | None:
        assert self._entries is not None
        keep: np.ndarray | None = None
        if over.any():
            keep = np.ones(size, dtype=dtype)
            keep[self._entries[np.flatnonzero(over)].ravel()] = 0
        if len(self._keep) >= 4096:  # bounded: at most 2 ** slots patterns exist
            self._keep.clear()
        self._keep[over.tobytes()] = keep
        return keep


class ResizeBudget(gym.Wrapper[Any, Any, Any, Any]):
    """Training wrapper: ``action_masks()`` and ``info["action_mask"]`` narrowed by the guard."""

    def __init__(self, env: gym.Env[Any, Any], budget: int = 2) -> None:
        super().__init__(env)
        self.guard = DecisionGuard(menu_blocks(env), budget)
        self._mask = np.ones(1, dtype=np.int8)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the env; narrow the first mask."""
        obs, info = self.env.reset(**kwargs)
        self._narrow(obs, info)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env; narrow the next mask."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._narrow(obs, info)
        return obs, reward, terminated, truncated, info

    def _narrow(self, obs: Any, info: dict[str, Any]) -> None:
        self._mask = self.guard.restrict(info["action_mask"], obs)
        info["action_mask"] = self._mask

    def action_masks(self) -> np.ndarray:
        """The narrowed mask (what sb3-contrib's MaskablePPO reads)."""
        return self._mask
