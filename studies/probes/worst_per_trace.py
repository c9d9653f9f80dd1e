"""Each trace's worst job, policy against policy: the tail with intervals.

A test's single worst job compares one job per policy (one in a million on a 1,000-trace
scenario) and has no interval. This reads a bench run's ``results.csv`` (or
``results.parquet``) and compares, per policy and training seed, *each trace's* worst job
(``max_bsld`` by default) with a reference policy's on the same traces: the mean over the
traces with its 95% interval, the mean paired difference with its paired interval (the
traces redrawn, both policies' values of a trace together), the paired win rate and the single
worst. JSON lines, one per policy and seed.

    python studies/probes/worst_per_trace.py hpcgym-bench/<scenario>/<run> --reference f1-reserve-bf

Results: ``studies/rlscheduler-agents.md`` ("Where the worst jobs come from").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hpcgym.bench.stats import interval, paired_win_rate


def read_results(run: Path) -> pd.DataFrame:
    """The run's episode table (parquet when present: faster, same values)."""
    parquet = run / "results.parquet"
    return pd.read_parquet(parquet) if parquet.is_file() else pd.read_csv(run / "results.csv")


def compare(results: pd.DataFrame, reference: str, metric: str) -> list[dict[str, object]]:
    """Per (scenario, policy, training seed): its per-trace ``metric`` against ``reference``."""
    rows: list[dict[str, object]] = []
    seeds = results["train_seed"] if "train_seed" in results else pd.Series(np.nan, results.index)
    results = results.assign(train_seed=seeds.fillna(-1).astype(int))
    for scenario, part in results.groupby("scenario", sort=False):
        ref = part[part["policy"] == reference].set_index("seed")[metric]
        if ref.empty:
            raise SystemExit(f"error: {reference!r} did not play {scenario}")
        for (policy, train_seed), mine in part.groupby(["policy", "train_seed"], sort=False):
            values = mine.set_index("seed")[metric]
            both = values.index.intersection(ref.index)
            a, b = values.loc[both].to_numpy(float), ref.loc[both].to_numpy(float)
            if len(both) < 2:
                continue
            mean, diff = interval(a), interval(a - b)
            win = paired_win_rate(a, b)
            rows.append(
                {
                    "scenario": scenario,
                    "policy": policy,
                    "train_seed": None if train_seed < 0 else int(train_seed),
                    "traces": len(both),
                    f"mean_{metric}": [round(x, 1) for x in (mean.value, mean.low, mean.high)],
                    f"minus_{reference}": [round(x, 1) for x in (diff.value, diff.low, diff.high)],
                    "win": [round(x, 3) for x in (win.value, win.low, win.high)],
                    "worst": round(float(a.max()), 1),
                    f"{reference}_worst": round(float(b.max()), 1),
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a bench run folder")
    ap.add_argument("--reference", default="f1-reserve-bf")
    ap.add_argument("--metric", default="max_bsld")
    args = ap.parse_args()
    for row in compare(read_results(args.run), args.reference, args.metric):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
