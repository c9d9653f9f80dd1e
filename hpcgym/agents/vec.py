"""Moved to :mod:`hpcgym.agents.rl.vec` (vectorised envs for training).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.vec import *  # noqa: F403  (the compatibility alias of a moved module)
