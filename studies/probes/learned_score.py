"""Probe: is there held-out headroom above F1 for any linear job score? (issue 19)

A job-scoring policy ranks queued jobs by a score; F1 (``log10(r) n + 870 log10(s)``) is one
point of the linear family below. This searches the family directly on training episodes with
CMA-ES (``pip install cma``), playing the scores greedily (the quantity a benchmark measures, so
the greedy-versus-sampled gap of the PPO agents does not arise), and plays the best point found
once on the held-out test episodes. A gain that survives there is one a learned scorer could
reach; none surviving says this family holds none beyond noise.

The family, its features and units are those of the score agents
(:mod:`hpcgym.agents.engine.score`, whose schedulers this plays): ``x = (1, 0, 0, 0, 0, 0, 1,
0)`` is F1 exactly, checked on every test episode before the search. This script differs from
``hpcgym search-score`` in its episodes (fixed lists of the probe's own, and the test sets
played at the end with F1 beside) and in printing the comparison; the agents themselves come
from ``hpcgym search-score``.

Modes:

* ``reserve`` (``--backfill`` for its backfilling variant): RLScheduler's reserve mode on
  lublin_256. Training: ``--train`` 1,024-job sequences of its train split (jobs [0, 6975)),
  fixed for the search. Test: ``rlsched-lublin[-bf]-test-v0``'s 30 sequences and RLScheduler's
  10 published ones (drawn from the whole trace, train split included).
* ``easy``: EASY backfilling with the queue ordered by the score, on ``hpcgym/Rigid-v0``
  (lublin_256, 256-job windows). Training: the windows the env draws on its train split for
  reset seeds ``0 .. --train - 1``. Test: ``rigid-lublin-v1`` (the reference is ``easy-f1``,
  the best heuristic there) and its cross-trace tests ``rigid-sdsc-sp2-v0``, ``rigid-kth-v0``.

    python studies/probes/learned_score.py --mode reserve [--backfill] [--generations 30]
    python studies/probes/learned_score.py --mode easy [--generations 30]

Results: ``studies/rlscheduler-agents.md`` ("A learned score by direct search") and
``docs/results.md``.
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

from hpcgym.agents.engine.score import F1_WEIGHTS, FEATURES, LinearEasy, LinearReserve
from hpcgym.baselines.priority import EasyPriority, PriorityReserve
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench import scenarios
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.sim import Platform, SimConfig, Simulator
from hpcgym.workloads import Workload
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.rlsched import read_rlscheduler_trace, split_starts
from hpcgym.workloads.splits import time_splits

LENGTH = 1024
RIGID_ENV = "hpcgym/Rigid-v0"
RIGID_TRAIN = {"n_jobs": 256, "split": "train"}
F1 = np.asarray(F1_WEIGHTS)

Episode = tuple[Platform, tuple[Any, ...], SimConfig]


@cache
def _lublin() -> Any:
    return read_rlscheduler_trace(resolve_file("lublin_256.swf.gz"))


@cache
def episodes(group: str) -> list[Episode]:
    """The episodes of a named group (built once per process)."""
    mode, _, part = group.partition(":")
    if mode == "reserve":
        trace = _lublin()
        if part == "train":
            stop = time_splits(Workload("lublin", trace.jobs, trace.platform))["train"].stop
            starts = split_starts(0, stop, int(_TRAIN[0]), length=LENGTH, seed=7)
        else:
            sc = scenarios.get(part)
            starts = list(sc.env_kwargs["window_starts"])
        return [(trace.platform, trace.jobs[s : s + LENGTH], CONFIG) for s in starts]
    if part == "train":
        kwargs, seeds = RIGID_TRAIN, range(int(_TRAIN[0]))
    else:
        sc = scenarios.get(part)
        kwargs, seeds = sc.env_kwargs, sc.seeds
    kill = env_config(RIGID_ENV, kwargs).kill_on_walltime
    out = []
    for seed in seeds:
        ep = episode_for(RIGID_ENV, kwargs, seed)
        out.append((ep.platform, tuple(ep.jobs), SimConfig(kill_on_walltime=kill)))
    return out


_TRAIN = [64]
"""Training episodes per group (set from ``--train``; workers inherit it)."""


def play(task: tuple[tuple[float, ...], str, int, bool]) -> float:
    """Mean bounded slowdown of episode ``index`` of ``group`` under weights ``x``."""
    x, group, index, backfill = task
    platform, jobs, config = episodes(group)[index]
    sched = LinearEasy(x) if group.startswith("easy") else LinearReserve(x, backfill)
    sim = Simulator(platform, jobs, config)
    sched.run(sim)
    return float(sim.result().summary["mean_bsld"])


def scores(pool: Any, xs: list[np.ndarray], group: str, backfill: bool) -> np.ndarray:
    """Per candidate, per episode of ``group``: the mean bounded slowdown."""
    n = len(episodes(group))
    tasks = [(tuple(map(float, x)), group, i, backfill) for x in xs for i in range(n)]
    return np.array(pool.map(play, tasks, chunksize=4)).reshape(len(xs), n)


def reference(group: str, backfill: bool) -> list[float]:
    """The registered F1 policy on ``group``'s episodes (``f1-reserve[-bf]`` or ``easy-f1``)."""
    out = []
    for platform, jobs, config in episodes(group):
        sim = Simulator(platform, jobs, config)
        sched = EasyPriority("f1") if group.startswith("easy") else PriorityReserve("f1", backfill)
        sched.run(sim)
        out.append(float(sim.result().summary["mean_bsld"]))
    return out


def summary(f1: np.ndarray, mine: np.ndarray) -> dict[str, Any]:
    """Means and IQMs with 95% bootstrap intervals, and the paired win rate over F1."""
    return {
        "episodes": len(f1),
        "f1": asdict(interval(f1)),
        "learned": asdict(interval(mine)),
        "f1_iqm": asdict(interval(f1, "iqm")),
        "learned_iqm": asdict(interval(mine, "iqm")),
        "win_over_f1": asdict(paired_win_rate(mine, f1)),
    }


def main() -> None:
    import cma

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("reserve", "easy"), default="reserve")
    ap.add_argument("--backfill", action="store_true", help="reserve mode with backfilling")
    ap.add_argument("--generations", type=int, default=30)
    ap.add_argument("--train", type=int, default=64, help="training episodes")
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the result as JSON here (never overwritten)")
    args = ap.parse_args()
    _TRAIN[0] = args.train
    bf = args.backfill and args.mode == "reserve"
    suffix = "-bf" if bf else ""
    if args.mode == "reserve":
        tests = [f"rlsched-lublin{suffix}-test-v0", f"rlsched-lublin{suffix}-v0"]
    else:
        tests = ["rigid-lublin-v1", "rigid-sdsc-sp2-v0", "rigid-kth-v0"]
    train = f"{args.mode}:train"
    t0 = time.perf_counter()
    with Pool(2) as pool:
        f1_test = {t: scores(pool, [F1], f"{args.mode}:{t}", bf)[0] for t in tests}
        for t in tests:
            exact = reference(f"{args.mode}:{t}", bf)
            assert np.array_equal(f1_test[t], exact), f"the F1 point is not F1 on {t}"
        es = cma.CMAEvolutionStrategy(F1, args.sigma, {"seed": args.seed, "verbose": -9})
        curve = []
        for g in range(args.generations):
            xs = es.ask()
            fs = scores(pool, xs, train, bf).mean(axis=1)
            es.tell(xs, list(fs))
            curve.append((g, float(fs.min()), float(np.median(fs)), float(es.result.fbest)))
            print(f"generation {g}: best {fs.min():.2f}, median {np.median(fs):.2f}", flush=True)
        best = np.asarray(es.result.xbest)
        f1_train, best_train = scores(pool, [F1, best], train, bf).mean(axis=1)
        mine = {t: scores(pool, [best], f"{args.mode}:{t}", bf)[0] for t in tests}
    result: dict[str, Any] = {
        "mode": args.mode,
        "backfill": bf,
        "generations": args.generations,
        "train_episodes": args.train,
        "seed": args.seed,
        "seconds": round(time.perf_counter() - t0, 1),
        "weights": dict(zip(FEATURES, map(float, best), strict=True)),
        "curve": curve,
        "train": {"f1": float(f1_train), "learned": float(best_train)},
        "tests": {t: summary(f1_test[t], mine[t]) for t in tests},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "x") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
