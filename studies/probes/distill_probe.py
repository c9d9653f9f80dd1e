"""Distilling the planner into a network that does not look ahead (issue 19): a probe.

Three steps, each writing a new file (never overwritten):

* ``gen``: play the planner (:class:`hpcgym.agents.engine.lookahead.LookaheadReserve`, the
  shipped settings) on random 256-job lublin_256 sequences starting in jobs
  ``[--first, --stop)``, futures sampled from jobs ``[0, --pool-stop)`` (never a run holding an
  episode job), and record every choice: the candidates' features
  (:func:`hpcgym.agents.engine.distill.choice_features`) and their forward-play costs
  (``.npz``);
* ``fit``: fit ``--members`` networks to one or more such files
  (:func:`hpcgym.agents.rl.distill_fit.fit_ensemble`; options to drop a feature or transform
  the regret) and write their weights (``.json``);
* ``eval``: play F1 and the networks' mean score on the 30 tuning sequences of
  ``studies/probes/rollout_probe.py`` (1,024 jobs in ``[3500, 6975)``) and print both with 95%
  bootstrap intervals and the paired win rate.

    python studies/probes/distill_probe.py gen --backfill --sequences 400 --out bf-a.npz
    python studies/probes/distill_probe.py fit bf-a.npz --members 4 --out bf-a.json
    python studies/probes/distill_probe.py eval bf-a.json

Results: ``studies/rlscheduler-agents.md`` ("A distilled planner").
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from multiprocessing import Pool
from typing import Any

import numpy as np

from hpcgym.agents.engine.distill import (
    DistilledReserve,
    Recorder,
    choice_regret,
    layers_from_json,
    merge,
    record_sequence,
)
from hpcgym.agents.rl.distill_fit import fit_ensemble
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.sim import Simulator
from hpcgym.workloads.registry import load
from hpcgym.workloads.rlsched import split_starts

LUBLIN = "rlsched/lublin256-v0"
CANDIDATES = 4


def _network(card: str) -> Any:
    with open(card) as f:
        raw = json.load(f)
    if "layers" in raw:  # an early probe card: one (merged) network
        return layers_from_json(raw["layers"])
    return merge([layers_from_json(m) for m in raw["members"]])


def _gen(
    task: tuple[int, bool, int, int, int, str | None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    first, backfill, pool_stop, length, seed, follow = task
    w = load(LUBLIN)
    sched = Recorder(
        w.jobs[:pool_stop],
        w.platform.clusters[0].nodes,
        seed=seed,
        backfill=backfill,
        skip_own=True,
        follow=None if follow is None else _network(follow),
    )
    x, costs = record_sequence(sched, w.platform, w.jobs[first : first + length])
    return x, costs, np.full(len(x), first)


def gen(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    starts = rng.integers(args.first, args.stop - args.length, args.sequences)
    tasks = [
        (int(s), args.backfill, args.pool_stop, args.length, args.seed, args.follow) for s in starts
    ]
    t0 = time.perf_counter()
    with Pool(args.workers) as workers:
        parts = workers.map(_gen, tasks, chunksize=1)
    x = np.concatenate([p[0] for p in parts])
    costs = np.concatenate([p[1] for p in parts])
    seq = np.concatenate([p[2] for p in parts])
    with open(args.out, "xb") as f:
        np.savez_compressed(f, x=x, costs=costs, sequence=seq, samples=32, backfill=args.backfill)
    print(f"{len(x)} choices from {len(tasks)} sequences in {time.perf_counter() - t0:.0f} s")
    # The regret per sampled future of the choices made where they were recorded (the
    # followed network's; the planner's are zero) and of F1's at the same states.
    if args.follow is not None:
        mine, f1 = choice_regret(_network(args.follow), x, costs)
        print(f"followed network's regret: {mine:.2f}, F1's: {f1:.2f}")


def _eval(task: tuple[int, bool, str | None]) -> float:
    first, backfill, card = task
    w = load(LUBLIN)
    jobs = w.jobs[first : first + 1024]
    if card is None:
        sched: PriorityReserve = PriorityReserve("f1", backfill)
    else:
        sched = DistilledReserve(_network(card), CANDIDATES, backfill)
    sim = Simulator(w.platform, jobs, CONFIG)
    sched.run(sim)
    return float(sim.result().summary["mean_bsld"])


def evaluate(args: argparse.Namespace) -> None:
    with open(args.card) as f:
        backfill = bool(json.load(f)["backfill"])
    starts = split_starts(args.first, args.stop, args.sequences, length=1024)
    with Pool(args.workers) as workers:
        f1 = np.array(workers.map(_eval, [(s, backfill, None) for s in starts]))
        mine = np.array(workers.map(_eval, [(s, backfill, args.card) for s in starts]))
    out = {
        "card": args.card,
        "backfill": backfill,
        "f1": asdict(interval(f1)),
        "distilled": asdict(interval(mine)),
        "f1_iqm": asdict(interval(f1, "iqm")),
        "distilled_iqm": asdict(interval(mine, "iqm")),
        "win_over_f1": asdict(paired_win_rate(mine, f1)),
    }
    print(json.dumps(out))


def fit_cmd(args: argparse.Namespace) -> None:
    data = [np.load(p) for p in args.data]
    x = np.concatenate([d["x"] for d in data])
    costs = np.concatenate([d["costs"] for d in data])
    backfill = bool(data[0]["backfill"])
    t0 = time.perf_counter()
    for column in args.drop:  # a feature zeroed everywhere: the network cannot use it
        x[:, :, column] = 0.0
    if args.relative:  # each choice's costs over its best candidate's
        costs = costs / np.nanmin(costs, axis=1, keepdims=True)
    if args.log:  # regrets compressed: log1p of the regret per sampled future
        best = np.nanmin(costs, axis=1, keepdims=True)
        costs = 32 * np.log1p((costs - best) / 32)
    networks, report = fit_ensemble(
        x,
        costs / 32,
        args.members,
        seed=args.seed,
        hidden=args.hidden,
        epochs=args.epochs,
        loss=args.loss,
        learning_rate=args.lr,
    )
    for net in networks:  # a dropped feature never reaches the network when it plays either
        net[0][0][args.drop, :] = 0.0
    body: dict[str, Any] = {
        "backfill": backfill,
        "candidates": CANDIDATES,
        "members": [[[w.tolist(), b.tolist()] for w, b in net] for net in networks],
        "report": report,
        "data": args.data,
    }
    with open(args.out, "x") as f:
        json.dump(body, f)
    held = [(r["kept_epoch"], round(r["held_regret"], 2)) for r in report]
    print(f"kept epoch, held-out regret per member: {held}; {time.perf_counter() - t0:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--backfill", action="store_true")
    g.add_argument("--sequences", type=int, default=160)
    g.add_argument("--length", type=int, default=256)
    g.add_argument("--first", type=int, default=0)
    g.add_argument("--stop", type=int, default=3500)
    g.add_argument("--pool-stop", type=int, default=3500)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--workers", type=int, default=2)
    g.add_argument("--follow", help="play this fitted card's networks (DAgger), not the planner")
    g.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("data", nargs="+")
    f.add_argument("--members", type=int, default=5)
    f.add_argument("--relative", action="store_true", help="regret relative to the best cost")
    f.add_argument("--log", action="store_true", help="log1p of the regret")
    f.add_argument("--drop", type=int, action="append", default=[], help="zero a feature column")
    f.add_argument("--lr", type=float, default=3e-3)
    f.add_argument("--hidden", type=int, default=32)
    f.add_argument("--epochs", type=int, default=60)
    f.add_argument("--loss", choices=("regret", "choice"), default="regret")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--out", required=True)
    e = sub.add_parser("eval")
    e.add_argument("card")
    e.add_argument("--workers", type=int, default=2)
    e.add_argument("--first", type=int, default=3500, help="sequences start in [first, stop)")
    e.add_argument("--stop", type=int, default=6975)
    e.add_argument("--sequences", type=int, default=30)
    args = ap.parse_args()
    {"gen": gen, "fit": fit_cmd, "eval": evaluate}[args.cmd](args)


if __name__ == "__main__":
    main()
