"""Renamed :mod:`hpcgym.agents.rl.networks` (the SB3 policy networks: one meaning per file name).

This older import path keeps working: it names the same classes, so a model pickled when the
classes lived here loads as before.
"""

from __future__ import annotations

from hpcgym.agents.rl.networks import *  # noqa: F403  (the compatibility alias of a renamed module)
from hpcgym.agents.rl.networks import __all__ as __all__
