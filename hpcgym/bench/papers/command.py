"""``hpcgym papers NAME [--quick]``: run one paper's check and print its tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from hpcgym.bench.papers import PAPERS, run_paper, runner
from hpcgym.cli_checks import writable_file


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``papers`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "papers",
        help="run one paper's reproduction check and print its table (docs/papers.md)",
        description="Run one baseline paper's check (the paper's setting, today's choices and "
        "each suspected cause alone) and print its Markdown table with 95% bootstrap "
        "intervals. --quick plays a few windows: its verdicts are previews.",
        epilog="examples:\n  hpcgym papers mebf --quick\n  hpcgym papers sdpolicy --out sd.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", choices=list(PAPERS), metavar="NAME", help=", ".join(PAPERS))
    p.add_argument(
        "--quick", action="store_true", help="a small sample (a few minutes), not the full check"
    )
    p.add_argument("--out", type=Path, default=None, help="also write the tables to this file")
    p.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    runner(args.name)  # refuses a paper without a runner before any check of --out
    out = writable_file(args.out) if args.out is not None else None
    text = run_paper(args.name, args.quick, out)
    print(text)
    return 0
