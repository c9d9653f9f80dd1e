"""hpcgym: scheduling rigid, moldable, malleable and evolving HPC jobs, as a Gymnasium env."""

from hpcgym._build import compiled, warn_if_stale

warn_if_stale()

import hpcgym.envs  # noqa: E402, F401  (registers the hpcgym/* environment ids)

__all__ = ["compiled"]

__version__ = "0.1.0"
