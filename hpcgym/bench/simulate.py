"""``hpcgym simulate``: run one baseline scheduler over a named workload and print its metrics."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from hpcgym.atomic import write_csv
from hpcgym.baselines import make, names
from hpcgym.cli_checks import at_least, writable_file
from hpcgym.sim import SimConfig
from hpcgym.workloads import registry, transforms

SUMMARY_ROWS = (
    ("jobs", "{:.0f}"),
    ("completed", "{:.0f}"),
    ("killed", "{:.0f}"),
    ("rejected", "{:.0f}"),
    ("mean_wait", "{:,.1f} s"),
    ("mean_response", "{:,.1f} s"),
    ("mean_bsld", "{:,.2f}"),
    ("max_bsld", "{:,.2f}"),
    ("mean_slowdown", "{:,.2f}"),
    ("mean_bounded_stretch", "{:,.2f}"),
    ("max_bounded_stretch", "{:,.2f}"),
    ("makespan", "{:,.0f} s"),
    ("utilization", "{:.3f}"),
    ("effective_utilization", "{:.3f}"),
    ("normalized_underutilization", "{:.3f}"),
    ("reconfigurations", "{:.0f}"),
    ("mean_waste", "{:,.1f} CPU-s"),
)


def run(args: argparse.Namespace) -> int:
    """Load, simulate, print; write the per-job table when asked."""
    if args.out:
        writable_file(args.out)
    at_least("--jobs", args.jobs, 1)
    workload = registry.load(args.workload, seed=args.seed)
    if args.jobs is not None:
        workload = transforms.first(workload, args.jobs)
    config = SimConfig(kill_on_walltime=not args.no_kill)
    scheduler = make(args.scheduler)
    t0 = time.perf_counter()
    result = scheduler.simulate(workload.platform, workload.jobs, config)
    elapsed = time.perf_counter() - t0
    print(
        f"{args.scheduler} on {workload.name} (seed {args.seed}): {len(workload)} jobs, "
        f"{workload.platform.total_nodes} nodes, simulated in {elapsed:.2f} s"
    )
    summary: dict[str, Any] = result.summary
    width = max(len(k) for k, _ in SUMMARY_ROWS)
    for key, fmt in SUMMARY_ROWS:
        print(f"  {key:<{width}}  {fmt.format(summary[key])}")
    if args.out:
        out = Path(args.out)
        write_csv(out, result.jobs, index=False)
        print(f"per-job table: {out}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``simulate`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "simulate",
        help="run a baseline scheduler over a workload set (e.g. hpcgym simulate --scheduler mebf)",
        description="Run a baseline scheduler over a named workload set and print its metrics.",
        epilog="examples:\n  hpcgym simulate --scheduler easy --workload swf/lublin256-v0\n"
        "  hpcgym simulate --scheduler mebf --workload elastic/sdsc-sp2-mebf-v0 --jobs 500 "
        "--out jobs.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--workload",
        default="swf/lublin256-v0",
        help="a workload set name (see hpcgym workloads list) or a workload file: SWF, a sacct "
        "--parsable2 dump (.sacct), a Batsim .json (default swf/lublin256-v0)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the workload set's draws (default 0)"
    )
    p.add_argument("--jobs", type=int, default=None, help="keep the first N jobs (e.g. 500)")
    p.add_argument(
        "--scheduler",
        default="easy",
        choices=names(),
        metavar="NAME",
        help=f"the scheduler (default easy): {', '.join(names())}",
    )
    p.add_argument(
        "--no-kill", action="store_true", help="let jobs run past their walltime (no kills)"
    )
    p.add_argument(
        "--out", default=None, help="write the per-job table to this CSV file (e.g. jobs.csv)"
    )
    p.set_defaults(func=run)
