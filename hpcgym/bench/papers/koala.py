"""Paper check: KOALA's malleability management on the GADGET-2/FT mix (Buisson et al. 2007).

The paper runs 300 jobs (GADGET-2 and NAS FT, malleable from 2 to 46 / 32 processors, or half
of them rigid at 2) on DAS-3 with Worst-Fit placement, under PRA (a job every 120 s; workloads
Wm, Wmr) and PWA (every 30 s; W'm, W'mr), each with FPSMA and EGS, and reports (Figures 7, 8)
processors per job, execution and response times, utilization and malleability operations:
malleability gives higher utilization and shorter execution times, and PWA with EGS on W'm has
far worse response times, from higher wait times caused by its higher utilization.

Here every workload of ``synthetic/koala-mix-v0`` (seeds ``0..--seeds-1``) runs under the
matching approach with FPSMA and EGS, and under ``approach="none"`` (Worst-Fit placement only,
malleable jobs kept at their initial 2 processors) as the no-malleability reference. A heavier
PWA load (a job every ``--heavy`` seconds, same generator) is added as a sensitivity run, and
``--reconfig`` seconds of fixed resize cost as another (the generator's jobs resize for free),
and a contended platform where only ``--share`` of each cluster is left to KOALA (with the
resize cost), since on the whole of DAS-3 the mix hardly ever competes for processors.

Metrics: ``used`` (mean processors allocated over the makespan), utilization (``used`` over
DAS-3's 544 processors), mean execution (``run``), wait and response times, mean of each job's
largest size, grow and shrink operations per job.

    python -m hpcgym.bench.papers.koala [--seeds 5] [--heavy 15] [--reconfig 10] [--out f.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import pandas as pd

from hpcgym.baselines.koala.scheduler import Koala
from hpcgym.bench.papers import publish
from hpcgym.sim import Cluster, FixedCost, Platform, Simulator
from hpcgym.workloads import generate_koala, load
from hpcgym.workloads.workload import Workload

INTERARRIVAL = {"PRA": 120.0, "PWA": 30.0}


def workload(variant: str, approach: str, seed: int, interarrival: float | None) -> Workload:
    """A KOALA mix: the registered set, or the generator at another inter-arrival time."""
    if interarrival is None:
        return load("synthetic/koala-mix-v0", seed=seed, variant=variant, approach=approach)
    rigid = 0.5 if variant == "Wmr" else 0.0
    return generate_koala(seed, interarrival=interarrival, rigid_fraction=rigid)


def platform(full: Platform, share: float) -> Platform:
    """Each cluster cut to ``share`` of its processors (the rest busy with local users)."""
    if share >= 1.0:
        return full
    return Platform(tuple(Cluster(max(2, int(c.nodes * share)), c.name) for c in full.clusters))


def simulate(
    variant: str,
    approach: str,
    policy: str,
    seed: int,
    interarrival: float | None = None,
    reconfig: float = 0.0,
    share: float = 1.0,
) -> dict[str, Any]:
    """One run: ``policy`` is ``fpsma``, ``egs`` or ``none`` (no malleability management)."""
    w = workload(variant, approach, seed, interarrival)
    jobs = w.jobs
    if reconfig > 0:
        jobs = tuple(dataclasses.replace(j, reconfig=FixedCost(reconfig)) for j in jobs)
    plat = platform(w.platform, share)
    sim = Simulator(plat, jobs)
    if policy == "none":
        sched = Koala(approach="none")
    else:
        sched = Koala(approach=approach.lower(), policy=policy)
    t0 = time.perf_counter()
    sched.run(sim)
    res = sim.result()
    s, table = res.summary, res.jobs
    n = len(table)
    return {
        "workload": variant if approach == "PRA" else variant.replace("W", "W'"),
        "approach": approach,
        "interarrival": interarrival or INTERARRIVAL[approach],
        "reconfig": reconfig,
        "share": share,
        "policy": policy.upper() if policy != "none" else "static",
        "seed": seed,
        "used": sim.alloc_area / s["makespan"],
        "utilization": s["utilization"],
        "processors": plat.total_nodes,
        "run": s["mean_run"],
        "wait": s["mean_wait"],
        "response": s["mean_response"],
        "max_size": float(table["max_nodes_held"].mean()),
        "grows/job": sched.grows / n,
        "shrinks/job": sched.shrinks / n,
        "rejected": s["rejected"],
        "seconds": time.perf_counter() - t0,
    }


def settings(
    heavy: float, reconfig: float, share: float
) -> list[tuple[str, float | None, float, float]]:
    """(approach, inter-arrival or None for the set's, resize cost, platform share) to run."""
    out: list[tuple[str, float | None, float, float]] = [
        ("PRA", None, 0.0, 1.0),
        ("PWA", None, 0.0, 1.0),
    ]
    if heavy:
        out.append(("PWA", heavy, 0.0, 1.0))
    if reconfig:
        out += [("PRA", None, reconfig, 1.0), ("PWA", None, reconfig, 1.0)]
    if share < 1.0:
        out += [("PRA", None, reconfig, share), ("PWA", None, reconfig, share)]
    return out


def runs(seeds: int, heavy: float, reconfig: float, share: float) -> pd.DataFrame:
    """Every run of the check."""
    rows = []
    for approach, interarrival, cost, part in settings(heavy, reconfig, share):
        for variant in ("Wm", "Wmr"):
            for policy in ("none", "fpsma", "egs"):
                for seed in range(seeds):
                    rows.append(simulate(variant, approach, policy, seed, interarrival, cost, part))
    return pd.DataFrame(rows)


def report(df: pd.DataFrame) -> str:
    """Mean of every metric per setting and policy."""
    keys = ["approach", "interarrival", "reconfig", "processors", "workload", "policy"]
    metrics = ["used", "utilization", "run", "wait", "response", "max_size", "grows/job"]
    metrics += ["shrinks/job", "rejected"]
    table = df.groupby(keys, sort=False)[metrics].mean().reset_index()
    head = list(table.columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.itertuples(index=False):
        cells = [f"{v:,.3g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return f"Seeds per setting: {df['seed'].nunique()}\n\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the check and print (or write) its table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--heavy", type=float, default=15.0, help="heavier PWA inter-arrival (0: none)")
    ap.add_argument("--reconfig", type=float, default=10.0, help="resize cost run (0: none)")
    ap.add_argument("--share", type=float, default=0.25, help="contended run: cluster share")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    df = runs(args.seeds, args.heavy, args.reconfig, args.share)
    if args.csv:
        df.to_csv(args.csv, index=False)
    text = report(df) + f"\n{len(df)} simulations in {time.perf_counter() - t0:.0f} s.\n"
    publish(text, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
