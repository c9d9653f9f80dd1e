"""Moved to :mod:`hpcgym.agents.engine.order` (linear list-order agents).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.engine.order import *  # noqa: F403  (the compatibility alias of a moved module)
