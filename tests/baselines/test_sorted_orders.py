"""MEBF with its queue ranked by a score, and evolving list scheduling with a sorted list."""

from __future__ import annotations

import pytest
from baseline_helpers import malleable, rigid, run

from hpcgym.baselines import make, names
from hpcgym.baselines.evolving.list_scheduling import requested_ep
from hpcgym.baselines.mebf import MEBF
from hpcgym.envs.episodes import episode_for
from hpcgym.errors import SpecError
from hpcgym.sim import SimConfig, Simulator


def test_mebf_orders_are_registered_and_checked() -> None:
    assert {"mebf-sjf", "mebf-f1"} <= set(names())
    assert make("mebf-sjf").config.order == "sjf" and make("mebf").config.order == "fcfs"
    with pytest.raises(SpecError, match="MEBF order is one of"):
        MEBF(order="nope")


def test_mebf_sjf_starts_the_shortest_queued_job_first() -> None:
    # 4 nodes held by J1 until 10; then J2 (long, 4 nodes) and J3 (short, 4 nodes) wait. MEBF
    # (submission order) starts J2 at 10; MEBF-SJF starts J3 first. Rigid jobs: no resizes.
    jobs = [rigid(1, 0, 10, 4), rigid(2, 1, 100, 4), rigid(3, 2, 5, 4)]
    cfg = SimConfig(kill_on_walltime=False)
    _, fcfs = run(make("mebf"), jobs, 4, cfg)
    _, sjf = run(make("mebf-sjf"), jobs, 4, cfg)
    assert fcfs[2][0] == pytest.approx(10) and fcfs[3][0] == pytest.approx(110)
    assert sjf[3][0] == pytest.approx(10) and sjf[2][0] == pytest.approx(15)


def test_mebf_sjf_shrinks_for_and_backfills_behind_its_own_head() -> None:
    # J1 malleable on all 8 nodes (min 2, linear); J2 (long, 6 nodes) then J3 (short, 6): the
    # SJF head is J3, for which J1 is shrunk; MEBF shrinks for J2.
    jobs = [malleable(1, 0, 1000, 8, 2, 8), rigid(2, 1, 500, 6), rigid(3, 2, 50, 6)]
    cfg = SimConfig(kill_on_walltime=False)
    _, fcfs = run(make("mebf"), jobs, 8, cfg)
    _, sjf = run(make("mebf-sjf"), jobs, 8, cfg)
    assert fcfs[2][0] < fcfs[3][0]
    assert sjf[3][0] < sjf[2][0]


@pytest.mark.parametrize("sort", ["longest", "widest"])
def test_sorted_lists_put_the_longest_or_widest_application_first(sort: str) -> None:
    ep = episode_for("hpcgym/Evolving-v0", {"split": "test"}, 1000)
    assert all(j.submit == 0 for j in ep.jobs)  # a Klein-Perez case: everything at once
    sim = Simulator(ep.platform, ep.jobs)
    make(f"evolving-infX-{sort}").run(sim)
    jobs = list(sim.jobs.values())
    assert all(j.state.value == "completed" for j in jobs)

    def key(j: object) -> float:
        req = requested_ep(j.spec)  # type: ignore[attr-defined]
        return float(req.durations.sum() if sort == "longest" else req.nodes.max())

    first = min(j.start_time for j in jobs)
    top = max(jobs, key=key)
    assert top.start_time == first
    base = Simulator(ep.platform, ep.jobs)
    make("evolving-infX").run(base)
    starts = {j.id: j.start_time for j in base.jobs.values()}
    assert starts != {j.id: j.start_time for j in jobs}  # another list, another schedule
