"""``hpcgym bench``: every selected policy on every episode of the selected scenarios.

With no arguments it runs the main job (:mod:`hpcgym.bench.main_job`): the default scenario with
the baselines and a small MaskablePPO agent trained in the same command.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hpcgym.bench import scenarios
from hpcgym.bench.report import terminal, write_report
from hpcgym.bench.runner import EXECUTORS, execute, plan, ray_available
from hpcgym.cli_checks import at_least, writable_folder


def run_bench(
    names: list[str],
    policies: list[str] | None,
    out: Path,
    executor: str = "auto",
    workers: int = 2,
) -> int:
    """Run, write the report into ``out``, print the leaderboard and where everything is."""
    chosen = [scenarios.get(n) for n in names]
    tasks = plan(chosen, policies)
    if executor == "auto":
        executor = "ray" if ray_available() else "process"
    t0 = time.perf_counter()
    outcomes = execute(tasks, executor, workers)
    elapsed = time.perf_counter() - t0
    metrics = {sc.name: sc.metric for sc in chosen}
    board, written = write_report(outcomes, out, "hpcgym bench: " + ", ".join(names), metrics)
    print(f"{len(tasks)} episodes in {elapsed:.1f} s ({executor}, {workers} workers)")
    print(terminal(board))
    print(f"results, leaderboard and plots: {out.resolve()}")
    plots = [p for p in written if p.suffix == ".png"]
    if plots:
        print(f"plots ({len(plots)}): {plots[0].parent.resolve()}")
    return 0


def run(args: argparse.Namespace) -> int:
    """The ``bench`` command."""
    if args.list:
        for name in scenarios.names():
            sc = scenarios.get(name)
            print(f"{name:<22} {sc.env_id:<24} {len(sc.seeds):>3} episodes  {sc.description}")
        return 0
    at_least("--workers", args.workers, 1)
    if not args.scenario and not args.policy:
        from hpcgym.bench.main_job import main_job

        writable_folder(Path(args.out) if args.out else Path("hpcgym-bench") / "main")
        return main_job(args)
    names = args.scenario or [scenarios.MAIN]
    policies = list(args.policy or [])
    if policies and args.with_defaults:
        policies = [*scenarios.get(names[0]).policies, *policies]
    out = Path(args.out) if args.out else Path("hpcgym-bench") / "-".join(names)
    writable_folder(out)
    return run_bench(names, policies or None, out, args.executor, args.workers)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "bench",
        help="benchmark policies on named scenarios (no arguments: the main job)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--scenario", action="append", help="scenario name (repeatable; see --list)")
    p.add_argument(
        "--policy",
        action="append",
        help="policy: advance, random, a baseline (name@env: through the env adapter) or a "
        "saved agent path (repeatable; default: the scenario's own list)",
    )
    p.add_argument(
        "--with-defaults",
        action="store_true",
        help="run the scenario's own policies as well as those given with --policy",
    )
    p.add_argument("--executor", choices=EXECUTORS, default="auto", help="auto: Ray if installed")
    p.add_argument("--workers", type=int, default=2, help="local worker processes")
    p.add_argument("--out", default=None, help="output folder (default hpcgym-bench/<scenarios>)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help="main job only: training steps of its agent (default: the main job's budget)",
    )
    p.set_defaults(func=run)
