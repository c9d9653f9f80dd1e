"""Moved to :mod:`hpcgym.agents.rl.guard` (the training guard on resizes).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.guard import *  # noqa: F403  (the compatibility alias of a moved module)
