"""Moved to :mod:`hpcgym.agents.rl.train` (training SB3 agents).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.train import *  # noqa: F403  (the compatibility alias of a moved module)
