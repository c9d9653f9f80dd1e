"""The ``hpcgym`` commands of the agents package: train, search-score, write-planners, distill.

Each command is declared with its code, by that module's ``register``:

- ``hpcgym train`` (:mod:`hpcgym.agents.rl.train_command`) and ``hpcgym search-score``
  (:mod:`hpcgym.agents.engine.search_command`);
- ``hpcgym write-planners``: planner agent cards (:mod:`hpcgym.agents.engine.lookahead`), one per
  sampling seed, into a sweep folder;
- ``hpcgym distill``: record the planner's choices and fit distilled planners
  (:mod:`hpcgym.agents.rl.distill_fit`), one per seed.

The older command lines of the last two, ``python -m hpcgym.agents.lookahead`` and
``python -m hpcgym.agents.distill``, still work as aliases (``hpcgym.cli_checks.run_alias``);
their errors are the ``hpcgym`` command's: ``hpcgym: error: ...``, exit status 2.
"""

from __future__ import annotations

import argparse

from hpcgym.agents.engine import lookahead, search_command
from hpcgym.agents.rl import distill_fit, train_command


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the agents' commands to the ``hpcgym`` command line."""
    train_command.register(subparsers)
    search_command.register(subparsers)
    lookahead.register(subparsers)
    distill_fit.register(subparsers)
