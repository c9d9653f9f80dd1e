"""``hpcgym papers NAME [options]``: run one paper's check and print its tables.

Every paper check is one sub-command of ``hpcgym papers`` and every choice it offers is a
flag declared here (no check has a command line of its own, and declaring the flags here keeps
``hpcgym --help`` from importing the checks). A check's module runs a parsed command with
``command(args) -> str`` (its report, also written to ``--out``) when it defines one, else
``run(quick, out)`` (:mod:`hpcgym.bench.papers`).

The old command lines ``python -m hpcgym.bench.papers.NAME [options]`` still work: each is
``hpcgym papers NAME`` (with ``--experiments`` for mebf, sdpolicy and dfrs, whose scripts ran
the paper's experiments by default), through :func:`alias`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

from hpcgym.bench.papers import PAPERS, SUMMARIES, runner
from hpcgym.cli_checks import run_alias, writable_file

EXPERIMENTS = "run the paper's experiments instead of the check (the ablation)"


def _mebf(p: argparse.ArgumentParser) -> None:
    p.add_argument("--experiments", action="store_true", help=EXPERIMENTS)
    p.add_argument(
        "--seeds-1k", type=int, default=5, help="with --experiments: 1,000-job windows per setting"
    )
    p.add_argument(
        "--seeds-5k", type=int, default=2, help="with --experiments: 5,000-job windows per setting"
    )
    p.add_argument(
        "--only",
        nargs="+",
        metavar="EXPERIMENT",
        help="with --experiments: run only these experiments ('ablation' adds the ablation)",
    )
    p.add_argument(
        "--ablation-windows",
        type=int,
        default=None,
        help="with --experiments --only ablation: the ablation's windows (20)",
    )
    p.add_argument("--workers", type=int, default=2, help="parallel simulations")
    p.add_argument("--csv", default=None, help="also write every run's record here")
    p.add_argument(
        "--from-csv", nargs="+", metavar="CSV", help="only tabulate records written by --csv"
    )


def _sdpolicy(p: argparse.ArgumentParser) -> None:
    p.add_argument("--experiments", action="store_true", help=EXPERIMENTS)
    p.add_argument("--windows", type=int, default=3, help="with --experiments: CEA-Curie windows")
    p.add_argument(
        "--days", type=float, default=None, help="days per CEA-Curie window (6; --quick: 1)"
    )
    p.add_argument("--kth-windows", type=int, default=3, help="with --experiments: KTH windows")
    p.add_argument(
        "--kth-jobs", type=int, default=3000, help="with --experiments: jobs per KTH window"
    )
    p.add_argument(
        "--malleable",
        type=float,
        default=1.0,
        help="with --experiments: fraction of malleable jobs",
    )
    p.add_argument(
        "--ideal", action="store_true", help="with --experiments: also DynAVGSD, ideal model"
    )
    p.add_argument(
        "--variants", nargs="*", default=None, help="with --experiments: the variants to run"
    )
    p.add_argument(
        "--ablation",
        nargs="*",
        default=None,
        metavar="SETTING",
        help="the ablation (the check) on these settings only (none given: all); wins over "
        "--experiments",
    )
    p.add_argument(
        "--step", type=float, default=None, help="ablation: days between windows (1; --quick: 6)"
    )
    p.add_argument(
        "--last-start",
        type=float,
        default=None,
        help="ablation: the last window's start day (every day that fits; --quick: 18)",
    )
    p.add_argument(
        "--window-index", type=int, nargs="+", default=None, help="ablation: only these windows"
    )
    p.add_argument("--workers", type=int, default=2, help="parallel simulations")
    p.add_argument("--csv", default=None, help="also write every run's record here")
    p.add_argument(
        "--from-csv", nargs="+", metavar="CSV", help="only tabulate records written by --csv"
    )


def _koala(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", type=int, default=None, help="seeds per cell (30; --quick: 6)")
    p.add_argument("--csv", default=None, help="also write every run's row here")


def _dfrs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--experiments", action="store_true", help=EXPERIMENTS)
    p.add_argument(
        "--ablation",
        action="store_true",
        help="the ablation with intervals, the check (the default; wins over --experiments, "
        "and writes the rows file only with --rows)",
    )
    p.add_argument(
        "--rows",
        default=None,
        help="ablation: keep every finished case's row in this CSV and skip the cases it holds "
        "(a stopped run resumes; default: beside --out)",
    )
    p.add_argument("--jobs", type=int, default=300, help="with --experiments: jobs per trace")
    p.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="with --experiments: trace seeds"
    )
    p.add_argument(
        "--loads",
        type=float,
        nargs="+",
        default=[0.1, 0.3, 0.5, 0.7, 0.9],
        help="with --experiments: offered loads",
    )
    p.add_argument(
        "--algorithms", nargs="+", default=None, help="with --experiments: the algorithms"
    )
    p.add_argument(
        "--zero-penalty",
        nargs="*",
        default=None,
        help="with --experiments: the algorithms also run without a rescheduling penalty",
    )
    p.add_argument(
        "--hpc2n",
        type=int,
        nargs="*",
        default=None,
        help="with --experiments: these HPC2N weeks instead of generated traces",
    )
    p.add_argument(
        "--period", type=float, default=600.0, help="with --experiments: DFRS period (600 s)"
    )
    p.add_argument("--workers", type=int, default=2, help="parallel simulations")
    p.add_argument("--csv", default=None, help="also write every run's row here")
    p.add_argument(
        "--from-csv",
        nargs="+",
        metavar="CSV",
        default=None,
        help="the experiments' tables from finished runs' CSVs (no run)",
    )


def _rlscheduler(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", default=None, help="SWF file (default: lublin_256.swf.gz)")
    p.add_argument("--count", type=int, default=None, help="published sequences (10)")
    p.add_argument("--more", type=int, default=100, help="sequences for the last column")
    p.add_argument("--seed", type=int, default=None, help="the sequences' draw (1)")
    p.add_argument("--length", type=int, default=None, help="jobs per sequence (1,024)")
    p.add_argument("--event-order", action="store_true", help="add the event-order model")


def _evolving(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cases", type=int, default=1000, help="generated test cases")
    p.add_argument("--online", type=int, default=200, help="cases also run in the engine")
    p.add_argument("--literal", action="store_true", help="add the paper's literal model")
    p.add_argument("--workers", type=int, default=2, help="parallel cases")
    p.add_argument("--csv", default=None, help="write every row to this CSV")
    p.add_argument("--from-csv", default=None, help="report on rows saved by --csv; no runs")


OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "mebf": _mebf,
    "sdpolicy": _sdpolicy,
    "koala": _koala,
    "dfrs": _dfrs,
    "rlscheduler": _rlscheduler,
    "evolving": _evolving,
}
"""Each paper check's own flags (besides ``--quick`` and ``--out``)."""

EXAMPLES: dict[str, tuple[str, ...]] = {
    "mebf": ("--quick", "--experiments --csv runs.csv --out tables.md"),
    "sdpolicy": ("--quick", "--experiments --windows 4 --days 6 --ideal"),
    "koala": ("--quick", "--seeds 30 --out koala.md"),
    "dfrs": ("--quick", "--out dfrs.md", "--experiments --jobs 300 --seeds 0 1"),
    "rlscheduler": ("--event-order", "--more 100 --out table.md"),
    "evolving": (
        "--cases 1000 --online 250 --literal --csv evolving.csv",
        "--from-csv evolving.csv",
    ),
}
"""Example command lines of each check, shown by ``hpcgym papers NAME --help``."""

ALIAS_FLAGS: dict[str, tuple[str, ...]] = {
    "mebf": ("--experiments",),
    "sdpolicy": ("--experiments",),
    "dfrs": ("--experiments",),
}
"""What ``python -m hpcgym.bench.papers.NAME`` adds: its script's default was the experiments."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``papers`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "papers",
        help="run one paper's reproduction check and print its table (docs/papers.md)",
        description="Run one baseline paper's check (the paper's setting, today's choices and "
        "each suspected cause alone) and print its Markdown table with 95% bootstrap "
        "intervals. --quick plays a few windows: its verdicts are previews. Run hpcgym papers "
        "NAME --help for a check's options.",
        epilog="examples:\n  hpcgym papers mebf --quick\n  hpcgym papers sdpolicy --out sd.md\n"
        "  hpcgym papers rlscheduler --event-order",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="name", required=True, metavar="NAME", help=", ".join(PAPERS))
    for name in PAPERS:
        examples = "".join(f"\n  hpcgym papers {name} {e}" for e in EXAMPLES.get(name, ()))
        q = sub.add_parser(
            name,
            help=SUMMARIES.get(name, name),
            description=textwrap.fill(SUMMARIES.get(name, name), 79),
            epilog=f"examples:{examples}" if examples else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        q.add_argument(
            "--quick",
            action="store_true",
            help="a small sample (a few minutes), not the full check",
        )
        q.add_argument("--out", type=Path, default=None, help="also write the tables to this file")
        OPTIONS.get(name, lambda _: None)(q)
        q.set_defaults(func=_main)


def _main(args: argparse.Namespace) -> int:
    module_name = PAPERS[args.name]
    command = getattr(importlib.import_module(module_name), "command", None)
    if command is None:
        runner(args.name)  # refuses a paper without a runner before any check of --out
    out = writable_file(args.out) if args.out is not None else None
    args.out = out
    text = command(args) if command is not None else runner(args.name)(args.quick, out)
    print(text)
    return 0


def alias(name: str, argv: Sequence[str] | None = None) -> int:
    """``python -m hpcgym.bench.papers.NAME ARGS``: ``hpcgym papers NAME ARGS`` (see module doc).

    Errors as the ``hpcgym`` command's: ``hpcgym: error: ...``, exit status 2.
    """
    rest = list(sys.argv[1:] if argv is None else argv)
    return run_alias(register, ["papers", name, *ALIAS_FLAGS.get(name, ()), *rest])
