"""Choosing a planner's settings, and bounds for it (issue 19).

The planner is :class:`hpcgym.agents.engine.lookahead.LookaheadReserve` (F1's reserve mode choosing
by forward plays over sampled future arrivals; its module doc says how). This script plays it
and F1 on sets of 1,024-job lublin_256 sequences and prints both with 95% bootstrap intervals
and the paired win rate, to choose its four settings (``--candidates``, ``--horizon``,
``--samples``, ``--align``) on sequences no test uses, and to bound it: ``--horizon 0`` looks
at the visible queue alone; ``--oracle`` plays each sequence's true next arrivals (clairvoyant:
a bound, not a scheduler).

``--where``:

* ``tune``: 30 sequences inside lublin_256's jobs [3500, 6975) (the second half of the train
  split), pool (the jobs futures are sampled from) jobs [0, 3500); ``--backfill`` for
  ``f1-reserve-bf``'s rules.
* an ``rlsched-*`` scenario: its sequences and mode, pool lublin_256's train split
  (``--pool lublin``, node counts scaled to the scenario's machine) or the scenario's own
  trace's train split (``--pool own``). The shipped planners are benchmarked with ``hpcgym
  bench``; this is for looking around.

    python studies/probes/rollout_probe.py --where tune --backfill --horizon 64 --samples 32 --align

Results: ``studies/rlscheduler-agents.md`` ("A planner with sampled futures").
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from functools import cache
from multiprocessing import Pool
from typing import Any

import numpy as np

from hpcgym.agents.engine.lookahead import Item, LookaheadReserve, item
from hpcgym.baselines.base import runtime_estimate
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench import scenarios
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.sim import JobSpec, Simulator
from hpcgym.workloads.registry import load
from hpcgym.workloads.rlsched import split_starts
from hpcgym.workloads.splits import time_splits

LENGTH = 1024
TRAIN_STOP = 6975
TUNE_FIRST = 3500


class Oracle(LookaheadReserve):
    """The planner playing the episode's true next arrivals (clairvoyant: a bound)."""

    def __init__(self, jobs: list[JobSpec], **kwargs: Any) -> None:
        super().__init__(jobs, 1, **kwargs)
        self.jobs = jobs

    def _futures(self, now: float) -> list[list[Item]]:
        ahead = [j for j in self.jobs if j.submit > now][: self.horizon]
        return [[item(j.submit, runtime_estimate(j), j.nodes) for j in ahead]]


LUBLIN = "rlsched/lublin256-v0"


@cache
def _workload(name: str) -> Any:
    return load(name)


@cache
def setup(where: str, pool: str) -> tuple[str, list[int], list[JobSpec], int]:
    """The workload, the sequences' starts, the pool futures are sampled from, its nodes.

    ``pool="lublin"``: lublin_256's train split (jobs [0, 3500) when tuning). ``pool="own"``:
    the target trace's own train split. The planner scales pool node counts to the target
    machine.
    """
    if where == "tune":
        name, starts = LUBLIN, split_starts(TUNE_FIRST, TRAIN_STOP, 30, length=LENGTH)
    else:
        sc = scenarios.get(where)
        if sc.env_kwargs.get("selection") != "reserve":
            raise SystemExit(f"{where}: the planner plays RLScheduler's reserve mode only")
        name, starts = sc.env_kwargs["workload"], list(sc.env_kwargs["window_starts"])
    source = _workload(LUBLIN if pool == "lublin" else name)
    jobs = source.jobs[: time_splits(source)["train"].stop]
    if where == "tune":
        jobs = jobs[:TUNE_FIRST]
    return name, starts, list(jobs), source.platform.clusters[0].nodes


def backfills(where: str, backfill: bool) -> bool:
    """Whether sequences of ``where`` are played with backfilling (a scenario says it)."""
    if where == "tune":
        return backfill
    return bool(scenarios.get(where).env_kwargs.get("reserve_backfill"))


def play(task: tuple[str, str, int, bool, dict[str, Any] | None]) -> float:
    """Mean bounded slowdown of sequence ``index``: F1 (``None``) or the planner."""
    where, pool, index, backfill, opts = task
    name, starts, jobs_pool, pool_nodes = setup(where, pool)
    workload = _workload(name)
    first = starts[index]
    jobs = workload.jobs[first : first + LENGTH]
    if opts is None:
        sched: PriorityReserve = PriorityReserve("f1", backfill)
    else:
        opts = dict(opts)
        skip = name == (LUBLIN if pool == "lublin" else name)
        if opts.pop("oracle"):
            opts.pop("samples")
            sched = Oracle(jobs, **opts, backfill=backfill)
        else:
            sched = LookaheadReserve(
                jobs_pool, pool_nodes, **opts, backfill=backfill, skip_own=skip
            )
    sched.setting(jobs, CONFIG)
    sim = Simulator(workload.platform, jobs, CONFIG)
    sched.run(sim)
    return float(sim.result().summary["mean_bsld"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--where", default="tune", help="'tune' or an rlsched-* scenario without -bf")
    ap.add_argument("--pool", choices=("lublin", "own"), default="lublin")
    ap.add_argument("--backfill", action="store_true", help="with --where tune: backfilling")
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--horizon", type=int, default=32)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--align", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="the planner's sampling seed")
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--out", help="write the result as JSON here (never overwritten)")
    args = ap.parse_args()
    opts = {
        "candidates": args.candidates,
        "horizon": args.horizon,
        "samples": args.samples,
        "align": args.align,
        "seed": args.seed,
        "oracle": args.oracle,
    }
    n = len(setup(args.where, args.pool)[1])
    bf = backfills(args.where, args.backfill)
    t0 = time.perf_counter()
    with Pool(2) as workers:
        f1 = np.array(workers.map(play, [(args.where, args.pool, i, bf, None) for i in range(n)]))
        tasks = [(args.where, args.pool, i, bf, opts) for i in range(n)]
        mine = np.array(workers.map(play, tasks, chunksize=1))
    result = {
        "where": args.where,
        "pool": args.pool,
        "backfill": bf,
        **opts,
        "seconds": round(time.perf_counter() - t0, 1),
        "f1": asdict(interval(f1)),
        "planner": asdict(interval(mine)),
        "f1_iqm": asdict(interval(f1, "iqm")),
        "planner_iqm": asdict(interval(mine, "iqm")),
        "win_over_f1": asdict(paired_win_rate(mine, f1)),
        "per_episode": {"f1": list(map(float, f1)), "planner": list(map(float, mine))},
    }
    print(json.dumps({k: v for k, v in result.items() if k != "per_episode"}))
    if args.out:
        with open(args.out, "x") as f:
            f.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
