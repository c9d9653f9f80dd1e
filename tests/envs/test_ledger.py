"""The env's ledger mirrors the engine exactly along random trajectories."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hpcgym.envs.ledger import RECONFIGS, REQUEST, SIZE, T_START


@pytest.mark.parametrize(
    "world",
    [
        "test/rigid-tiny-v0",
        "test/malleable-tiny-v0",
        "test/evolving-tiny-v0",
        "test/shared-tiny-v0",
        "test/multi-tiny-v0",
    ],
)
def test_ledger_mirrors_the_engine(world: str, worlds: SimpleNamespace) -> None:
    env = worlds.make(world, max_steps=400)
    rng = np.random.default_rng(3)
    for seed in range(4):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            sim, led = env.sim, env.ledger
            ids = [j.spec.id for j in led.jobs]
            assert [ids[r] for r in led.queued] == list(sim.queue)
            assert sorted(ids[r] for r in led.holding) == sorted(sim.running)
            assert sorted(ids[r] for r in led.suspended) == sorted(sim.suspended)
            led.fresh(led.holding)
            for r in led.holding:
                job = led.jobs[r]
                assert led.dyn[r, SIZE] == job.size
                assert led.dyn[r, REQUEST] == job.request
                assert led.dyn[r, RECONFIGS] == job.reconfigurations
                assert led.dyn[r, T_START] == job.start_time
            counts = sim.counts
            assert led.submitted == counts["submitted"]
            assert led.ended == counts["completed"] + counts["killed"] + counts["rejected"]
            _, _, term, trunc, info = env.step(worlds.policy(info, rng))
            done = term or trunc
