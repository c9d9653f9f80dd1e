"""Distilled planners on fresh traces of the Lublin model: a check no one has looked at before.

The lublin_256 test split has been played by several distilled agents, so a choice among them
made after seeing it is not a clean held-out result. This plays F1's reserve mode and each
named sweep of distilled planners (``s<k>/distilled.json``; or of planners, ``planner.json``)
on new 1,024-job traces drawn from the Lublin-Feitelson model (``synthetic/lublin-256-v0``,
256 nodes, inter-arrival times scaled by 0.83 to lublin_256's train-split load, as the
``score-synlublin`` agents' training traces), with generator seeds 1,000,000 + i: traces used
by no training run and no earlier figure.
Each trace is one episode (RLScheduler's settings, bare engine). It prints, per policy, the mean
and the IQM bounded slowdown with 95% intervals (episodes and training seeds redrawn
together), the worst job and the paired win rate over F1, as JSON lines.

    python studies/probes/fresh_lublin.py agents/distilled-bf agents/distilled-dagger-bf \\
        --traces 60 --out fresh.json

Results: ``studies/rlscheduler-agents.md`` ("DAgger").
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench.stats import crossed_interval, interval, paired_win_rate
from hpcgym.sim import Simulator
from hpcgym.workloads.registry import load

FIRST_SEED = 1_000_000


def _play(task: tuple[int, str | None]) -> tuple[float, float]:
    seed, card = task
    w = load("synthetic/lublin-256-v0", seed=seed, n_jobs=1024, arrival_scale=0.83)
    sched: BaseScheduler = PriorityReserve("f1", True)
    if card is not None:
        agent = load_engine_card(card)
        # A planner's futures come from its pool (lublin_256's train split): no job is shared
        # with a generated trace, so none is skipped.
        sched = (
            agent.scheduler({"workload": w.name})
            if isinstance(agent, PlannerCard)
            else agent.scheduler()
        )
    jobs, config = sched.setting(w.jobs, CONFIG)
    sim = Simulator(w.platform, jobs, config)
    sched.run(sim)
    s = sim.result().summary
    return float(s["mean_bsld"]), float(s["max_bsld"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "sweeps", nargs="+", help="folders of s<k>/distilled.json or planner.json (backfilling)"
    )
    ap.add_argument("--traces", type=int, default=60)
    ap.add_argument("--max-seeds", type=int, default=None, help="play the first N seeds only")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True, help="a new JSON file (never overwritten)")
    args = ap.parse_args()
    seeds = [FIRST_SEED + i for i in range(args.traces)]
    policies: dict[str, list[str | None]] = {"f1-reserve-bf": [None]}
    for sweep in args.sweeps:
        found = [*Path(sweep).glob("s*/distilled.json"), *Path(sweep).glob("s*/planner.json")]
        cards = sorted(str(p.parent) for p in found)[: args.max_seeds]
        if not cards:
            raise SystemExit(f"error: {sweep} holds no s<k>/distilled.json or planner.json")
        for c in cards:
            if not load_engine_card(c).backfill:
                raise SystemExit(f"error: {c} plays without backfilling; this check is with it")
        policies[Path(sweep).name] = list(cards)
    out = Path(args.out)
    if out.exists():
        raise SystemExit(f"error: {out} exists, not overwritten")
    tables: dict[str, np.ndarray] = {}
    worst: dict[str, float] = {}
    with Pool(args.workers) as pool:
        for name, cards in policies.items():
            runs = pool.map(_play, [(s, c) for c in cards for s in seeds], chunksize=4)
            table = np.array([r[0] for r in runs]).reshape(len(cards), len(seeds))
            tables[name] = table
            worst[name] = max(r[1] for r in runs)
    f1 = tables["f1-reserve-bf"][0]
    rows = []
    for name, table in tables.items():
        rows.append(
            {
                "policy": name,
                "seeds": len(table),
                "traces": len(seeds),
                "first_trace_seed": FIRST_SEED,
                "mean": asdict(crossed_interval(table)),
                "iqm": asdict(crossed_interval(table, "iqm")),
                "per_seed": [float(r.mean()) for r in table],
                "worst_job": worst[name],
                "win_over_f1": asdict(paired_win_rate(table.mean(axis=0), f1)),
                "f1_mean": asdict(interval(f1)),
            }
        )
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    with open(out, "x") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
