"""The ``hpcgym`` command line: each sub-package adds its commands through ``register``."""

from __future__ import annotations

import argparse
import sys

from hpcgym import __version__
from hpcgym.errors import HpcGymError


def build_parser() -> argparse.ArgumentParser:
    """The parser with every command registered."""
    from hpcgym.agents import train
    from hpcgym.bench import command, evaluate, simulate
    from hpcgym.workloads import cli as workloads_cli

    parser = argparse.ArgumentParser(prog="hpcgym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hpcgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    simulate.register(sub)
    evaluate.register(sub)
    command.register(sub)
    train.register(sub)
    workloads_cli.register(sub)
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


if __name__ == "__main__":
    sys.exit(main())
