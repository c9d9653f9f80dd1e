"""hpcgym: HPC job scheduling with rigid, moldable, malleable and evolving jobs, as a Gymnasium env."""

__version__ = "0.1.0"
