"""Moved to :mod:`hpcgym.agents.engine.distill` and :mod:`hpcgym.agents.rl.distill_fit`.

Distilled planners play and are recorded in the first, without torch; fitting them and
``hpcgym distill`` are in the second. This older import path keeps working: it names the same
objects of both, and ``python -m hpcgym.agents.distill`` is an alias of ``hpcgym distill``.
"""

from __future__ import annotations

import sys

from hpcgym.agents.engine.distill import *  # noqa: F403  (the compatibility alias of a moved module)
from hpcgym.agents.rl.distill_fit import *  # noqa: F403
from hpcgym.agents.rl.distill_fit import register
from hpcgym.cli_checks import run_alias

if __name__ == "__main__":  # the older command line: an alias of ``hpcgym distill``
    raise SystemExit(run_alias(register, ["distill", *sys.argv[1:]]))
