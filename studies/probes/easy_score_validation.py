"""Validation preview of EASY score agents against EASY ordered by RLScheduler's scores.

Plays each policy on the *validation* share of a preset and prints, per policy, the mean and
IQM of the episodes' mean bounded slowdown with 95% bootstrap intervals, the paired rate of
episodes it beats ``easy-f1`` on, and its worst job (the quantities ``hpcgym bench`` reports).
Used to look at a score agent before its test was fixed (``docs/results.md``, "EASY score
agents trained on the Lublin model"); never for a claim.

Where: ``syn`` (fresh 256-job traces of the Lublin model, reset seeds ``0 .. N-1`` of its
validation share, rigid-lublin-v1's preset) or a scenario name, played on its validation split.

``--exact-estimates`` gives every job its run time as its requested time (a diagnostic: how
much of a gap across traces comes from the users' estimates, which the model's jobs lack).

    python studies/probes/easy_score_validation.py syn 300 sweeps/score-synlublin-easy/s0
    python studies/probes/easy_score_validation.py rigid-lublin-v1 30 sweeps/score-synlublin-easy/s0
    python studies/probes/easy_score_validation.py rigid-sdsc-sp2-v0 30 --exact-estimates \
        agents/score-synlublin-easy/s0
"""

from __future__ import annotations

import argparse
import dataclasses
from multiprocessing import Pool
from typing import Any

import numpy as np

from hpcgym.agents.engine.cards import load_engine_card
from hpcgym.baselines import make
from hpcgym.bench import scenarios
from hpcgym.bench.stats import interval, paired_win_rate
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.sim import SimConfig, Simulator

ENV = "hpcgym/Rigid-v0"
HEURISTICS = ("easy-fcfs", "easy-sjf", "easy-f1", "easy-wfp3", "easy-unicep")


def preset(where: str) -> tuple[dict[str, Any], list[int] | None]:
    """The env arguments on the validation split, and the scenario's seeds (None for syn)."""
    if where == "syn":
        return {**scenarios.SYNLUBLIN_RIGID, "split": "validation"}, None
    sc = scenarios.on_split(scenarios.get(where), "validation")
    return dict(sc.env_kwargs), list(sc.seeds)


def play(task: tuple[str, str, int, bool]) -> tuple[float, float]:
    """(mean, max) bounded slowdown of one policy (a name or an agent folder) on one episode."""
    policy, where, seed, exact = task
    kwargs, _ = preset(where)
    ep = episode_for(ENV, kwargs, seed)
    jobs = ep.jobs
    if exact:  # a job of no run time keeps none (its estimate is then its run time too)
        jobs = [dataclasses.replace(j, walltime=j.work if j.work > 0 else None) for j in jobs]
    sim = Simulator(ep.platform, jobs, SimConfig(env_config(ENV, kwargs).kill_on_walltime))
    (load_engine_card(policy).scheduler() if "/" in policy else make(policy)).run(sim)
    summary = sim.result().summary
    return float(summary["mean_bsld"]), float(summary["max_bsld"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("where", help="syn, or a rigid scenario name")
    parser.add_argument("n", type=int, help="episodes (syn) or at most this many of the scenario")
    parser.add_argument("agents", nargs="*", help="score agent folders")
    parser.add_argument("--exact-estimates", action="store_true", help="requested = run time")
    args = parser.parse_intermixed_args()
    _, listed = preset(args.where)
    seeds = list(range(args.n)) if listed is None else listed[: args.n]
    policies = [*HEURISTICS, *args.agents]
    exact = args.exact_estimates
    with Pool(2) as pool:
        got = {
            p: np.array(pool.map(play, [(p, args.where, s, exact) for s in seeds], chunksize=8))
            for p in policies
        }
    f1 = got["easy-f1"][:, 0]
    for p in policies:
        m = got[p][:, 0]
        mean, q = interval(m[None, :], "mean"), interval(m[None, :], "iqm")
        win = (
            ""
            if p == "easy-f1"
            else (lambda w: f"{w.value:.2f} [{w.low:.2f}, {w.high:.2f}]")(paired_win_rate(m, f1))
        )
        print(
            f"{p:40s} mean {mean.value:8.2f} [{mean.low:.2f}, {mean.high:.2f}]  "
            f"IQM {q.value:8.2f} [{q.low:.2f}, {q.high:.2f}]  beats easy-f1 {win:18s} "
            f"worst {got[p][:, 1].max():.0f}"
        )


if __name__ == "__main__":
    main()
