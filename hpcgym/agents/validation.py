"""Moved to :mod:`hpcgym.agents.rl.validation` (validation during training).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.validation import *  # noqa: F403  (the compatibility alias of a moved module)
