"""How the judged malleable scenarios' rankings move when resizes cost more.

Plays every heuristic and trivial rule of a judged scenario (``hpcgym.bench.judged``) on its
episodes with MEBF's resize costs (``alpha*|dN| + beta/N``, ``alpha``, ``beta`` uniform in
[0.005, 0.05] s, the paper's setting) multiplied by each factor (the ``resize_cost`` option of
the MEBF sets: the same jobs, only the costs scaled), and prints per factor and policy: mean
bounded stretch with its 95% bootstrap interval, mean response, makespan, utilization and
resizes per job. The table of ``docs/results.md`` ("Resize costs") is this script's output.

    python studies/probes/resize_cost_sensitivity.py malleable-small-v3 --factors 0 1 10 100 1000
    python studies/probes/resize_cost_sensitivity.py malleable-small-kth-v1 --split validation
    python studies/probes/resize_cost_sensitivity.py malleable-small-v3 --factors 0 1 1000 \
        --only easy-min mebf-f1 --policy agents/malleable-100k/s{0,1,2,3,4}/best

``--policy`` adds saved agents (their rows are pooled as one policy, ``agents``: the mean over
the agents and episodes, the interval over episodes of the agents' mean); ``--only`` keeps those
heuristics.
"""

from __future__ import annotations

import argparse
from multiprocessing import Pool
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.judged import NOT_HEURISTICS
from hpcgym.bench.scenarios import get, on_split
from hpcgym.bench.stats import interval


def _tables(job: tuple[str, str, float, str]) -> tuple[float, str, pd.DataFrame]:
    name, split, factor, policy = job
    sc = on_split(get(name), split)
    kwargs = dict(sc.env_kwargs)
    workload_options = {**kwargs.get("workload_options", {}), "resize_cost": factor}
    if "workload" not in kwargs:  # the preset's set: keep its own options
        workload_options = {"n_jobs": None, **workload_options}
    kwargs["workload_options"] = workload_options
    return factor, policy, evaluate([policy], sc.env_id, list(sc.seeds), kwargs)


def _pooled(
    played: list[tuple[float, str, pd.DataFrame]], agents: set[str]
) -> list[tuple[float, str, pd.DataFrame]]:
    """Heuristics as played; the agents' tables of one factor averaged per episode seed."""
    out = [(f, p, t) for f, p, t in played if p not in agents]
    for factor in dict.fromkeys(f for f, _, _ in played):
        mine = [t for f, p, t in played if f == factor and p in agents]
        if mine:
            both = pd.concat(mine).groupby("seed", sort=False).mean(numeric_only=True)
            out.append((factor, "agents", both.reset_index()))
    return out


def _row(
    factor: float, policy: str, table: pd.DataFrame, metric: str
) -> tuple[float, str, dict[str, Any]]:
    est = interval(table[metric].to_numpy(dtype=float))
    resizes = (table["reconfigurations"] / table["jobs"].clip(lower=1)).mean()
    row = {
        "mean": est.value,
        "low": est.low,
        "high": est.high,
        "response": float(table["mean_response"].mean()),
        "makespan": float(table["makespan"].mean()),
        "utilization": float(table["utilization"].mean()),
        "resizes": float(resizes),
        "episodes": len(table),
    }
    return factor, policy, row


def main() -> None:
    """Print the sensitivity table as markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", help="a judged scenario (malleable-small-v3, ...)")
    parser.add_argument("--factors", type=float, nargs="+", default=[0.0, 1.0, 10.0])
    parser.add_argument("--split", choices=("test", "validation"), default="test")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--policy", nargs="+", default=[], help="saved agents to add")
    parser.add_argument("--only", nargs="+", default=None, help="these heuristics only")
    args = parser.parse_args()
    sc = on_split(get(args.scenario), args.split)
    heuristics = [p for p in sc.policies if p not in NOT_HEURISTICS]
    if args.only:
        heuristics = [p for p in heuristics if p in args.only]
    runs = [*heuristics, *args.policy]
    jobs = [(args.scenario, args.split, f, p) for f in args.factors for p in runs]
    with Pool(args.workers) as pool:
        played = pool.map(_tables, jobs)
    rows = [_row(f, p, table, sc.metric) for f, p, table in _pooled(played, set(args.policy))]
    policies = [*heuristics, *(["agents"] if args.policy else [])]
    print(f"## {sc.name}: {len(sc.seeds)} episodes, {sc.metric} (best heuristic named on "
          f"validation: {get(args.scenario).best_heuristic})\n")  # fmt: skip
    print("| resize cost | policy | mean [95% CI] | mean response (s) | makespan (s) | "
          "utilization | resizes/job |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|---:|")
    for factor in args.factors:
        mine = sorted((r for r in rows if r[0] == factor), key=lambda r: r[2]["mean"])
        for _, policy, r in mine:
            ci = f"{r['mean']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
            print(
                f"| x{factor:g} | {policy} | {ci} | {r['response']:,.0f} | {r['makespan']:,.0f} "
                f"| {r['utilization']:.3f} | {r['resizes']:.2f} |"
            )
    means = {(f, p): r["mean"] for f, p, r in rows}
    for factor in args.factors:
        best = min(policies, key=lambda p: means[(factor, p)])
        print(f"\nx{factor:g}: lowest mean {best} ({means[(factor, best)]:.2f})", end="")
    print()
    assert np.isfinite(list(means.values())).all()


if __name__ == "__main__":
    main()
