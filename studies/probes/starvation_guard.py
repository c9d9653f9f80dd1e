"""Would a starvation guard lower a distilled planner's worst job? A validation-split probe.

The distilled planners beat F1's reserve mode with backfilling in IQM on 1,000 fresh traces,
but two of three seeds' single worst jobs lie above F1's (``studies/rlscheduler-agents.md``,
"A large fresh test"). The obvious remedy is a guard: once the queued job with the highest bounded
slowdown so far (its wait over ``max(estimate, 10 s)``) passes ``B``, commit to it instead of
the network's choice. This plays each seed of a distilled sweep with and without the guard,
and F1's reserve mode, on the *validation* share of the Lublin model's seeds
(``rlsched-synlublin-bf-large-v0@validation``: the large scenario's reset seeds drawn from the
validation split), on the bare engine, and prints per policy and ``B`` the mean bounded
slowdown, the mean of each trace's worst job and the worst job of all, as JSON lines.

    python studies/probes/starvation_guard.py agents/distilled-dagger-bf --limits 1000 2000 4000

Results: ``studies/rlscheduler-agents.md`` ("Where the worst jobs come from").
"""

from __future__ import annotations

import argparse
import json
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from hpcgym.agents.engine.distill import DistilledCard, DistilledReserve
from hpcgym.baselines import make as make_baseline
from hpcgym.baselines.base import BaseScheduler, runtime_estimate
from hpcgym.bench import scenarios
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.sim import SimConfig, Simulator

SCENARIO = "rlsched-synlublin-bf-large-v0"
TAU = 10.0


class Guarded(DistilledReserve):
    """A distilled planner that commits to a starving job once its slowdown passes ``limit``."""

    def __init__(self, base: DistilledReserve, limit: float) -> None:
        super().__init__(base.layers, base.candidates, base.backfill)
        self.limit = limit

    def choose(self, sim: Simulator, free: int) -> int:
        now = sim.now
        worst = max(
            sim.queue.values(),
            key=lambda j: ((now - j.spec.submit) / max(runtime_estimate(j.spec), TAU), -j.spec.id),
        )
        if (now - worst.spec.submit) / max(runtime_estimate(worst.spec), TAU) > self.limit:
            return worst.spec.id
        return super().choose(sim, free)


def scheduler(card: str | None, limit: float | None) -> BaseScheduler:
    """F1's reserve mode with backfilling (``card`` None), or the card's planner, guarded."""
    if card is None:
        return make_baseline("f1-reserve-bf")
    base = DistilledCard.from_json(Path(card).read_text()).scheduler()
    assert isinstance(base, DistilledReserve)
    return base if limit is None else Guarded(base, limit)


def play(task: tuple[str | None, float | None, int]) -> tuple[float, float]:
    """The mean and the worst bounded slowdown of one validation trace."""
    card, limit, seed = task
    sc = scenarios.on_split(scenarios.get(SCENARIO), "validation")
    sched = scheduler(card, limit)
    ep = episode_for(sc.env_id, dict(sc.env_kwargs), seed)
    cfg = env_config(sc.env_id, dict(sc.env_kwargs))
    jobs, config = sched.setting(ep.jobs, SimConfig(kill_on_walltime=cfg.kill_on_walltime))
    sim = Simulator(ep.platform, jobs, config)
    sched.reset()
    while sim.advance():
        sched.schedule(sim)
    summary = sim.result().summary
    return float(summary["mean_bsld"]), float(summary["max_bsld"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", help="a sweep of distilled planners (s<k>/distilled.json)")
    ap.add_argument("--limits", type=float, nargs="+", default=[1000.0, 2000.0, 4000.0])
    ap.add_argument("--traces", type=int, default=1000, help="validation traces (at most 1,000)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    seeds = scenarios.get(SCENARIO).seeds[: args.traces]
    cards = sorted(str(p) for p in Path(args.sweep).glob("s*/distilled.json"))
    runs: list[tuple[str, str | None, float | None]] = [("f1-reserve-bf", None, None)]
    for limit in [None, *args.limits]:
        runs += [(f"{Path(c).parent.name} B={limit}", c, limit) for c in cards]
    with Pool(args.workers) as pool:
        for name, card, limit in runs:
            out = np.array(pool.map(play, [(card, limit, s) for s in seeds], chunksize=8))
            row = {
                "policy": name,
                "traces": len(seeds),
                "mean_bsld": round(float(out[:, 0].mean()), 2),
                "mean_worst_per_trace": round(float(out[:, 1].mean()), 1),
                "worst": round(float(out[:, 1].max()), 1),
                "worst_trace": int(seeds[int(out[:, 1].argmax())]),
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
