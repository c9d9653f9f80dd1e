"""The agent tests need the ``rl`` extra (torch, SB3, sb3-contrib) and pyyaml."""

from __future__ import annotations

import importlib.util

_NEEDED = ("torch", "stable_baselines3", "sb3_contrib", "yaml")
collect_ignore_glob = (
    [] if all(importlib.util.find_spec(m) is not None for m in _NEEDED) else ["test_*.py"]
)
