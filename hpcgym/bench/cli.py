"""The ``bench`` command line: its options and what it runs (the main job or named scenarios).

The work is done by :func:`hpcgym.bench.command.run_bench` and, with no scenario, policy or
recorded run given, by :func:`hpcgym.bench.main_job.main_job`; this module only parses and
dispatches, so neither of those imports the other's caller.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from hpcgym.bench import command, scenarios
from hpcgym.bench.main_job import main_job
from hpcgym.bench.report import JOB_TABLES
from hpcgym.bench.runner import EXECUTORS
from hpcgym.cli_checks import at_least, writable_folder
from hpcgym.errors import SpecError


def run(args: argparse.Namespace) -> int:
    """The ``bench`` command."""
    if args.list:
        from hpcgym.bench.listing import LISTERS, name_table

        print(name_table(LISTERS["scenarios"](), indent=0))
        return 0
    argv = list(args.argv) if args.argv is not None else sys.argv[1:]
    at_least("--workers", args.workers, 1)
    writable_folder(Path(args.run_dir).resolve().parent if args.run_dir else Path(args.out))
    if args.split != "test" and (args.from_run or not args.scenario):
        raise SpecError(
            f"--split {args.split} applies to --scenario runs (the main job and --from run "
            "what they recorded): name the scenarios, e.g. --scenario malleable-small-v2"
        )
    if not args.scenario and not args.policy and not args.from_run:
        return main_job(args, argv)
    if args.timesteps is not None:
        raise SpecError(
            "--timesteps sets the training steps of the main job's agent (hpcgym bench with no "
            "--scenario, --policy or --from); this run trains nothing: drop --timesteps, or "
            "train an agent with hpcgym train --timesteps N and pass it with --policy"
        )
    if args.from_run:
        if args.scenario or args.policy:
            raise SpecError("--from repeats a recorded run: give no --scenario or --policy")
        chosen, policies = command.from_record(args.from_run)
    else:
        names = args.scenario or [scenarios.MAIN]
        chosen = [scenarios.on_split(scenarios.get(n), args.split) for n in names]
        policies = list(args.policy or []) or None
        if policies and args.with_defaults:
            # Each scenario its own policies, then those given (not the first one's for all).
            chosen = [
                dataclasses.replace(sc, policies=tuple(dict.fromkeys([*sc.policies, *policies])))
                for sc in chosen
            ]
            policies = None
    # Looked up on the module when it runs (tests stand in for it there).
    return command.run_bench(chosen, policies, **command.run_options(args, argv))


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this package's commands to ``hpcgym``: simulate, evaluate, bench and list."""
    from hpcgym.bench import evaluate, listing, simulate

    simulate.register(subparsers)
    evaluate.register(subparsers)
    register_bench(subparsers)
    listing.register(subparsers)


def register_bench(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "bench",
        help="benchmark policies on named scenarios; no arguments: the main job "
        "(e.g. hpcgym bench --scenario rigid-lublin-v0)",
        description=command.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--scenario",
        action="append",
        metavar="NAME",
        help="a scenario to run, repeatable; see --list (e.g. --scenario rigid-lublin-v0)",
    )
    p.add_argument(
        "--policy",
        action="append",
        metavar="POLICY",
        help="a policy, repeatable: advance, random, first-fit, a baseline (easy; easy@env acts "
        "through the env), or a saved agent (its run folder, e.g. runs/x); "
        "default: the scenario's own",
    )
    p.add_argument(
        "--with-defaults",
        action="store_true",
        help="run each scenario's own policies as well as those given with --policy",
    )
    p.add_argument(
        "--out",
        default=command.DEFAULT_OUT,
        metavar="DIR",
        help="base folder; each run makes DIR/<scenarios>/<time>-<hash> (default: hpcgym-bench)",
    )
    p.add_argument(
        "--run-dir",
        default=None,
        metavar="DIR",
        help="write into exactly this folder; refused if it exists, unless --resume or --overwrite",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted run, skipping its stored episodes: the --run-dir, or the "
        "newest run of the same configuration under --out",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the bench run already in --run-dir (deletes it first)",
    )
    p.add_argument(
        "--from",
        dest="from_run",
        default=None,
        metavar="RUN_JSON",
        help="repeat the run recorded in a run.json (its scenarios and policies) in a new folder",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="auto",
        help="where episodes run; auto: Ray when a cluster is attached (RAY_ADDRESS or "
        "--ray-address), else a local process pool (e.g. --executor serial)",
    )
    p.add_argument(
        "--workers", type=int, default=2, help="local worker processes (default 2; e.g. 4)"
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="attach to this Ray cluster (e.g. ray://head:10001); default: RAY_ADDRESS if set",
    )
    p.add_argument(
        "--split",
        choices=scenarios.SPLITS,
        default="test",
        help="where the protocol scenarios' episodes come from: their test split (default) or "
        "the validation split (tables named <scenario>@validation; e.g. --split validation)",
    )
    p.add_argument(
        "--job-table",
        choices=JOB_TABLES,
        default="csv",
        help="the one-row-per-job table: jobs.csv (and jobs.parquet with pyarrow; default), "
        "parquet only (about a fifth of the size), or none (large runs; the stored cells keep "
        "every job, and --resume of the finished run writes it later)",
    )
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also run agents saved as SB3 .zip files, which run code they contain: only for "
        "files you trust (hpcgym train saves .safetensors weights plus a JSON card); run.json "
        "records it, and --from or --resume of such a run needs it again",
    )
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress line (it is off anyway when stderr is not a terminal)",
    )
    p.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help="main job only (refused with --scenario, --policy or --from): training steps of "
        "its agent (default 30000; e.g. 100000)",
    )
    p.set_defaults(func=run)
