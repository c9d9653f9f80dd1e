"""Moved to :mod:`hpcgym.agents.rl.lean_ppo` (the lean MaskablePPO learner).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.lean_ppo import *  # noqa: F403  (the compatibility alias of a moved module)
