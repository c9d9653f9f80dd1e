"""Moved to :mod:`hpcgym.agents.rl.policies` (the job-scoring networks).

This older import path keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.agents.rl.policies import *  # noqa: F403  (the compatibility alias of a moved module)
from hpcgym.agents.rl.policies import __all__ as __all__
