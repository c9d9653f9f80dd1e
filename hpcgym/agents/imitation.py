"""Moved to :mod:`hpcgym.agents.rl.imitation` (imitation pre-training).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.imitation import *  # noqa: F403  (the compatibility alias of a moved module)
