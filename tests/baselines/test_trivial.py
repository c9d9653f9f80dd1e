"""The trivial reference rules: hand-computed schedules, their size choices, and rigid limits."""

from __future__ import annotations

import pytest
from baseline_helpers import malleable, rigid, run

from hpcgym.baselines import make, names
from hpcgym.envs.episodes import episode_for
from hpcgym.sim import SimConfig, Simulator
from hpcgym.sim.planning import largest_size, smallest_size

TRIVIAL = ("asap-min", "asap-req", "asap-max", "easy-min")

# 8 nodes, linear speedups. J1 (4 nodes, range 2-8) and J2 (4, range 2-8) at 0; J3 (6 nodes,
# range 3-6) at 1; J4 (2 nodes, 1-2) at 2.
JOBS = [
    malleable(1, 0, 100, 4, 2, 8),
    malleable(2, 0, 100, 4, 2, 8),
    malleable(3, 1, 60, 6, 3, 6),
    malleable(4, 2, 10, 2, 1, 2),
]


def _sizes(sim: Simulator) -> dict[int, int]:
    return {j.id: j.max_size for j in sim.jobs.values()}


def test_the_rules_are_registered() -> None:
    assert set(TRIVIAL) <= set(names())
    assert [make(n).name for n in TRIVIAL] == list(TRIVIAL)


def test_asap_min_starts_everything_at_its_minimum_at_once() -> None:
    sim, times = run(make("asap-min"), JOBS, 8)
    assert _sizes(sim) == {1: 2, 2: 2, 3: 3, 4: 1}
    # 2 + 2 at 0, J3 on 3 at 1, J4 on 1 at 2: nobody waits
    assert {j: t[0] for j, t in times.items()} == {1: 0, 2: 0, 3: 1, 4: 2}
    # linear speedup: twice the time on half the nodes
    assert times[1][1] == pytest.approx(200) and times[3][1] == pytest.approx(1 + 120)
    assert all(j.reconfigurations == 0 for j in sim.jobs.values())


def test_asap_req_skips_a_job_that_does_not_fit_and_starts_the_next() -> None:
    sim, times = run(make("asap-req"), JOBS, 8)
    assert _sizes(sim) == {1: 4, 2: 4, 3: 6, 4: 2}
    # J3 (6) waits for J1 and J2 to end at 100; J4 (2) does not fit at 2 either (0 idle)
    assert times[3][0] == pytest.approx(100) and times[4][0] == pytest.approx(100)


def test_asap_max_takes_the_largest_size_the_cluster_holds() -> None:
    sim, times = run(make("asap-max"), JOBS, 8)
    assert _sizes(sim) == {1: 8, 2: 8, 3: 6, 4: 2}
    # one at a time: J1 on 8 until 50, then J2 on 8 until 100, then J3 and J4 together
    assert times[1] == pytest.approx((0, 50)) and times[2] == pytest.approx((50, 100))
    assert times[3][0] == pytest.approx(100) and times[4][0] == pytest.approx(100)


def test_easy_min_backfills_at_minimum_without_delaying_the_head() -> None:
    # 4 nodes: J1 holds all 4 (min 4) for 10 s; J2 (min 4) is the head; J3 (min 1, 2 s at its
    # minimum of 1 node, linear) can only run after J1; J4 likewise. Then at 10: J2 starts,
    # J3 and J4 wait for it (no room), so nothing backfills until J2 ends at 15.
    jobs = [
        malleable(1, 0, 10, 4, 4, 4),
        malleable(2, 0, 5, 4, 4, 4),
        malleable(3, 1, 1, 2, 1, 2),
        rigid(4, 1, 100, 1),
    ]
    sim, times = run(make("easy-min"), jobs, 4)
    assert times[2][0] == pytest.approx(10) and times[3][0] == pytest.approx(15)
    # 6 nodes, J1 on 4 until 10 leaves 2 idle; the head J2 needs 4 (min 4) at 10, extra 2 then.
    # J3 (min 1: 4 s on 1 node, 2 s on its requested 2) ends by 10 and backfills at 1; J4 (1
    # node, 100 s) takes one of the 2 extra nodes; J5 (1 node, 100 s) finds no idle node until
    # J3 ends at 5, then takes the last extra node. The head still starts at 10.
    jobs = [
        malleable(1, 0, 10, 4, 4, 4),
        malleable(2, 0, 5, 4, 4, 4),
        malleable(3, 1, 2, 2, 1, 2),
        rigid(4, 1, 100, 1),
        rigid(5, 1, 100, 1),
    ]
    sim, times = run(make("easy-min"), jobs, 6)
    assert _sizes(sim)[3] == 1
    assert times[3][0] == pytest.approx(1) and times[4][0] == pytest.approx(1)
    assert times[2][0] == pytest.approx(10)  # the head is not delayed
    assert times[5][0] == pytest.approx(5)


def test_on_rigid_jobs_asap_rules_agree_and_easy_min_is_easy() -> None:
    differ = 0
    for seed in (1000, 1001, 1002):
        ep = episode_for("hpcgym/Rigid-v0", {"n_jobs": 64}, seed)

        def starts(name: str, ep: object = ep) -> dict[int, float]:
            sim = Simulator(ep.platform, ep.jobs)  # type: ignore[attr-defined]
            make(name).run(sim)
            return {j.id: j.start_time for j in sim.jobs.values()}

        assert starts("asap-min") == starts("asap-req") == starts("asap-max")
        assert starts("easy-min") == starts("easy")
        differ += starts("asap-min") != starts("easy")
    assert differ  # first fit without a reservation is not EASY


@pytest.mark.parametrize("name", TRIVIAL)
def test_on_the_malleable_preset_each_rule_keeps_its_size_and_never_resizes(name: str) -> None:
    ep = episode_for("hpcgym/Malleable-v1", {"n_jobs": 48, "split": "test"}, 1000)
    sim = Simulator(ep.platform, ep.jobs, SimConfig(kill_on_walltime=False))  # the preset's
    make(name).run(sim)
    capacity = ep.platform.clusters[0].nodes
    want = {
        "asap-min": smallest_size,
        "asap-req": lambda s: s.nodes,
        "asap-max": lambda s: largest_size(s, capacity),
        "easy-min": smallest_size,
    }[name]
    jobs = list(sim.jobs.values())
    assert all(j.state.value == "completed" for j in jobs)
    assert all(j.reconfigurations == 0 and j.max_size == want(j.spec) for j in jobs)
    assert any(want(j.spec) != j.spec.nodes for j in jobs) == (name != "asap-req")
