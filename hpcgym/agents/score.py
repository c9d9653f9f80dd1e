"""Moved to :mod:`hpcgym.agents.engine.score` (linear job-scoring agents).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.engine.score import *  # noqa: F403  (the compatibility alias of a moved module)
