"""Moved to :mod:`hpcgym.agents.rl.checkpoint` (training checkpoints).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.checkpoint import *  # noqa: F403  (the compatibility alias of a moved module)
