"""Probe: does lookahead over the queue and sampled future arrivals beat F1? (issue 19)

Not an agent: a planner, measured to learn whether state-dependent decisions hold a held-out
gain over F1 that no static score found (``benchmarks/learned_score.py`` found none without
backfilling). If it does, it is a teacher an agent could imitate.

The planner plays RLScheduler's reserve mode without backfilling (``f1-reserve``'s rules). At
each choice with more than one queued job it takes F1's ``--candidates`` best-ranked jobs and,
for each, plays the future forward: that candidate first, then F1's rule (commit to the
best-ranked queued job, start it when it fits), the running jobs ending at their estimated
ends, over the visible queue plus ``--horizon`` future arrivals. The future is unknown to a
scheduler, so it is *sampled*: ``--samples`` runs of consecutive jobs taken from a pool of
other jobs of the workload, their arrival gaps kept, the first arriving one gap after now
(``--align``: runs starting within half an hour of now's time of day). Every candidate is
played against the same samples; the planner commits to the one with the lowest total of
bounded slowdowns (ties: F1's choice). ``--horizon 0`` is the visible queue alone;
``--oracle`` plays the episode's true next arrivals instead (clairvoyant: a bound, not a
scheduler).

Sequences and pools, chosen so no sampled run overlaps the sequences it is scored on:

* ``--split tune``: 30 sequences of 1,024 jobs inside lublin_256's jobs [3500, 6975) (the
  second half of the train split), pool jobs [0, 3500). For choosing the planner's settings.
* ``--split test``: ``rlsched-lublin-test-v0``'s 30 sequences (the test split), pool the
  whole train split, jobs [0, 6975).

Runtime estimates are lublin_256's run times (the trace gives no request), as for F1.

    python benchmarks/rollout_probe.py --split tune [--candidates 4 --horizon 32 --samples 16]

Results: ``docs/rlscheduler.md`` ("A planner with sampled futures").
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import time
from dataclasses import asdict
from functools import cache
from multiprocessing import Pool
from typing import Any

import numpy as np

from hpcgym.baselines.base import estimated_end, runtime_estimate
from hpcgym.baselines.priority import F1_SUBMIT_WEIGHT, MIN_TIME, PriorityReserve
from hpcgym.bench import scenarios
from hpcgym.bench.papers.rlscheduler import CONFIG
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.sim import JobSpec, Simulator
from hpcgym.sim.planning import shadow
from hpcgym.workloads.registry import load
from hpcgym.workloads.rlsched import split_starts
from hpcgym.workloads.splits import time_splits

LENGTH = 1024
TAU = 10.0
DAY = 86_400.0
ALIGN = 1_800.0
TRAIN_STOP = 6975
TUNE_FIRST = 3500

Item = tuple[float, float, float, int]
"""A job in a forward play: ``(F1 key, submit, run, nodes)``."""


def item(submit: float, run: float, nodes: int) -> Item:
    """The job as a forward play sees it (F1's key as ``f1_score`` computes it)."""
    key = math.log10(run if run > 0 else MIN_TIME) * nodes + F1_SUBMIT_WEIGHT * math.log10(
        submit if submit > 0 else MIN_TIME
    )
    return (key, submit, run, nodes)


def forward_cost(
    now: float,
    free: int,
    releases: list[tuple[float, int]],
    queue: list[Item],
    first: int,
    arrivals: list[Item],
) -> float:
    """Total bounded slowdown of the queue and ``arrivals`` (sorted by submit) played forward.

    ``queue[first]`` is committed to first; afterwards F1's reserve rule without backfilling.
    """
    heap = list(releases)
    heapq.heapify(heap)
    waiting = [x for i, x in enumerate(queue) if i != first]
    heapq.heapify(waiting)
    t, cost, a, na = now, 0.0, 0, len(arrivals)
    nxt = queue[first]
    while True:
        _, submit, run, n = nxt
        while free < n:
            end, size = heapq.heappop(heap)
            t = max(t, end)
            free += size
        free -= n
        heapq.heappush(heap, (t + run, n))
        cost += max(1.0, (t - submit + run) / max(run, TAU))
        while a < na and arrivals[a][1] <= t:
            heapq.heappush(waiting, arrivals[a])
            a += 1
        if not waiting:
            if a == na:
                return cost
            t = max(t, arrivals[a][1])
            heapq.heappush(waiting, arrivals[a])
            a += 1
        nxt = heapq.heappop(waiting)


def forward_cost_backfill(
    now: float,
    free: int,
    releases: list[tuple[float, int]],
    queue: list[Item],
    first: int,
    arrivals: list[Item],
) -> float:
    """As :func:`forward_cost`, under F1's reserve rule *with* backfilling (``f1-reserve-bf``).

    While the committed job does not fit, its reservation is the earliest estimated end by
    which enough nodes are free (fixed until it starts); at that instant and at every later
    event (an end or an arrival) any waiting job, in submission order, starts if it fits now
    and ends strictly before the reservation.
    """
    heap = list(releases)
    heapq.heapify(heap)
    # Waiting jobs in submission order (ties by F1 key, as the engine's submission order).
    waiting = sorted((x for i, x in enumerate(queue) if i != first), key=lambda x: x[1])
    t, cost, a, na = now, 0.0, 0, len(arrivals)
    chosen: Item | None = queue[first]
    limit = shadow(t, free, queue[first][3], sorted(heap))[0]
    while True:
        while chosen is not None and chosen[3] <= free:
            _, submit, run, n = chosen
            free -= n
            heapq.heappush(heap, (t + run, n))
            cost += max(1.0, (t - submit + run) / max(run, TAU))
            chosen = min(waiting) if waiting else None
            if chosen is not None:
                waiting.remove(chosen)
                limit = shadow(t, free, chosen[3], sorted(heap))[0]
        if chosen is None:
            if a == na:
                return cost
        else:
            i = 0
            while i < len(waiting) and free > 0:
                _, submit, run, n = waiting[i]
                if n <= free and t + run < limit:
                    free -= n
                    heapq.heappush(heap, (t + run, n))
                    cost += max(1.0, (t - submit + run) / max(run, TAU))
                    del waiting[i]
                else:
                    i += 1
        # The next event: an end or an arrival (every one at that instant).
        nxt = heap[0][0] if heap else math.inf
        if a < na and arrivals[a][1] < nxt:
            nxt = arrivals[a][1]
        t = nxt
        while heap and heap[0][0] <= t:
            free += heapq.heappop(heap)[1]
        while a < na and arrivals[a][1] <= t:
            waiting.append(arrivals[a])
            a += 1
        if chosen is None and waiting:
            chosen = min(waiting)
            waiting.remove(chosen)
            limit = shadow(t, free, chosen[3], sorted(heap))[0]


class SampledLookahead(PriorityReserve):
    """F1's reserve mode choosing among F1's best candidates by forward plays.

    Args:
        pool: ``(submit, run estimate, nodes)`` of the jobs futures are sampled from, in
            submission order.
        candidates, horizon, samples: As the module doc says.
        seed: Seeds the sampling.
        align: Sample only runs that start within :data:`ALIGN` of now's time of day.
        oracle: Play these jobs' true next arrivals instead of samples (a bound).
        skip: Pool indices ``[a, b)`` no sampled run may touch (the sequence being played).
        backfill: Play and look ahead with ``f1-reserve-bf``'s backfilling.
    """

    name = "sampled-lookahead-reserve"

    def __init__(
        self,
        pool: list[tuple[float, float, int]],
        candidates: int,
        horizon: int,
        samples: int,
        seed: int,
        align: bool = False,
        oracle: list[JobSpec] | None = None,
        skip: tuple[int, int] | None = None,
        backfill: bool = False,
    ) -> None:
        super().__init__("f1", backfill)
        self.forward = forward_cost_backfill if backfill else forward_cost
        self.pool = pool
        self.submits = np.array([p[0] for p in pool])
        self.candidates, self.horizon, self.samples = candidates, horizon, samples
        self.rng = np.random.default_rng(seed)
        self.align = align
        self.oracle = oracle
        starts = np.arange(1, len(pool) - horizon + 1)
        if skip is not None:
            # The run [i - 1, i + horizon) must not intersect [a, b).
            a, b = skip
            starts = starts[(starts + horizon <= a) | (starts - 1 >= b)]
        if len(starts) == 0 and horizon > 0 and oracle is None:
            raise ValueError("the pool holds no run of the horizon's length")
        self.starts = starts

    def _futures(self, now: float) -> list[list[Item]]:
        h = self.horizon
        if h == 0:
            return [[]]
        if self.oracle is not None:
            ahead = [j for j in self.oracle if j.submit > now][:h]
            return [[item(j.submit, runtime_estimate(j), j.nodes) for j in ahead]]
        s = self.submits
        starts = self.starts
        if self.align:
            off = (s[starts] - now) % DAY
            near = starts[np.minimum(off, DAY - off) < ALIGN]
            starts = near if len(near) else starts
        out = []
        for i in self.rng.choice(starts, self.samples):
            base = s[i - 1]
            out.append([item(now + sub - base, run, n) for sub, run, n in self.pool[i : i + h]])
        return out

    def choose(self, sim: Simulator, free: int) -> int:
        now = sim.now
        rank = self._rank
        ranked = sorted(sim.queue.values(), key=lambda j: rank.key(j, now))
        if len(ranked) == 1:
            return ranked[0].spec.id
        releases = [(estimated_end(sim, j), j.size) for j in sim.running.values()]
        queue = [item(j.spec.submit, runtime_estimate(j.spec), j.spec.nodes) for j in ranked]
        futures = self._futures(now)
        best, best_cost = 0, math.inf
        for c in range(min(self.candidates, len(ranked))):
            cost = sum(self.forward(now, free, releases, queue, c, f) for f in futures)
            if cost < best_cost - 1e-9:
                best, best_cost = c, cost
        return ranked[best].spec.id


LUBLIN = "rlsched/lublin256-v0"


@cache
def _workload(name: str) -> Any:
    return load(name)


@cache
def setup(where: str, pool: str) -> tuple[str, list[int], list[tuple[float, float, int]]]:
    """The workload, the sequences' starts, and the pool (items, submit times on the trace clock).

    ``pool="lublin"``: lublin_256's train split (jobs [0, 3500) when tuning), node counts rescaled
    to the target machine (``round(n * N / 256)``, between 1 and ``N``) when it has other than
    256 nodes. ``pool="own"``: the target trace's own train split.
    """
    if where == "tune":
        name, starts = LUBLIN, split_starts(TUNE_FIRST, TRAIN_STOP, 30, length=LENGTH)
    else:
        sc = scenarios.get(where)
        if sc.env_kwargs.get("selection") != "reserve":
            raise SystemExit(f"{where}: the planner plays RLScheduler's reserve mode only")
        name, starts = sc.env_kwargs["workload"], list(sc.env_kwargs["window_starts"])
    nodes = _workload(name).platform.clusters[0].nodes
    source = LUBLIN if pool == "lublin" else name
    train = _workload(source).jobs[: time_splits(_workload(source))["train"].stop]
    if where == "tune":
        train = train[:TUNE_FIRST]
    scale = nodes / _workload(source).platform.clusters[0].nodes
    items = [
        (j.submit, runtime_estimate(j), min(nodes, max(1, round(j.nodes * scale)))) for j in train
    ]
    return name, starts, items


def backfills(where: str, backfill: bool) -> bool:
    """Whether sequences of ``where`` are played with backfilling (a scenario says it)."""
    if where == "tune":
        return backfill
    return bool(scenarios.get(where).env_kwargs.get("reserve_backfill"))


def play(task: tuple[str, str, int, bool, dict[str, Any] | None]) -> float:
    """Mean bounded slowdown of sequence ``index``: F1 (``None``) or the planner."""
    where, pool, index, backfill, opts = task
    name, starts, items = setup(where, pool)
    workload = _workload(name)
    first = starts[index]
    jobs = workload.jobs[first : first + LENGTH]
    if opts is None:
        sched: PriorityReserve = PriorityReserve("f1", backfill)
    else:
        opts = dict(opts)
        oracle = jobs if opts.pop("oracle") else None
        # The pool's own copy of this sequence (and its next arrivals) is never sampled.
        skip = (first, first + LENGTH) if name == (LUBLIN if pool == "lublin" else name) else None
        sched = SampledLookahead(
            items, seed=index, oracle=oracle, skip=skip, backfill=backfill, **opts
        )
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
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--out", help="write the result as JSON here (never overwritten)")
    args = ap.parse_args()
    opts = {
        "candidates": args.candidates,
        "horizon": args.horizon,
        "samples": args.samples,
        "align": args.align,
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
