"""EASY ordered by F1, choosing its first job by forward plays: a probe on ``rigid-lublin-v1``.

In RLScheduler's reserve mode a planner that compares F1's best-ranked jobs by playing sampled
futures forward beats F1 (``hpcgym.agents.engine.lookahead``; ``studies/rlscheduler-agents.md``).
The rigid preset's best heuristic is ``easy-f1`` (EASY backfilling over the queue ranked by F1,
re-ranked at every decision point), which no agent has beaten. This probe puts the same look-ahead
in EASY: at a decision point where not every queued job fits, each of F1's ``--candidates``
best-ranked jobs is tried *first* in the order (it starts if it fits, else it holds EASY's
reservation; the others follow in F1's order), each played forward by EASY-F1's rules over the
visible queue plus ``--horizon`` arrivals sampled from lublin_256's train split
(``--samples`` runs, time-of-day aligned, as the reserve-mode planner samples them); the order
with the lowest total bounded slowdown is used. ``--check`` verifies that the forward play,
given the true future and F1's own first job, gives ``easy-f1``'s engine schedule cost.

    python studies/probes/easy_planner_probe.py --split validation --samples 16
    python studies/probes/easy_planner_probe.py --check

Results: ``docs/results.md`` ("An EASY planner probe").
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import time
from collections.abc import Sequence
from multiprocessing import Pool

import numpy as np

from hpcgym.agents.engine.lookahead import Item, LookaheadReserve, _bsld, _pool, cheapest, item
from hpcgym.baselines.base import estimated_end, runtime_estimate
from hpcgym.baselines.priority import EasyPriority
from hpcgym.bench import scenarios
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.sim import Job, SimConfig, Simulator
from hpcgym.sim.planning import shadow

SCENARIO = "rigid-lublin-v1"
POOL = ("swf/lublin256-v0", "train")


def easy_forward_cost(
    now: float,
    free: int,
    releases: Sequence[tuple[float, int]],
    queue: Sequence[Item],
    first: int,
    arrivals: Sequence[Item],
) -> float:
    """Total bounded slowdown of ``queue`` and ``arrivals`` played forward by EASY-F1.

    At ``now`` the order is ``queue[first]`` then the others by F1's key; at every later event
    (an end or an arrival, all of one instant together) by F1's key alone. A pass starts jobs
    in order while they fit; the first that does not holds the reservation (the earliest
    estimated end by which it fits, and the nodes spare then); each later job starts if it
    fits now and either ends by the reservation or fits in the spare nodes (EASY's rule, as
    ``EasyPriority`` applies it).
    """
    heap = list(releases)
    heapq.heapify(heap)
    waiting = [x for i, x in enumerate(queue) if i != first]
    waiting.sort()
    order = [queue[first], *waiting]
    t, cost, a, na = now, 0.0, 0, len(arrivals)
    while True:
        rest: list[Item] = []
        i = 0
        while i < len(order) and order[i][3] <= free:
            _, submit, run, n = order[i]
            free -= n
            heapq.heappush(heap, (t + run, n))
            cost += _bsld(t - submit + run, run)
            i += 1
        if i < len(order):
            rest.append(order[i])
            t_shadow, extra = shadow(t, free, order[i][3], sorted(heap))
            for job in order[i + 1 :]:
                _, submit, run, n = job
                if free == 0 or n > free:
                    rest.append(job)
                    continue
                if t + run > t_shadow:
                    if n > extra:
                        rest.append(job)
                        continue
                    extra -= n
                free -= n
                heapq.heappush(heap, (t + run, n))
                cost += _bsld(t - submit + run, run)
        if not rest and a == na:
            return cost
        nxt = heap[0][0] if heap else math.inf
        if a < na and arrivals[a][1] < nxt:
            nxt = arrivals[a][1]
        t = nxt
        while heap and heap[0][0] <= t:
            free += heapq.heappop(heap)[1]
        while a < na and arrivals[a][1] <= t:
            rest.append(arrivals[a])
            a += 1
        rest.sort()
        order = rest


class LookaheadEasy(EasyPriority):
    """EASY-F1 whose first job, where it matters, is chosen by forward plays (module doc)."""

    name = "lookahead-easy"

    def __init__(
        self, candidates: int = 4, horizon: int = 64, samples: int = 16, seed: int = 0
    ) -> None:
        pool, nodes = _pool(*POOL)
        self.sampler = LookaheadReserve(pool, nodes, candidates, horizon, samples, seed, True)
        self.candidates = candidates
        super().__init__("f1")

    def reset(self) -> None:
        super().reset()
        if hasattr(self, "sampler"):
            self.sampler.reset()

    def ranked(self, sim: Simulator) -> list[Job]:
        order = super().ranked(sim)
        free = sim.pool.free[0]
        if len(order) < 2 or sum(j.spec.nodes for j in order) <= free:
            return order  # every job starts: nothing to choose
        s = self.sampler
        if s._rng is None:
            s._prepare(sim, min(j.spec.id for j in order))
        now = sim.now
        releases = [(estimated_end(sim, j), j.size) for j in sim.running.values()]
        queue = [item(j.spec.submit, runtime_estimate(j.spec), j.spec.nodes) for j in order]
        futures = s._futures(now)
        costs = [
            sum(easy_forward_cost(now, free, releases, queue, c, f) for f in futures)
            for c in range(min(self.candidates, len(order)))
        ]
        c = cheapest(costs)
        return [order[c], *order[:c], *order[c + 1 :]]


def _episode(split: str, seed: int) -> tuple[object, list[object], SimConfig]:
    sc = scenarios.on_split(scenarios.get(SCENARIO), split)
    ep = episode_for(sc.env_id, dict(sc.env_kwargs), seed)
    kill = env_config(sc.env_id, dict(sc.env_kwargs)).kill_on_walltime
    return ep.platform, list(ep.jobs), SimConfig(kill_on_walltime=kill)


def play(task: tuple[str, str, int, int, int, int]) -> tuple[float, float, float]:
    """Mean and worst bounded slowdown of one episode, and the CPU seconds it took."""
    policy, split, seed, candidates, samples, plan_seed = task
    platform, jobs, config = _episode(split, seed)
    sched = (
        EasyPriority("f1")
        if policy == "easy-f1"
        else LookaheadEasy(candidates, 64, samples, plan_seed)
    )
    c0 = time.process_time()
    sim = Simulator(platform, jobs, config)
    sched.run(sim)
    s = sim.result().summary
    return float(s["mean_bsld"]), float(s["max_bsld"]), time.process_time() - c0


def check(split: str, seeds: Sequence[int]) -> None:
    """The forward play from an empty machine over the true arrivals is easy-f1's schedule."""
    for seed in seeds:
        platform, jobs, config = _episode(split, seed)
        sim = Simulator(platform, jobs, config)
        EasyPriority("f1").run(sim)
        engine = float(sim.result().jobs["bsld"].sum())
        items = [item(j.submit, runtime_estimate(j), j.nodes) for j in jobs]
        first_t = items[0][1]
        now_q = [x for x in items if x[1] <= first_t]
        later = [x for x in items if x[1] > first_t]
        nodes = platform.clusters[0].nodes
        head = min(range(len(now_q)), key=lambda i: now_q[i])
        forward = easy_forward_cost(first_t, nodes, [], now_q, head, later)
        print(json.dumps({"seed": seed, "engine": round(engine, 6), "forward": round(forward, 6)}))
        assert math.isclose(engine, forward, rel_tol=1e-9), (seed, engine, forward)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="validation", choices=scenarios.SPLITS)
    ap.add_argument("--candidates", type=int, default=4)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="sampling seeds")
    ap.add_argument("--episodes", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    seeds = list(scenarios.get(SCENARIO).seeds[: args.episodes])
    if args.check:
        check(args.split, seeds)
        return
    tasks = [("easy-f1", args.split, s, 1, 1, 0) for s in seeds]
    for k in args.seeds:
        tasks += [("planner", args.split, s, args.candidates, args.samples, k) for s in seeds]
    with Pool(args.workers) as pool:
        out = np.array(pool.map(play, tasks, chunksize=1))
    n = len(seeds)
    f1 = out[:n]
    rows = {"easy-f1": f1}
    for i, k in enumerate(args.seeds):
        rows[f"planner s{k}"] = out[n * (i + 1) : n * (i + 2)]
    for name, r in rows.items():
        mean, iqm = interval(r[:, 0]), interval(r[:, 0], "iqm")
        win = paired_win_rate(r[:, 0], f1[:, 0])
        print(
            json.dumps(
                {
                    "policy": name,
                    "split": args.split,
                    "episodes": n,
                    "candidates": args.candidates,
                    "samples": args.samples,
                    "mean": [round(x, 2) for x in (mean.value, mean.low, mean.high)],
                    "iqm": [round(x, 2) for x in (iqm.value, iqm.low, iqm.high)],
                    "win_over_easy_f1": [round(x, 3) for x in (win.value, win.low, win.high)],
                    "worst": round(float(r[:, 1].max()), 1),
                    "cpu_s_per_episode": round(float(r[:, 2].mean()), 2),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
