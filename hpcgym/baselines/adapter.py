"""Moved: the baseline adapter is :mod:`hpcgym.policies.adapted` (the policy layer).

This module keeps the old import path working for older code; new code imports
``hpcgym.policies`` (``BaselinePolicy``, ``as_env_policy``, ``rollout``, ...).
"""

from __future__ import annotations

from hpcgym.policies.adapted import *  # noqa: F403  (the compatibility alias of a moved module)
from hpcgym.policies.adapted import __all__ as __all__
