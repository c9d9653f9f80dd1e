"""Moved to :mod:`hpcgym.agents.rl.env_policy` (SB3 agents as env policies).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.env_policy import *  # noqa: F403  (the compatibility alias of a moved module)
