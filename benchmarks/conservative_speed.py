"""Conservative backfilling on overloaded traces: CPU seconds per job against queue length.

Runs ``make("conservative")`` (kept profile, partial re-placement) and ``ConservativeReplan``
(``tests/baselines/conservative_replan.py``, the same schedule re-planned from scratch at every
decision point: the algorithm before issue 20) on the bare engine over the first N jobs of two
bundled traces with arrivals compressed 4x (``benchmarks/scale.py``'s overload recipe), so that
the queue grows into the hundreds and thousands:

- ``swf/lublin256-v0`` (256 nodes, exact estimates: jobs end at their estimated end, so no
  reservation ever moves and a pass places only the new jobs);
- ``swf/sdsc-sp2-v0`` (128 nodes, the users' estimates: most jobs end early and the
  reservations behind them move up).

The re-planning reference is quadratic in the queue and runs only up to ``--before-max`` jobs.
Where both run, their start times are checked equal job for job.

    python benchmarks/conservative_speed.py [--jobs 2000 5000 10000] [--before-max 5000] [--write]

``--write`` replaces the ``## Conservative backfilling speed`` section of
``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from results_md import build_note, write_section

import hpcgym.workloads as W
from hpcgym.baselines import make
from hpcgym.baselines.base import BaseScheduler
from hpcgym.sim import Simulator
from hpcgym.workloads import transforms

# The re-planning reference is the tests' oracle, not part of the package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "baselines"))
from conservative_replan import ConservativeReplan

SECTION = "## Conservative backfilling speed"
TRACES = (
    ("swf/lublin256-v0", "exact"),
    ("swf/sdsc-sp2-v0", "users'"),
)
COMPRESS = 0.25


def overloaded(name: str, n: int) -> W.Workload:
    """The first ``n`` jobs of ``name`` with arrivals compressed 4x."""
    w = W.load(name)
    w = transforms.first(w, n) if n < len(w) else w
    return transforms.scale_arrivals(w, COMPRESS)


def run(w: W.Workload, sched: BaseScheduler) -> tuple[list[float], float, int, float]:
    """Start times, CPU seconds of the decision loop, peak and mean queue length."""
    sim = Simulator(w.platform, w.jobs)
    sched.reset()
    schedule = sched.schedule
    advance = sim.advance
    peak = total = points = 0
    c0 = time.process_time()
    while advance():
        schedule(sim)
        q = len(sim.queue)
        total += q
        points += 1
        if q > peak:
            peak = q
    cpu = time.process_time() - c0
    return [sim.jobs[j.id].start_time for j in w.jobs], cpu, peak, total / max(points, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, nargs="+", default=[2000, 5000, 10000])
    ap.add_argument("--before-max", type=int, default=5000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, estimates in TRACES:
        for n in args.jobs:
            w = overloaded(name, n)
            after = make("conservative")
            starts, cpu, peak, mean_q = run(w, after)
            replans = after.replans  # type: ignore[attr-defined]
            before = None
            if n <= args.before_max:
                ref_starts, ref_cpu, _, _ = run(w, ConservativeReplan())
                if ref_starts != starts:
                    raise SystemExit(f"{name} {n}: the two implementations disagree")
                before = ref_cpu
            row = (name, estimates, len(w.jobs), peak, mean_q, before, cpu, replans)
            rows.append(row)
            b = f"{before / len(w.jobs) * 1e3:8.3f} ms/job" if before is not None else "-"
            print(
                f"{name:18s} {len(w.jobs):>6,} jobs  queue peak {peak:>5,} mean {mean_q:>7,.0f}"
                f"  before {b}  after {cpu / len(w.jobs) * 1e3:8.3f} ms/job"
                f"  ({len(w.jobs) / cpu:,.0f} jobs/s, {replans} full re-plans)",
                flush=True,
            )

    def fmt(cpu: float | None, n: int) -> str:
        return "-" if cpu is None else f"{cpu / n * 1e3:.3f}"

    def speedup(before: float | None, after: float) -> str:
        return "-" if before is None else f"{before / after:,.0f}x"

    jobs_arg = " ".join(str(n) for n in args.jobs)
    text = "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/conservative_speed.py --jobs {jobs_arg} --before-max "
            f"{args.before_max} --write`: conservative backfilling on the bare engine over the "
            "first N jobs of a bundled trace with arrivals compressed 4x (the queue grows into "
            "the thousands). *Before*: `ConservativeReplan`, which rebuilds the profile and "
            "re-places every queued job at every decision point (the algorithm before issue 20, "
            "on this build, whose profile operations are compiled too); "
            '*after*: `make("conservative")`, which keeps the profile, places only '
            "new jobs when no job ended before its estimated end, and otherwise moves up only "
            "the reservations that can move. Same start times, job for job, wherever both ran "
            "(checked by this script; `tests/baselines/test_conservative_incremental.py` checks "
            "reservations after every pass). CPU seconds of the decision loop, one run each. "
            f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy "
            f"{np.__version__}, {build_note()}; 2 CPUs shared with other work (load average "
            f"{os.getloadavg()[0]:.1f} when written).",
            "",
            "| trace (estimates) | jobs | queue peak | queue mean | before (ms CPU/job) "
            "| after (ms CPU/job) | after (jobs/s CPU) | speed-up | full re-plans (after) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            *(
                f"| `{name}` ({est}) | {n:,} | {peak:,} | {mean_q:,.0f} | {fmt(before, n)} "
                f"| {fmt(cpu, n)} | {n / cpu:,.0f} | {speedup(before, cpu)} | {replans:,} |"
                for name, est, n, peak, mean_q, before, cpu, replans in rows
            ),
            "",
            "With exact estimates a pass costs the new jobs' placement only: the cost per job",
            "follows the profile's length (one step scan per new job), not the queue times the",
            "profile. With the users' estimates most ends are early and the reservations behind",
            "them really move (about 30 jobs per early end on `sdsc-sp2-v0` at 2,000 jobs): that",
            "part of the work grows with the queue, by the algorithm's definition; the search",
            "for each move still scans the profile from `now`.",
            "",
        ]
    )
    print()
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
