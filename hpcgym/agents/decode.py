"""Moved to :mod:`hpcgym.agents.rl.decode` (decoding an agent's action).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.decode import *  # noqa: F403  (the compatibility alias of a moved module)
