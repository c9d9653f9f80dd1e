"""Renamed :mod:`hpcgym.baselines.koala.malleability` (one meaning per file name).

KOALA's malleability management policies, FPSMA and EGS, live there. This older import path
keeps working: it names the same objects.
"""

from __future__ import annotations

from hpcgym.baselines.koala.malleability import *  # noqa: F403  (the compatibility alias of a renamed module)
from hpcgym.baselines.koala.malleability import __all__ as __all__
