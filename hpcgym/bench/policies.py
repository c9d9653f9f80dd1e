"""Renamed :mod:`hpcgym.bench.policy_names` (one meaning per file name).

The resolver of the policy names given on the command line lives there. This older import path
keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.bench.policy_names import *  # noqa: F403  (the compatibility alias of a renamed module)
from hpcgym.bench.policy_names import __all__ as __all__
