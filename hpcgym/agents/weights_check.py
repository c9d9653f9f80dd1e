"""Moved to :mod:`hpcgym.agents.rl.weights_check` (checking a card against its weights).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.weights_check import *  # noqa: F403  (the compatibility alias of a moved module)
