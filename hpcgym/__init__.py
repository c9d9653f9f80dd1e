"""hpcgym: scheduling rigid, moldable, malleable and evolving HPC jobs, as a Gymnasium env.

``import hpcgym`` is light: it registers the ``hpcgym/*`` env ids with Gymnasium and loads
nothing else (no pandas, no workload set, no env). The simulator (``hpcgym.sim``) never loads
Gymnasium; when Gymnasium is not imported yet, the ids are registered the moment it is
(:mod:`hpcgym._registration_hook`), so ``gym.make("hpcgym/Rigid-v0")`` works in either order.
"""

from hpcgym._build import compiled, warn_if_stale
from hpcgym._registration_hook import register_when_gymnasium_loads
from hpcgym._version import __version__

warn_if_stale()
register_when_gymnasium_loads()

__all__ = ["__version__", "compiled"]
