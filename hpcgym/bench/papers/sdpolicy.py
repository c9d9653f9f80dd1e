"""Paper check: SD-Policy against static backfilling (D'Amico et al., ICPP 2019, Figures 1-3).

The paper simulates CEA-Curie (198,509 jobs, 5,040 16-core nodes) and reports, normalized to
static backfill, the makespan, mean response time and mean slowdown (response over the job's
static run time) for MAX_SLOWDOWN 5, 10, 50, infinite and dynamic (DynAVGSD), with the ideal
runtime model: slowdown -70.4% with MAXSD 10, response about -50%, makespan about unchanged.

Our workloads (documented in ``docs/papers-sdpolicy-koala.md``):

- **CEA-Curie**: the 26-day sample the project has (``CEA-Curie-2011-sample.swf.gz``, 36,351
  jobs), in whole nodes of 16 cores (``allocation="node"``: 5,832 nodes, the paper's unit; the
  ``swf/cea-curie-v0`` set counts cores as units, which leaves no node to share), user
  estimates, consecutive windows of ``--days``.
- **KTH SP2** (``swf/kth-sp2-v0``, 100 nodes): consecutive windows of ``--kth-jobs`` jobs.

A fraction ``--malleable`` of the jobs (all by default: the paper treats every job as
malleable) is made malleable with ``annotate_elastic``; SD-Policy only uses the kind, never the
size range. The engine does not kill at walltime (SLURM's SD-Policy extends the limits of the
jobs it slows down). "static" is ``SDPolicy(coschedule=False)``, EASY backfilling with the same
estimates; the project's ``easy`` baseline is run beside it as a cross-check.

    python -m hpcgym.bench.papers.sdpolicy [--windows 3] [--days 6] [--workers 2] [--out f.md]
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import write_csv
from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.sdpolicy.scheduler import DYNAMIC, SDPolicy
from hpcgym.bench.papers import publish
from hpcgym.sim import SimConfig, Simulator
from hpcgym.workloads import ElasticConfig, annotate_elastic, load, read_workload, transforms
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.workload import Workload

CONFIG = SimConfig(kill_on_walltime=False)
VARIANTS: dict[str, dict[str, Any]] = {
    "static": {"coschedule": False},
    "MAXSD 5": {"max_slowdown": 5.0},
    "MAXSD 10": {"max_slowdown": 10.0},
    "MAXSD 50": {"max_slowdown": 50.0},
    "MAXSD inf": {"max_slowdown": math.inf},
    "DynAVGSD": {"max_slowdown": DYNAMIC},
}


@dataclass(frozen=True)
class Case:
    """One simulation: a trace window, a malleable fraction and a scheduler variant."""

    trace: str
    window: int
    malleable: float
    variant: str
    size: float
    model: str = "worst"


def workload(case: Case) -> Workload:
    """The window of ``case`` with its malleable annotation (seeded by the window index)."""
    if case.trace == "cea-curie":
        path = resolve_file("CEA-Curie-2011-sample.swf.gz")
        w = read_workload(path, procs_per_node=16, allocation="node")
        day = 86400.0
        w = transforms.window(w, case.window * case.size * day, (case.window + 1) * case.size * day)
        w = transforms.estimates(w, "user")
    else:
        w = load("swf/kth-sp2-v0")
        n = int(case.size)
        w = transforms.window(
            w,
            w.jobs[case.window * n].submit,
            w.jobs[min((case.window + 1) * n, len(w.jobs) - 1)].submit,
        )
    return annotate_elastic(w, ElasticConfig(malleable=case.malleable), case.window)


def scheduler(case: Case) -> BaseScheduler:
    """The scheduler of ``case`` (``easy`` is the project's EASY baseline)."""
    if case.variant == "easy":
        from hpcgym.baselines import make

        return make("easy")
    return SDPolicy(runtime_model=case.model, **VARIANTS[case.variant])


def simulate(case: Case) -> dict[str, Any]:
    """Run one case; its parameters and the paper's metrics as a flat record."""
    w = workload(case)
    sim = Simulator(w.platform, w.jobs, CONFIG)
    sched = scheduler(case)
    t0 = time.perf_counter()
    sched.run(sim)
    res = sim.result()
    jobs = res.jobs
    slowdown = jobs["response"].to_numpy(float) / np.maximum(jobs["work"].to_numpy(float), 1.0)
    guests = len(getattr(sched, "coscheduled", []))
    return {
        **asdict(case),
        "jobs": len(jobs),
        "makespan": res.summary["makespan"],
        "response": res.summary["mean_response"],
        "slowdown": float(np.nanmean(slowdown)),
        "bsld": res.summary["mean_bsld"],
        "utilization": res.summary["utilization"],
        "guests": guests,
        "mates": sum(len(m) for _, _, m in getattr(sched, "coscheduled", [])),
        "seconds": time.perf_counter() - t0,
    }


def cases(args: argparse.Namespace) -> list[Case]:
    """Every simulation of the check."""
    variants = args.variants or [*VARIANTS, "easy"]
    out = [
        Case("cea-curie", k, args.malleable, v, args.days)
        for k in range(args.windows)
        for v in variants
    ]
    out += [
        Case("kth-sp2", k, args.malleable, v, args.kth_jobs)
        for k in range(args.kth_windows)
        for v in variants
    ]
    if args.ideal:
        out += [
            Case("cea-curie", k, args.malleable, "DynAVGSD", args.days, "ideal")
            for k in range(args.windows)
        ]
    return out


def report(df: pd.DataFrame) -> str:
    """Per trace: every metric of every variant relative to static (mean over windows)."""
    parts = []
    df = df.assign(
        label=np.where(df["model"] == "ideal", df["variant"] + " (ideal)", df["variant"])
    )
    for trace, sub in df.groupby("trace"):
        base = sub[sub["variant"] == "static"].set_index("window")
        rows = []
        for label, grp in sub.groupby("label", sort=False):
            g = grp.set_index("window")
            row: dict[str, Any] = {"variant": label}
            for m in ("makespan", "response", "slowdown"):
                row[f"{m} / static"] = float((g[m] / base[m]).mean())
            row["slowdown"] = float(g["slowdown"].mean())
            row["guests %"] = float((g["guests"] / g["jobs"]).mean() * 100)
            row["mates %"] = float((g["mates"] / g["jobs"]).mean() * 100)
            rows.append(row)
        table = pd.DataFrame(rows)
        n = sub["window"].nunique()
        parts.append(f"### {trace}: {n} windows, mean of per-window ratios to static\n")
        parts.append(_markdown(table))
    return "\n".join(parts)


def _markdown(table: pd.DataFrame) -> str:
    head = list(table.columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.itertuples(index=False):
        cells = [
            f"{v:.3f}"
            if isinstance(v, float) and abs(v) < 100
            else (f"{v:,.0f}" if isinstance(v, float) else str(v))
            for v in row
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the check and print (or write) its tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, default=3, help="CEA-Curie windows")
    ap.add_argument("--days", type=float, default=6.0, help="days per CEA-Curie window")
    ap.add_argument("--kth-windows", type=int, default=3)
    ap.add_argument("--kth-jobs", type=int, default=3000, help="jobs per KTH window")
    ap.add_argument("--malleable", type=float, default=1.0, help="fraction of malleable jobs")
    ap.add_argument("--ideal", action="store_true", help="also DynAVGSD with the ideal model")
    ap.add_argument("--variants", nargs="*", default=None, help="subset of variants to run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--csv", default=None, help="write every run's record here")
    ap.add_argument("--from-csv", default=None, help="only tabulate records written by --csv")
    ap.add_argument("--out", default=None, help="write the Markdown tables here")
    args = ap.parse_args(argv)
    if args.from_csv:
        df = pd.read_csv(args.from_csv)
        text = report(df)
    else:
        todo = cases(args)
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers) as pool:
            df = pd.DataFrame(pool.map(simulate, todo))
        if args.csv:
            write_csv(args.csv, df, index=False)
        text = report(df) + f"\n{len(todo)} simulations in {time.perf_counter() - t0:.0f} s.\n"
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
