"""Moved to :mod:`hpcgym.agents.rl.networks` (the job-scoring networks).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.networks import *  # noqa: F403  (the compatibility alias of a moved module)
from hpcgym.agents.rl.networks import __all__ as __all__
