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


def test_drop_takes_a_row_out_of_an_ascending_list_or_names_it() -> None:
    from hpcgym.envs.ledger import _drop

    rows = [1, 4, 9, 16, 25]
    for r in (9, 1, 25, 16, 4):
        _drop(rows, r)
        assert rows == sorted(rows) and r not in rows
    assert rows == []
    rows = [2, 3, 5]
    for missing in (1, 4, 6):
        with pytest.raises(ValueError, match=f"row {missing} is not in the list"):
            _drop(rows, missing)
        assert rows == [2, 3, 5]  # unchanged


def test_commander_starts_through_an_overridden_start_the_same_schedule() -> None:
    """A default start on a plain ``Simulator`` skips ``start``'s checks; a subclass sees it."""
    from hpcgym.envs.commands import Commander
    from hpcgym.envs.ledger import JobLedger
    from hpcgym.envs.table import JobTable
    from hpcgym.sim import JobSpec, Platform, Simulator

    seen: list[int] = []

    class Watched(Simulator):
        def start(self, job_id, size=None, *, nodes=None, cpu=None, cluster=None):  # type: ignore[no-untyped-def]
            seen.append(int(job_id))
            super().start(job_id, size, nodes=nodes, cpu=cpu, cluster=cluster)

    specs = [JobSpec(10 + i, float(i), work=5.0 + i, nodes=1 + i % 3) for i in range(8)]
    schedules = []
    for cls in (Simulator, Watched):
        sim = cls(Platform.single(4), specs)
        ledger = JobLedger(sim, JobTable.build(specs))
        cmd = Commander(sim, ledger)
        while cmd.advance():
            for r in list(ledger.queued):
                if ledger.req_list[r] <= sim.free_nodes():
                    cmd.start(r)
        schedules.append([(j.id, j.start_time, j.nodes.tolist()) for j in sim.jobs.values()])
        assert not ledger.queued and not ledger.holding
    assert schedules[0] == schedules[1]
    assert sorted(seen) == [s.id for s in specs]
