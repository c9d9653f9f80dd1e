"""The ``hpcgym`` command line; each command is added by its own module's ``register``."""

from __future__ import annotations

import argparse
import os
import sys

from hpcgym._version import __version__
from hpcgym.errors import HpcGymError

DESCRIPTION = (
    "Simulate HPC job scheduling, run the published schedulers, train reinforcement-learning\n"
    "agents and benchmark them on the same seeded episodes."
)
EXAMPLES = """examples:
  hpcgym simulate --scheduler easy --workload swf/lublin256-v0
  hpcgym evaluate --env hpcgym/Rigid-v0 --policy fcfs --policy easy
  hpcgym bench                      # the main job: train a small agent, rank it
  hpcgym train --env hpcgym/Malleable-v0 --timesteps 100000
  hpcgym search-score --env-kwargs '{"n_jobs": 256}' --out runs/score
  hpcgym list presets               # what each registry holds (sets, scenarios, ...)
  hpcgym workloads list
  hpcgym papers mebf --quick        # a paper's reproduction check

Run hpcgym COMMAND --help for a command's options."""


def build_parser() -> argparse.ArgumentParser:
    """The parser with every command registered."""
    from hpcgym.agents import cli as agents_cli
    from hpcgym.bench import cli as bench_cli
    from hpcgym.bench.papers import cli as papers_cli
    from hpcgym.workloads import cli as workloads_cli

    parser = argparse.ArgumentParser(
        prog="hpcgym",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"hpcgym {__version__}",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # One register per sub-package with commands: simulate, evaluate, bench, list; train,
    # search-score, write-planners, distill; workloads; papers.
    bench_cli.register(sub)
    agents_cli.register(sub)
    workloads_cli.register(sub)
    papers_cli.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``hpcgym`` with ``argv`` (default: the process arguments); return the exit code."""
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return int(args.func(args))
    except HpcGymError as e:
        print(f"hpcgym: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader left (``hpcgym list | head``): no traceback, and none at exit either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
