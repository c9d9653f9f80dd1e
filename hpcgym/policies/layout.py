"""The env's menu layout as policies see it: block name -> offset, slots, levels (no torch here)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

Blocks = dict[str, tuple[int, int, int]]
"""Menu blocks: name -> ``(offset, slots, levels)`` (``hpcgym.envs.menu.ActionMenu.blocks``)."""


def menu_blocks(env: gym.Env[Any, Any]) -> Blocks:
    """The menu layout of an hpcgym env (unwrapped through any wrappers)."""
    menu = env.unwrapped.menu  # type: ignore[attr-defined]
    return {k: (int(a), int(b), int(c)) for k, (a, b, c) in menu.blocks.items()}
