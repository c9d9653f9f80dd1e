"""MEBF: malleable EASY backfilling (the MEBF paper; ``docs/papers.md``, "MEBF").

The scheduler, its configuration and the scalability classes are in
:mod:`hpcgym.baselines.mebf.scheduler`. Docs: ``docs/baselines.md`` (MEBF) for the rules and
choices, ``docs/papers.md`` for the paper check.
"""

from hpcgym.baselines.mebf.scheduler import MEBF, MEBFConfig, scalability

__all__ = ["MEBF", "MEBFConfig", "scalability"]
