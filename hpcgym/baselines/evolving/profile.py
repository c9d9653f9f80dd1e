"""Renamed :mod:`hpcgym.baselines.evolving.evolution_profile` (one meaning per file name).

An evolving application's evolution profile lives there; free nodes over time for backfilling
are :mod:`hpcgym.baselines.availability`. This older import path keeps working: it names the
same objects.
"""

from __future__ import annotations

from hpcgym.baselines.evolving.evolution_profile import *  # noqa: F403  (the compatibility alias of a renamed module)
from hpcgym.baselines.evolving.evolution_profile import __all__ as __all__
