"""hpcgym: scheduling rigid, moldable, malleable and evolving HPC jobs, as a Gymnasium env."""

__version__ = "0.1.0"

import hpcgym.envs  # noqa: E402,F401  (registers the hpcgym/* environment ids)
