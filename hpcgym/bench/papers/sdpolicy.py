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

The ablation (``run``, behind ``hpcgym papers sdpolicy``) compares, on every 6-day window of
the CEA sample (starting on each day, so consecutive windows overlap by 5 days), static
backfill and MAXSD 10 under today's setting (all seven partitions on 5,832 nodes, worst-case
runtime model), the paper's (the primary partition 10 alone on its 5,040 nodes, ideal model:
estimates and simulated progress) and each part alone, with 95% bootstrap intervals.

    hpcgym papers sdpolicy [--quick] [--ablation SETTING...] [--workers 2] [--out f.md]
    hpcgym papers sdpolicy --experiments [--windows 3] [--days 6] [--workers 2] [--out f.md]
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import write_csv, write_text
from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.sdpolicy.scheduler import DYNAMIC, SDPolicy
from hpcgym.bench.papers import marked, no_quick, preview_note, run_all, tabulated
from hpcgym.bench.stats import interval
from hpcgym.errors import WorkloadError
from hpcgym.sim import Platform, SimConfig, Simulator
from hpcgym.workloads import ElasticConfig, annotate_elastic, load, read_workload, transforms
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.swf import COL
from hpcgym.workloads.workload import ProvenanceStep, Workload

PRIMARY_PARTITION = 10
"""CEA-Curie's primary partition (the SWF partition field), the one the paper simulates."""
PRIMARY_NODES = 5040
"""Nodes of the primary partition (the paper: 5,040 16-core nodes)."""

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
    partition: int | None = None
    """CEA-Curie only: keep this SWF partition's jobs, on ``PRIMARY_NODES`` nodes."""
    step: float = 0.0
    """Days between window starts (0: the window length, disjoint windows)."""
    setting: str = ""


def workload(case: Case) -> Workload:
    """The window of ``case`` with its malleable annotation (seeded by the window index)."""
    if case.trace == "cea-curie":
        path = resolve_file("CEA-Curie-2011-sample.swf.gz")
        w = read_workload(path, procs_per_node=16, allocation="node")
        if case.partition is not None:
            w = partition(w, case.partition, PRIMARY_NODES)
        day = 86400.0
        start = case.window * (case.step or case.size) * day
        w = transforms.window(w, start, start + case.size * day)
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


def partition(w: Workload, number: int, nodes: int) -> Workload:
    """The jobs of SWF partition ``number`` alone, on a single cluster of ``nodes`` nodes.

    Raises:
        WorkloadError: The workload has no SWF rows, or a job of the partition is larger.
    """
    if w.rows is None:
        raise WorkloadError(f"partition: {w.name!r} has no SWF rows to read partitions from")
    keep = np.flatnonzero(w.rows[:, COL["partition"]] == number)
    jobs = [w.jobs[i] for i in keep]
    too_big = [j.id for j in jobs if j.nodes > nodes]
    if too_big:
        raise WorkloadError(
            f"partition {number} of {w.name!r}: jobs {too_big[:5]} need more than {nodes} nodes"
        )
    cluster = w.platform.clusters[0]
    platform = Platform.single(nodes, cores=cluster.cores, name=cluster.name)
    step = ProvenanceStep.make("partition", partition=number, nodes=nodes)
    return w.derive(jobs, step, rows=w.rows[keep], platform=platform)


def scheduler(case: Case) -> BaseScheduler:
    """The scheduler of ``case`` (``easy`` is the project's EASY baseline)."""
    if case.variant == "easy":
        from hpcgym.baselines import make

        return make("easy")
    simulate = bool(case.setting)  # the ablation simulates its runtime model too
    return SDPolicy(runtime_model=case.model, simulate_model=simulate, **VARIANTS[case.variant])


def simulate(case: Case) -> dict[str, Any]:
    """Run one case; its parameters and the paper's metrics as a flat record."""
    w = workload(case)
    sched = scheduler(case)
    # The scheduler's setting: no walltime kills; SD-Policy's runtime model in the engine too.
    jobs_in, config = sched.setting(w.jobs, CONFIG)
    sim = Simulator(w.platform, jobs_in, config)
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


# ------------------------------------------------------------------------------- ablation
SETTINGS: dict[str, dict[str, Any]] = {
    "today": {"partition": None, "model": "worst"},
    "paper": {"partition": PRIMARY_PARTITION, "model": "ideal"},
    "partition 10 only": {"partition": PRIMARY_PARTITION, "model": "worst"},
    "ideal model only": {"partition": None, "model": "ideal"},
}
"""The ablation's settings: today's, the paper's, and each of its two parts alone."""

SAMPLE_DAYS = 26
"""Whole days of the CEA-Curie sample (26.6 days): 6-day windows start on days 0-20."""


def ablation_cases(
    days: float = 6.0,
    step: float = 1.0,
    settings: tuple[str, ...] = tuple(SETTINGS),
    last_start: float | None = None,
    windows: list[int] | None = None,
) -> list[Case]:
    """Static backfill and MAXSD 10 on every ``days`` window starting each ``step`` days.

    ``windows`` keeps only these window indices (window ``k`` starts on day ``k * step``).
    """
    last = SAMPLE_DAYS - days if last_start is None else last_start
    starts = range(int(last // step) + 1) if windows is None else windows
    return [
        Case("cea-curie", k, 1.0, variant, days, step=step, setting=name, **SETTINGS[name])
        for name in settings
        for k in starts
        for variant in ("static", "MAXSD 10")
    ]


def _ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Per setting and window: MAXSD 10's metrics over static's, and its guest share."""
    # Windows are keyed by their start day, so runs with different steps combine.
    df = df.assign(start=df["window"] * df["step"].where(df["step"] > 0, df["size"]))
    key = ["setting", "start"]
    base = df[df["variant"] == "static"].set_index(key)
    sd = df[df["variant"] == "MAXSD 10"].set_index(key)
    out = pd.DataFrame(index=sd.index)
    for m in ("slowdown", "response", "makespan"):
        out[m] = sd[m] / base[m]
    out["guests"] = sd["guests"] / sd["jobs"] * 100
    return out


HEADLINES = (
    ("slowdown", "mean slowdown, MAXSD 10 / static", 0.296),
    ("response", "mean response time, MAXSD 10 / static", 0.50),
    ("makespan", "makespan, MAXSD 10 / static", 1.00),
    ("guests", "jobs started as guests (%)", 10.3),
)
"""Per-window quantity, its label, and the paper's value (section 4.1, CEA-Curie)."""


def _headline_table(ratios: pd.DataFrame, settings: list[str], preview: bool = False) -> str:
    word = "preview" if preview else "verdict"
    head = ["headline", "paper", *settings, *(f"{word}, {s}" for s in settings)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for column, label, paper in HEADLINES:
        cells, verdicts = [], []
        for setting in settings:
            x = ratios.xs(setting, level="setting")[column].to_numpy(float)
            est = interval(x)
            digits = 1 if column == "guests" else 3
            cells.append(f"{est.value:.{digits}f} [{est.low:.{digits}f}, {est.high:.{digits}f}]")
            inside = est.low <= paper <= est.high
            said = "reproduced" if inside else ("above" if est.low > paper else "below")
            verdicts.append(marked(said, preview))
        lines.append("| " + " | ".join([label, f"{paper:g}", *cells, *verdicts]) + " |")
    return "\n".join(lines) + "\n"


def ablation_report(df: pd.DataFrame, preview: bool = False) -> str:
    """The ablation table: each headline per setting, mean over windows [95% interval].

    ``preview`` (the quick check's 1-day windows): each verdict is marked as a preview, with a
    note that only the full check's sample can give one.

    When the windows overlap, a second table keeps the disjoint ones (starts a multiple of the
    window length): overlapping windows are not independent, so the first table's intervals
    are narrower than the sample warrants.
    """
    settings = [s for s in SETTINGS if s in set(df["setting"])]
    ratios = _ratios(df)
    size = float(df.iloc[0]["size"])
    starts = sorted(ratios.index.get_level_values("start").unique())
    n = len(starts)
    step = min(np.diff(starts)) if n > 1 else size
    jobs = df[df["variant"] == "static"].groupby("setting")["jobs"].mean()
    note = ", ".join(f"{s} {jobs[s]:,.0f}" for s in settings)
    parts = [
        f"### SD-Policy ablation, CEA-Curie: {n} windows of {_days(size)} starting every "
        f"{_days(step)}; mean over windows [95% bootstrap interval]\n",
        _headline_table(ratios, settings, preview),
        f"Jobs per window (mean): {note}.\n",
    ]
    if preview:
        parts.append(preview_note(f"{n} windows of {_days(size)}", "`hpcgym papers sdpolicy`"))
    disjoint = [t for t in starts if t % size == 0]
    if 2 <= len(disjoint) < n:
        keep = ratios.index.get_level_values("start").isin(disjoint)
        listed = ", ".join(f"{t:g}" for t in disjoint)
        parts.append(f"### The same, disjoint windows only (starts {listed})\n")
        parts.append(_headline_table(ratios[keep], settings, preview))
    return "\n".join(parts)


def run(quick: bool = False, out: Path | None = None, workers: int = 2) -> str:
    """The ``hpcgym papers sdpolicy`` check: the ablation on every 6-day CEA window.

    ``quick``: 1-day windows starting on days 0, 6, 12 and 18 instead (a few minutes).
    Returns the Markdown table (written to ``out`` too when given).
    """
    todo = ablation_cases(1.0, 6.0, last_start=18.0) if quick else ablation_cases()
    text = _ablation(todo, workers, preview=quick)
    if out is not None:
        write_text(out, text)
    return text


def _ablation(todo: list[Case], workers: int, preview: bool, csv: str | None = None) -> str:
    report = partial(ablation_report, preview=preview)
    return tabulated(_simulate_all, todo, workers, report, csv)


def _simulate_all(todo: list[Case], workers: int) -> pd.DataFrame:
    return pd.DataFrame(run_all(simulate, todo, workers))


def command(args: argparse.Namespace) -> str:
    """``hpcgym papers sdpolicy [options]`` (``hpcgym.bench.papers.cli``).

    The ablation (the check; ``--ablation SETTING...`` narrows it), the experiments
    (``--experiments``), or the tables of records (``--from-csv``).
    """
    if args.from_csv:
        df = pd.concat(pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in args.from_csv)
        text = (
            ablation_report(df) if "setting" in df and df["setting"].notna().all() else report(df)
        )
    elif args.ablation is not None or not args.experiments:
        quick = args.quick
        names = tuple(args.ablation or ()) or tuple(SETTINGS)
        days = args.days if args.days is not None else (1.0 if quick else 6.0)
        step = args.step if args.step is not None else (6.0 if quick else 1.0)
        last = args.last_start if args.last_start is not None else (18.0 if quick else None)
        todo = ablation_cases(days, step, names, last, args.window_index)
        text = _ablation(todo, args.workers, preview=quick, csv=args.csv)
    else:
        no_quick("sdpolicy --experiments", args)
        args.days = 6.0 if args.days is None else args.days
        todo = cases(args)
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers) as pool:
            df = pd.DataFrame(pool.map(simulate, todo))
        if args.csv:
            write_csv(args.csv, df, index=False)
        text = report(df) + f"\n{len(todo)} simulations in {time.perf_counter() - t0:.0f} s.\n"
    if args.out:
        write_text(args.out, text)
    return text


def _days(count: float) -> str:
    """``1 day``, ``2.5 days``: a count of days with its noun in the right number."""
    return f"{count:g} day" if count == 1 else f"{count:g} days"


if __name__ == "__main__":
    from hpcgym.bench.papers.cli import alias

    raise SystemExit(alias("sdpolicy"))
