"""List scheduling of evolving applications (Klein and Perez).

The paper: "Towards scheduling evolving applications".

- :mod:`~hpcgym.baselines.evolving.evolution_profile`: evolution profiles and their algebra.
- :mod:`~hpcgym.baselines.evolving.fit`: the fit functions (the paper's Algorithm 2).
- :mod:`~hpcgym.baselines.evolving.list_scheduling`: the offline list scheduler and its variants.
- :mod:`~hpcgym.baselines.evolving.online`: the online scheduler that runs a plan on the engine.

Docs: ``docs/baselines-evolving.md``; the paper check: ``docs/papers-evolving.md``.
"""

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile
from hpcgym.baselines.evolving.list_scheduling import VARIANTS, list_schedule
from hpcgym.baselines.evolving.online import EvolvingListScheduler, evolving_factories

__all__ = [
    "VARIANTS",
    "EvolutionProfile",
    "EvolvingListScheduler",
    "evolving_factories",
    "list_schedule",
]
