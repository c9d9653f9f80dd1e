"""Moved to :mod:`hpcgym.agents.rl.reference` (rewards relative to a baseline).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.reference import *  # noqa: F403  (the compatibility alias of a moved module)
