"""Moved to :mod:`hpcgym.agents.engine.lookahead` (the planner).

This older import path keeps working: it names the same objects, and
``python -m hpcgym.agents.lookahead`` is an alias of ``hpcgym write-planners``.
"""

from __future__ import annotations

import sys

from hpcgym.agents.engine.lookahead import *  # noqa: F403  (the compatibility alias of a moved module)
from hpcgym.agents.engine.lookahead import register
from hpcgym.cli_checks import run_alias

if __name__ == "__main__":  # the older command line: an alias of ``hpcgym write-planners``
    raise SystemExit(run_alias(register, ["write-planners", *sys.argv[1:]]))
