"""Probe: is there held-out headroom above F1 in RLScheduler's reserve mode? (issue 19)

A job-scoring policy is a linear score over job features; F1 is one point of the family. This
searches the family directly on the train split with CMA-ES (``pip install cma``) and plays the
best point found on the held-out test sequences. Greedy play is what is optimised, so the
greedy-versus-sampled gap of the PPO agents does not arise; a gain that survives here on the
test split is one a learned scorer could reach, and none surviving says the family holds none.

Features of a queued job (``r`` the request time, at least 0.1 s; ``n`` its nodes; ``w`` the
time it has waited; ``s`` its submit time on the trace's clock; ``free`` the idle nodes now):
``log10(r) n / 256``, ``log10(r)``, ``n / 256``, ``log2(n)``, ``log10(1 + w)``,
``min(w / r, 100)``, ``log10(s)``, ``[n <= free]``; the job with the lowest score is chosen (ties:
earlier submission). Weights are searched in units ``SCALE`` (one unit moves a score by about
F1's spread across a queue); ``x = (1, 0, 0, 0, 0, 0, 1, 0)`` is F1 exactly (checked on every
test sequence before the search). The score reads the engine's state, not the env's
observation: it is a probe of the policy class, not an agent.

    python benchmarks/learned_score.py [--backfill] [--generations 30] [--train 64]

Training: ``--train`` 1,024-job sequences from lublin_256's train split (jobs [0, 6975)),
fixed for the whole search; the objective is their mean bounded slowdown. Test: the 30
sequences of ``rlsched-lublin[-bf]-test-v0`` and RLScheduler's 10 published sequences (which
are drawn from the whole trace, train split included). Results: ``docs/rlscheduler.md``,
"A learned score by direct search".
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from multiprocessing import Pool
from typing import Any

import numpy as np

from hpcgym.baselines.base import runtime_estimate
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.bench.papers.rlscheduler import CONFIG, reserve_bsld
from hpcgym.bench.scenarios import RLSCHED_LUBLIN_STARTS, RLSCHED_LUBLIN_TEST_STARTS
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.rlsched import read_rlscheduler_trace, split_starts
from hpcgym.workloads.splits import time_splits

TRACE = read_rlscheduler_trace(resolve_file("lublin_256.swf.gz"))
LENGTH = 1024
TRAIN_STOP = time_splits(Workload("lublin", TRACE.jobs, TRACE.platform))["train"].stop
"""The first job after lublin_256's train split (6,975: the first 60% of its submission span)."""
FEATURES = (
    "log10(r)n/256",
    "log10(r)",
    "n/256",
    "log2(n)",
    "log10(1+w)",
    "w/r",
    "log10(s)",
    "fits",
)
SCALE = np.array([256.0, 100.0, 300.0, 50.0, 100.0, 3.0, 870.0, 200.0])
F1 = np.array([1.0, 0, 0, 0, 0, 0, 1.0, 0])


class LinearScore(PriorityReserve):
    """Reserve mode choosing by ``features @ weights`` (lowest first; ties by submission)."""

    name = "linear-score-reserve"

    def __init__(self, weights: np.ndarray, backfill: bool) -> None:
        super().__init__("fcfs", backfill)
        self.weights = np.asarray(weights, dtype=float)

    def choose(self, sim: Simulator, free: int) -> int:
        jobs = sorted(sim.queue.values(), key=lambda j: (j.spec.submit, self._rank.seq[j.spec.id]))
        specs = [j.spec for j in jobs]
        r = np.array([max(runtime_estimate(s), 0.1) for s in specs])
        n = np.array([s.nodes for s in specs], dtype=float)
        submit = np.array([s.submit for s in specs])
        w = sim.now - submit
        lr = np.log10(r)
        x = np.stack(
            [
                lr * n / 256,
                lr,
                n / 256,
                np.log2(n),
                np.log10(1 + w),
                np.minimum(w / r, 100),
                np.log10(np.maximum(submit, 0.1)),
                (n <= free).astype(float),
            ],
            axis=1,
        )
        return specs[int(np.argmin(x @ self.weights))].id


def bsld(args: tuple[tuple[float, ...], int, bool]) -> float:
    """Mean bounded slowdown of the sequence starting at job ``start`` under weights ``x``."""
    x, start, backfill = args
    sim = Simulator(TRACE.platform, TRACE.jobs[start : start + LENGTH], CONFIG)
    LinearScore(np.asarray(x) * SCALE, backfill).run(sim)
    return float(sim.result().summary["mean_bsld"])


def scores(pool: Any, xs: list[np.ndarray], starts: list[int], backfill: bool) -> np.ndarray:
    """Per candidate, per sequence: the mean bounded slowdown."""
    tasks = [(tuple(map(float, x)), s, backfill) for x in xs for s in starts]
    return np.array(pool.map(bsld, tasks, chunksize=4)).reshape(len(xs), len(starts))


def main() -> None:
    import cma

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backfill", action="store_true")
    ap.add_argument("--generations", type=int, default=30)
    ap.add_argument("--train", type=int, default=64, help="training sequences")
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the result as JSON here")
    args = ap.parse_args()
    bf = args.backfill
    train = split_starts(0, TRAIN_STOP, args.train, length=LENGTH, seed=7)
    test = list(RLSCHED_LUBLIN_TEST_STARTS)
    published = list(RLSCHED_LUBLIN_STARTS)
    t0 = time.perf_counter()
    with Pool(2) as pool:
        f1_test = scores(pool, [F1], test, bf)[0]
        exact = [reserve_bsld(TRACE, TRACE.jobs[s : s + LENGTH], "f1", bf) for s in test]
        assert np.array_equal(f1_test, exact), "the F1 point is not F1"
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
        best_test = scores(pool, [best], test, bf)[0]
        f1_pub, best_pub = scores(pool, [F1, best], published, bf)
    result = {
        "backfill": bf,
        "generations": args.generations,
        "train_sequences": args.train,
        "seconds": round(time.perf_counter() - t0, 1),
        "weights": dict(zip(FEATURES, map(float, best), strict=True)),
        "curve": curve,
        "train": {"f1": float(f1_train), "learned": float(best_train)},
    }
    for name, f1, mine in (("test", f1_test, best_test), ("published", f1_pub, best_pub)):
        result[name] = {
            "f1": asdict(interval(f1)),
            "learned": asdict(interval(mine)),
            "f1_iqm": asdict(interval(f1, "iqm")),
            "learned_iqm": asdict(interval(mine, "iqm")),
            "win_over_f1": asdict(paired_win_rate(mine, f1)),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "x") as f:  # never overwrite a result
            f.write(text + "\n")


if __name__ == "__main__":
    main()
