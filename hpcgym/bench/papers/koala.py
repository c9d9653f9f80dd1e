"""Paper check: KOALA's malleability management on the GADGET-2/FT mix (Buisson et al. 2007).

The paper runs 300 jobs (GADGET-2 and NAS FT, malleable from 2 to 46 / 32 processors, or half
of them rigid at 2) on DAS-3 with Worst-Fit placement, under PRA (a job every 120 s; workloads
Wm, Wmr) and PWA (every 30 s; W'm, W'mr), each with FPSMA and EGS, and reports (Figures 7, 8):
malleability gives higher utilization and shorter execution times, and PWA with EGS on W'm has
far worse response times, from higher wait times caused by its higher utilization.

Two settings are compared, and the ablation toggles their differences one at a time:

- **today**: the whole of DAS-3 for KOALA, resizes free (the generator's jobs), no other users.
- **paper**: the testbed as the paper describes it: local users' jobs bypassing KOALA
  (``background_jobs`` at ``BACKGROUND`` of each cluster, preempting grown processors) and
  ``LATENCY`` seconds without progress per grow or shrink (DYNACO and GRAM at work).
- ablation rows: each of background load, resize latency, and a cluster share of 25% (a
  static form of contention, the previous check's) alone.

Headline: the mean response time of EGS over FPSMA's on the same workload (per seed, then a
95% bootstrap interval of the mean ratio, ``hpcgym.bench.stats.interval``), under PWA on W'm
(the paper: far above 1) and under PRA on the same W'm (to show where the approaches differ),
and PWA's response over PRA's. Every run's metrics count KOALA's jobs only.

    hpcgym papers koala [--quick] [--seeds 30] [--csv rows.csv] [--out f.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import write_csv, write_text
from hpcgym.baselines.koala.background import background_jobs
from hpcgym.baselines.koala.scheduler import Koala
from hpcgym.bench.papers import Progress, counted, marked, preview_note
from hpcgym.bench.stats import Estimate, interval
from hpcgym.sim import Cluster, FixedCost, Platform, Simulator
from hpcgym.workloads import generate_koala

INTERARRIVAL = {"PRA": 120.0, "PWA": 30.0}
"""The paper's inter-arrival times (PRA: Wm, Wmr; PWA: W'm, W'mr)."""
BACKGROUND = 0.5
"""Mean share of each cluster local users ask for in the paper setting (**choice**: the paper
gives no figure; DAS-3 is a shared research testbed)."""
LATENCY = 30.0
"""Seconds without progress per grow or shrink in the paper setting (**choice**: the paper
measures none; a grow submits GRAM jobs and a shrink waits for processes to stop)."""
SHARE = 0.25
"""Share of each cluster left to KOALA in the static-contention ablation row."""
QUICK_SEEDS = 6
FULL_SEEDS = 30
FIRST_LOCAL_ID = 100_000
"""Ids of local jobs start here (KOALA's jobs are 1..300)."""


@dataclass(frozen=True)
class Setting:
    """Where KOALA runs: background load, resize latency, the share of each cluster."""

    name: str
    background: float = 0.0
    latency: float = 0.0
    share: float = 1.0


TODAY = Setting("today: whole DAS-3, free resizes, no local users")
PAPER = Setting(
    f"paper: local users {BACKGROUND:.0%}, resize latency {LATENCY:g} s", BACKGROUND, LATENCY
)
ABLATION = (
    TODAY,
    Setting(f"local users {BACKGROUND:.0%} only", background=BACKGROUND),
    Setting(f"resize latency {LATENCY:g} s only", latency=LATENCY),
    Setting(f"{SHARE:.0%} of each cluster only", share=SHARE),
    PAPER,
)


def platform(full: Platform, share: float) -> Platform:
    """Each cluster cut to ``share`` of its processors (the rest busy with local users)."""
    if share >= 1.0:
        return full
    return Platform(tuple(Cluster(max(2, int(c.nodes * share)), c.name) for c in full.clusters))


def simulate(
    setting: Setting, variant: str, approach: str, policy: str, seed: int, interarrival: float
) -> dict[str, Any]:
    """One run: ``policy`` is ``fpsma``, ``egs`` or ``none`` (no malleability management).

    ``variant`` is ``Wm`` or ``Wmr`` (half the jobs rigid); ``approach`` ``PRA`` or ``PWA``.
    """
    w = generate_koala(
        seed, interarrival=interarrival, rigid_fraction=0.5 if variant == "Wmr" else 0
    )
    jobs = list(w.jobs)
    if setting.latency > 0:
        jobs = [dataclasses.replace(j, reconfig=FixedCost(setting.latency)) for j in jobs]
    plat = platform(w.platform, setting.share)
    local: dict[int, int] = {}
    if setting.background > 0:
        span = jobs[-1].submit + 4 * 3600.0
        extra, local = background_jobs(
            plat, load=setting.background, span=span, seed=10_000 + seed, first_id=FIRST_LOCAL_ID
        )
        jobs = sorted(jobs + extra, key=lambda j: (j.submit, j.id))
    sim = Simulator(plat, jobs)
    if policy == "none":
        sched = Koala(approach="none", background=local)
    else:
        sched = Koala(approach=approach.lower(), policy=policy, background=local)
    sched.run(sim)
    res = sim.result()
    table = res.jobs[res.jobs["id"] < FIRST_LOCAL_ID]
    n = len(table)
    return {
        "setting": setting.name,
        "workload": variant if approach == "PRA" else variant.replace("W", "W'"),
        "approach": approach,
        "interarrival": interarrival,
        "policy": policy.upper() if policy != "none" else "static",
        "seed": seed,
        "utilization": res.summary["utilization"],
        "run": float(table["run"].mean()),
        "wait": float(table["wait"].mean()),
        "response": float(table["response"].mean()),
        "max_size": float(table["max_nodes_held"].mean()),
        "grows/job": sched.grows / n,
        "shrinks/job": sched.shrinks / n,
        "local_preemptions/job": sched.preempted / n,
    }


def cases(seeds: int) -> Iterable[tuple[Setting, str, str, str, int, float]]:
    """Every run of the check.

    The paper's four workloads under today's and the paper's setting, then the ablation (W'm
    under PRA and PWA, FPSMA and EGS, in each setting).
    """
    for setting in (TODAY, PAPER):
        for approach in ("PRA", "PWA"):
            for variant in ("Wm", "Wmr"):
                for policy in ("none", "fpsma", "egs"):
                    for seed in range(seeds):
                        yield setting, variant, approach, policy, seed, INTERARRIVAL[approach]
    for setting in ABLATION:
        for approach in ("PRA", "PWA"):
            for policy in ("fpsma", "egs"):
                for seed in range(seeds):
                    if approach == "PWA" and setting in (TODAY, PAPER):
                        continue  # already run above
                    yield setting, "Wm", approach, policy, seed, INTERARRIVAL["PWA"]


def runs(seeds: int) -> pd.DataFrame:
    """Every run of the check, one row each."""
    todo = list(cases(seeds))
    return pd.DataFrame(list(counted((simulate(*c) for c in todo), Progress(len(todo)))))


def _fmt(e: Estimate, digits: str = ".0f") -> str:
    return f"{e.value:{digits}} [{e.low:{digits}}, {e.high:{digits}}]"


def _ratio(df: pd.DataFrame, num: dict[str, str], den: dict[str, str]) -> Estimate:
    """Per-seed ratio of mean responses, and the bootstrap interval of its mean."""

    def pick(sel: dict[str, str]) -> pd.Series:
        mask = np.ones(len(df), dtype=bool)
        for k, v in sel.items():
            mask &= (df[k] == v).to_numpy()
        return df[mask].set_index("seed")["response"].sort_index()

    a, b = pick(num), pick(den)
    return interval((a / b).to_numpy())


def report(df: pd.DataFrame, preview: bool = False) -> str:
    """The workload table (both settings), then the ablation of the headline ratios.

    ``preview`` (the quick check's few seeds): each verdict is marked as a preview.
    """
    seeds = df["seed"].nunique()
    lines = [
        f"Seeds per cell: {seeds}; [low, high]: 95% bootstrap interval of the mean over seeds.",
        "",
        "| setting | workload | policy | utilization | run (s) | wait (s) | response (s) "
        "| shrinks/job | local preemptions/job |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    main = df[df["interarrival"] == df["approach"].map(INTERARRIVAL)]  # the paper's four workloads
    main = main[main["setting"].isin([TODAY.name, PAPER.name])]
    for (setting, workload, policy), part in main.groupby(
        ["setting", "workload", "policy"], sort=False
    ):
        resp = interval(part["response"].to_numpy())
        short = str(setting).split(":")[0]
        lines.append(
            f"| {short} | {workload} | {policy} | {part['utilization'].mean():.1%} "
            f"| {part['run'].mean():.0f} | {part['wait'].mean():.0f} | {_fmt(resp)} "
            f"| {part['shrinks/job'].mean():.2f} | {part['local_preemptions/job'].mean():.2f} |"
        )
    lines += [
        "",
        "Ablation on W'm (a job every 30 s), response-time ratios (per seed, then the mean):",
        "",
        "| setting | PWA: EGS / FPSMA | PRA: EGS / FPSMA | PWA / PRA, FPSMA | PWA / PRA, EGS "
        "| PWA response FPSMA / EGS (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    wm = df[(df["workload"].isin(["W'm", "Wm"])) & (df["interarrival"] == INTERARRIVAL["PWA"])]
    for setting in ABLATION:
        part = wm[wm["setting"] == setting.name]
        if part.empty:
            continue
        pwa_ratio = _ratio(
            part, {"approach": "PWA", "policy": "EGS"}, {"approach": "PWA", "policy": "FPSMA"}
        )
        pra_ratio = _ratio(
            part, {"approach": "PRA", "policy": "EGS"}, {"approach": "PRA", "policy": "FPSMA"}
        )
        fp = _ratio(
            part, {"approach": "PWA", "policy": "FPSMA"}, {"approach": "PRA", "policy": "FPSMA"}
        )
        eg = _ratio(
            part, {"approach": "PWA", "policy": "EGS"}, {"approach": "PRA", "policy": "EGS"}
        )
        pwa = part[part["approach"] == "PWA"].groupby("policy")["response"].mean()
        verdict = marked("EGS worse (paper's direction)" if pwa_ratio.low > 1.0 else "no", preview)
        lines.append(
            f"| {setting.name} | {_fmt(pwa_ratio, '.3f')} ({verdict}) | {_fmt(pra_ratio, '.3f')} "
            f"| {_fmt(fp, '.3f')} | {_fmt(eg, '.3f')} | {pwa['FPSMA']:.0f} / {pwa['EGS']:.0f} |"
        )
    if preview:
        lines += ["", preview_note(f"{seeds} seeds per cell", "`hpcgym papers koala`").rstrip()]
    return "\n".join(lines) + "\n"


def run(quick: bool, out: Path | None) -> str:
    """Run the check (``quick``: fewer seeds) and return its markdown; write it to ``out``."""
    text = _check(QUICK_SEEDS if quick else FULL_SEEDS)
    if out is not None:
        write_text(out, text)
    return text


def _check(seeds: int, csv: str | None = None) -> str:
    t0 = time.perf_counter()
    df = runs(seeds)
    if csv:
        write_csv(csv, df, index=False)
    text = report(df, preview=seeds < FULL_SEEDS)
    return text + f"\n{len(df)} simulations in {time.perf_counter() - t0:.0f} s.\n"


def command(args: argparse.Namespace) -> str:
    """``hpcgym papers koala [--quick] [--seeds N] [--csv F] [--out F]`` (its cli module)."""
    text = _check(args.seeds or (QUICK_SEEDS if args.quick else FULL_SEEDS), args.csv)
    if args.out:
        write_text(args.out, text)
    return text


if __name__ == "__main__":
    from hpcgym.bench.papers.cli import alias

    raise SystemExit(alias("koala"))
