"""Renamed :mod:`hpcgym.baselines.availability` (one meaning per file name).

Availability profiles for backfilling live there; an evolving application's profile is
:mod:`hpcgym.baselines.evolving.evolution_profile`. This older import path keeps working: it
names the same objects (once compiled, it is pure Python now: ``FORMERLY_COMPILED``).
"""

from __future__ import annotations

from hpcgym.baselines.availability import *  # noqa: F403  (the compatibility alias of a renamed module)
from hpcgym.baselines.availability import __all__ as __all__
