"""hpcgym: scheduling rigid, moldable, malleable and evolving HPC jobs, as a Gymnasium env."""

import hpcgym.envs  # noqa: F401  (registers the hpcgym/* environment ids)

__version__ = "0.1.0"
