"""Paper check: list scheduling of evolving applications (Klein and Perez, Tables 1 and 2).

The paper runs 1000 generated test cases (15-20 applications, 1-10 steps of 500-3600 s and
1-75 nodes) with six algorithms and reports system-centric (utilisation, effective utilisation,
makespan, waste, scheduling time) and user-centric (per-application waste, completion time,
waiting time, with maxima) metrics. Its conclusions: every evolution-aware variant beats
``rigid`` on makespan, waste and completion time; ``noX`` wastes least; expansion buys little
completion time for much waste; scheduling takes little time.

Here case ``k`` is ``generate_klein(k)`` on 75 nodes. Every case is planned offline
(``schedule_jobs``; metrics from the plan, ``plan_metrics``); the first ``--online`` cases are
also run in the engine (``EvolvingListScheduler`` on a ``Simulator``; metrics from
``hpcgym.sim.metrics``) and the two are compared. ``--literal`` adds the paper's literal model
(steps may be held before a smaller one) for the expanding variants, offline.

    hpcgym papers evolving [--cases 1000] [--online 200] [--workers 2] [--out f.md]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import write_csv, write_text
from hpcgym.baselines.evolving.list_scheduling import VARIANTS, plan_metrics, schedule_jobs
from hpcgym.baselines.evolving.online import EvolvingListScheduler
from hpcgym.bench.papers import no_quick
from hpcgym.sim import Simulator
from hpcgym.workloads.evolving import generate_klein

NNODES = 75
METRICS = (
    "utilization",
    "effective_utilization",
    "makespan",
    "waste",
    "sched_ms",
    "mean_waste",
    "max_waste",
    "mean_completion",
    "max_completion",
    "mean_wait",
    "max_wait",
)
LITERAL = ("2X", "2X+c", "infX", "infX+c")


def engine_metrics(sim: Simulator) -> dict[str, float]:
    """The paper's metrics of an engine run, from ``hpcgym.sim.metrics``."""
    result = sim.result()
    s, jobs = result.summary, result.jobs
    return {
        "utilization": s["utilization"],
        "effective_utilization": s["effective_utilization"],
        "makespan": s["makespan"],
        "waste": float(jobs["waste"].sum()),
        "mean_waste": s["mean_waste"],
        "max_waste": s["max_waste"],
        "mean_completion": s["mean_response"],
        "max_completion": s["max_response"],
        "mean_wait": s["mean_wait"],
        "max_wait": s["max_wait"],
    }


def run_case(args: tuple[int, bool, bool]) -> list[dict[str, Any]]:
    """All variants on case ``seed``: offline rows, and online rows when asked."""
    seed, online, literal = args
    w = generate_klein(seed)
    rows: list[dict[str, Any]] = []
    runs = [(name, False) for name in VARIANTS]
    if literal:
        runs += [(name, True) for name in LITERAL]
    for name, lit in runs:
        tic = time.perf_counter()
        plans = schedule_jobs(w.jobs, NNODES, name, expand_decreases=lit)
        ms = (time.perf_counter() - tic) * 1e3
        label = f"{name} (literal)" if lit else name
        rows.append(
            {
                "case": seed,
                "variant": label,
                "mode": "offline",
                "sched_ms": ms,
                **plan_metrics(plans, NNODES),
            }
        )
        if online and not lit:
            sim = Simulator(w.platform, w.jobs)
            sched = EvolvingListScheduler(name)
            sched.run(sim)
            rows.append(
                {
                    "case": seed,
                    "variant": name,
                    "mode": "online",
                    "sched_ms": sched.scheduling_time * 1e3,
                    **engine_metrics(sim),
                }
            )
    return rows


def table(df: pd.DataFrame, mode: str) -> pd.DataFrame:
    """Mean over cases of each metric, per variant, in display units."""
    sub = df[df["mode"] == mode]
    order = [
        v for v in [*VARIANTS, *(f"{n} (literal)" for n in LITERAL)] if v in set(sub["variant"])
    ]
    out = sub.groupby("variant")[list(METRICS)].mean().loc[order]
    for col in ("makespan", "mean_completion", "max_completion", "mean_wait", "max_wait"):
        out[col] = out[col] / 3600.0
    for col in ("waste", "mean_waste", "max_waste"):
        out[col] = out[col] / 3600.0
    return out


def _columns(off: pd.DataFrame, metric: str) -> dict[str, np.ndarray]:
    """``metric`` per case (sorted by case), for each variant."""
    out = {}
    for v in VARIANTS:
        sub = off[off["variant"] == v].sort_values("case")
        out[v] = sub[metric].to_numpy(dtype=float)
    return out


def conclusions(df: pd.DataFrame) -> list[str]:
    """The paper's qualitative claims, checked on the offline plans (case by case)."""
    off = df[df["mode"] == "offline"]
    lines = []
    aware = [v for v in VARIANTS if v != "rigid"]
    for metric in (
        "makespan",
        "waste",
        "mean_completion",
        "max_completion",
        "utilization",
        "effective_utilization",
    ):
        col = _columns(off, metric)
        higher = metric == "effective_utilization"
        frac = {
            v: float(np.mean(col[v] > col["rigid"] if higher else col[v] < col["rigid"]))
            for v in aware
        }
        shown = ", ".join(f"{v} {100 * f:.1f}%" for v, f in frac.items())
        lines.append(f"- {metric} {'higher' if higher else 'lower'} than rigid: {shown} of cases")
    waste = _columns(off, "waste")
    least = np.min(np.stack([waste[v] for v in aware]), axis=0)
    ties = float(np.mean(waste["noX"] == least))
    lines.append(f"- noX has the least waste of the aware variants in {100 * ties:.1f}% of cases")
    mean = {m: {v: float(c.mean()) for v, c in _columns(off, m).items()} for m in METRICS}
    per_case = {m: _columns(off, m) for m in ("mean_completion", "mean_wait", "makespan")}
    for v in ("2X", "2X+c", "infX", "infX+c"):
        parts = []
        for m, col in per_case.items():
            d = col[v] - col["noX"]
            better, worse = 100 * np.mean(d < -1e-6), 100 * np.mean(d > 1e-6)
            parts.append(f"{m} better in {better:.1f}%, worse in {worse:.1f}%")
        max_waste = _columns(off, "max_waste")[v] / 3600
        parts.append(
            f"largest per-application waste: 99th percentile {np.percentile(max_waste, 99):.1f}, "
            f"max {max_waste.max():.1f} node-h"
        )
        lines.append(f"- {v} vs noX, case by case: " + "; ".join(parts))
    for v in ("2X", "2X+c", "infX", "infX+c"):
        rel = {
            m: 100 * (mean[m][v] / mean[m]["noX"] - 1)
            for m in ("mean_completion", "mean_wait", "makespan", "max_completion")
        }
        lines.append(
            f"- {v} vs noX: mean completion {rel['mean_completion']:+.2f}%, "
            f"max completion {rel['max_completion']:+.2f}%, mean wait {rel['mean_wait']:+.2f}%, "
            f"makespan {rel['makespan']:+.2f}%, waste +{mean['waste'][v] / 3600:.1f} node-h "
            f"per case (max per application {mean['max_waste'][v] / 3600:.1f} node-h)"
        )
    return lines


def agreement(df: pd.DataFrame) -> pd.DataFrame:
    """Largest relative difference between engine and plan metrics, per variant."""
    on = df[df["mode"] == "online"].set_index(["case", "variant"])
    off = df[df["mode"] == "offline"].set_index(["case", "variant"]).loc[on.index]
    cols = [c for c in METRICS if c != "sched_ms"]
    rel = (on[cols] - off[cols]).abs() / off[cols].abs().clip(lower=1e-9)
    return (
        rel.groupby(level="variant")
        .max()
        .loc[[v for v in VARIANTS if v in set(on.index.get_level_values(1))]]
    )


def markdown(df: pd.DataFrame, fmt: str = "{:.3f}") -> str:
    """A Markdown table of ``df`` (index first), numbers formatted with ``fmt``."""
    head = [str(df.index.name or ""), *map(str, df.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for idx, row in zip(df.index, df.itertuples(index=False), strict=True):
        cells = [fmt.format(v) if isinstance(v, float | np.floating) else str(v) for v in row]
        lines.append("| " + " | ".join([str(idx), *cells]) + " |")
    return "\n".join(lines)


def run(quick: bool, out: Path | None) -> str:
    """The check with its defaults (1,000 cases, 200 also online): the report, also to ``out``.

    Raises:
        HpcGymError: ``quick``: the check has no small sample.
    """
    args = argparse.Namespace(
        quick=quick, cases=1000, online=200, workers=2, literal=False, csv=None, from_csv=None
    )
    args.out = out
    return command(args)


def command(a: argparse.Namespace) -> str:
    """``hpcgym papers evolving [options]`` (``hpcgym.bench.papers.cli``): the report."""
    no_quick("evolving", a)
    tic = time.perf_counter()
    if a.from_csv:
        df = pd.read_csv(a.from_csv)
        a.cases = int(df["case"].nunique())
        a.online = int(df.loc[df["mode"] == "online", "case"].nunique())
    else:
        jobs = [(k, k < a.online, a.literal) for k in range(a.cases)]
        with ProcessPoolExecutor(a.workers) as pool:
            rows = [r for chunk in pool.map(run_case, jobs, chunksize=4) for r in chunk]
        df = pd.DataFrame(rows)
    if a.csv and not a.from_csv:
        write_csv(a.csv, df, index=False)
    parts = [
        f"# Evolving applications: {a.cases} cases offline, {min(a.online, a.cases)} online "
        + (
            f"(rows from {a.from_csv})"
            if a.from_csv
            else f"({time.perf_counter() - tic:.0f} s on {a.workers} workers)"
        ),
        "Times in hours, waste in node-hours, scheduling time in ms per case (means over cases).",
        "## Offline (plan)",
        markdown(table(df, "offline")),
    ]
    if (df["mode"] == "online").any():
        parts += [
            "## Online (engine)",
            markdown(table(df, "online")),
            "## Engine vs plan: largest relative difference",
            markdown(agreement(df), "{:.1e}"),
        ]
    parts += ["## The paper's conclusions, case by case", "\n".join(conclusions(df))]
    text = "\n\n".join(parts) + "\n"
    if a.out:
        write_text(a.out, text)
    return text


if __name__ == "__main__":
    from hpcgym.bench.papers.cli import alias

    raise SystemExit(alias("evolving"))
