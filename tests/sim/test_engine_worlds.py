"""Tiny hand-computed worlds: exact start and end times, sizes and events.

Every expected value is worked out by hand in the comments from the engine's semantics:
``rate = speedup(n) / speedup(requested) * min(1, share / cpu_need)``; a resize, restart or
migration of cost ``c`` holds the nodes for ``c`` seconds without progress; evolving steps last
their duration in wall time at full CPU.
"""

from __future__ import annotations

import math

import pytest

from hpcgym.errors import CapacityError, StalledError
from hpcgym.sim import (
    Amdahl,
    EventType,
    FixedCost,
    JobState,
    Platform,
    PowerLaw,
    RedistributionCost,
    SimConfig,
    Simulator,
    SizeRule,
)

SUB = EventType.SUBMITTED
DONE = EventType.COMPLETED
KILL = EventType.KILLED
REJ = EventType.REJECTED
RECONF = EventType.RECONFIGURED
REQ = EventType.REQUESTED
STEP = EventType.STEPPED
TICK = EventType.TICK


def times(sim: Simulator) -> dict[int, tuple[float, float]]:
    return {jid: (j.start_time, j.end_time) for jid, j in sim.jobs.items()}


# ----------------------------------------------------------------------------- rigid FCFS
def test_rigid_fcfs_with_a_waiting_job(build, fcfs):
    # 4 nodes. J1 (2 nodes, 10 s) starts at 0 on [0, 1]. J2 (3 nodes) arrives at 1 with 2 idle:
    # it waits, and strict FCFS keeps J3 (1 node) behind it although J3 would fit. At 10 J1
    # ends: J2 takes the lowest idle nodes [0, 1, 2] until 15, J3 takes [3] until 14. J4
    # (4 nodes) starts when both are done, at 15, and ends at 17.
    jobs = [
        build.rigid(1, 0.0, 10.0, 2),
        build.rigid(2, 1.0, 5.0, 3),
        build.rigid(3, 2.0, 4.0, 1),
        build.rigid(4, 3.0, 2.0, 4),
    ]
    sim, sched = fcfs(Platform.single(4), jobs)
    assert times(sim) == {1: (0.0, 10.0), 2: (10.0, 15.0), 3: (10.0, 14.0), 4: (15.0, 17.0)}
    assert sched.placed == {
        1: (0.0, (0, 1)),
        2: (10.0, (0, 1, 2)),
        3: (10.0, (3,)),
        4: (15.0, (0, 1, 2, 3)),
    }
    assert sched.times() == [0.0, 1.0, 2.0, 3.0, 10.0, 14.0, 15.0, 17.0]
    assert all(j.state is JobState.COMPLETED for j in sim.jobs.values())
    assert sim.done and sim.free_nodes() == 4
    assert not sim.node_cpu_used.any()


def test_same_instant_completion_frees_nodes_before_the_decision(build, fcfs):
    # J1 holds both nodes until 10; J2 (2 nodes) is submitted at exactly 10. The completion is
    # processed first, so the one decision point at 10 reports both and sees 2 idle nodes.
    jobs = [build.rigid(1, 0.0, 10.0, 2), build.rigid(2, 10.0, 3.0, 2)]
    sim, sched = fcfs(Platform.single(2), jobs)
    assert sched.log[1] == (10.0, [(DONE, 1), (SUB, 2)])
    assert times(sim)[2] == (10.0, 13.0)


def test_same_instant_order_completion_reconfiguration_kill_submission(build, drive_sim):
    # At t = 10 four things happen: J1 completes (10 s of work), J2's resize ends (a shrink at
    # t = 0 with FixedCost(10)), J3 reaches its 10 s walltime, J4 is submitted. They are
    # reported in phase order: completion, reconfiguration end, kill, submission.
    jobs = [
        build.rigid(1, 0.0, 10.0, 1),
        build.malleable(2, 0.0, 50.0, 2, 1, 2, reconfig=FixedCost(10.0)),
        build.rigid(3, 0.0, 50.0, 1, walltime=10.0),
        build.rigid(4, 10.0, 1.0, 1),
    ]
    sim = Simulator(Platform.single(4), jobs)

    def at0(s: Simulator) -> None:
        s.start(1)
        s.start(2)
        s.start(3)
        s.shrink(2, 1)

    log = drive_sim(sim, {0.0: at0, 10.0: lambda s: s.start(4)})
    assert log[1] == (10.0, [(DONE, 1), (RECONF, 2), (KILL, 3), (SUB, 4)])


# ----------------------------------------------------------------------------- malleable
def _malleable_world(build, reconfig):
    """J1 malleable, 100 s at 2 nodes, sizes 1..4, linear; J2 rigid, 3 nodes x 20 s, at t=10.

    t=0: J1 starts on [0, 1]. t=10: J1 shrinks to 1 task (keeps node 0) and J2 starts on
    [1, 2, 3]. t=30: J2 has ended and J1 expands to 4 nodes.
    """
    jobs = [
        build.malleable(1, 0.0, 100.0, 2, 1, 4, reconfig=reconfig),
        build.rigid(2, 10.0, 20.0, 3),
    ]
    sim = Simulator(Platform.single(4), jobs)
    seen = {}

    def at10(s: Simulator) -> None:
        s.shrink(1, 1)
        seen["after_shrink"] = (s.jobs[1].state, s.jobs[1].nodes.tolist(), s.free_nodes())
        s.start(2)
        seen["j2_nodes"] = s.jobs[2].nodes.tolist()

    def at30(s: Simulator) -> None:
        s.expand(1, 4)
        seen["after_expand"] = (s.jobs[1].state, s.jobs[1].nodes.tolist(), s.free_nodes())

    return sim, seen, {0.0: lambda s: s.start(1), 10.0: at10, 30.0: at30}


def test_malleable_shrink_then_expand_with_fixed_cost(build, drive_sim):
    # FixedCost(5): every resize is 5 s without progress.
    # 0..10 at rate 1 -> 90 left. Shrink at 10: node 1 freed at once, reconfiguring 10..15.
    # 15..30 on 1 node at rate 1/2 -> 7.5 done, 82.5 left. Expand at 30 takes nodes 1..3 at
    # once, reconfiguring 30..35. From 35 at rate 4/2 = 2: 82.5 / 2 = 41.25 s -> ends 76.25.
    # Waste: 1 node x 5 s + 4 nodes x 5 s = 25 CPU-s.
    sim, seen, actions = _malleable_world(build, FixedCost(5.0))
    log = drive_sim(sim, actions)
    assert seen["after_shrink"] == (JobState.RECONFIGURING, [0], 3)
    assert seen["j2_nodes"] == [1, 2, 3]
    assert seen["after_expand"] == (JobState.RECONFIGURING, [0, 1, 2, 3], 0)
    assert [(t, ev) for t, ev in log] == [
        (0.0, [(SUB, 1)]),
        (10.0, [(SUB, 2)]),
        (15.0, [(RECONF, 1)]),
        (30.0, [(DONE, 2)]),
        (35.0, [(RECONF, 1)]),
        (76.25, [(DONE, 1)]),
    ]
    assert times(sim) == {1: (0.0, 76.25), 2: (10.0, 30.0)}
    j1 = sim.jobs[1]
    assert j1.reconfigurations == 2
    assert j1.waste == 25.0
    assert j1.max_size == 4
    row = sim.result().jobs.set_index("id").loc[1]
    assert row["waste"] == 25.0 and row["reconfigurations"] == 2 and row["max_nodes_held"] == 4


def test_malleable_shrink_then_expand_with_redistribution_cost(build, drive_sim):
    # RedistributionCost(alpha=1, beta=15, b=0.5): resize cost alpha*|dN| + beta/(n_old+n_new)
    # + b*|dN|. 2 -> 1: 1 + 15/3 + 0.5 = 6.5 s. 1 -> 4: 3 + 15/5 + 1.5 = 7.5 s.
    # 0..10 rate 1 -> 90 left; reconfiguring 10..16.5; 16.5..30 at 1/2 -> 6.75 done, 83.25
    # left; reconfiguring 30..37.5; then rate 2: 41.625 s -> ends 79.125.
    # Waste: 1 x 6.5 + 4 x 7.5 = 36.5 CPU-s.
    cost = RedistributionCost(alpha=1.0, beta=15.0, b=0.5)
    sim, _, actions = _malleable_world(build, cost)
    log = drive_sim(sim, actions)
    assert [t for t, _ in log] == [0.0, 10.0, 16.5, 30.0, 37.5, 79.125]
    assert times(sim)[1] == (0.0, 79.125)
    assert sim.jobs[1].waste == 36.5
    assert sim.jobs[1].reconfigurations == 2


def test_resize_without_cost_keeps_running(build, drive_sim):
    # No cost: the shrink at 10 takes effect at once. 90 left at rate 1/2 -> ends 190. J2
    # takes the freed node 1 at once: 10..11.
    jobs = [build.malleable(1, 0.0, 100.0, 2, 1, 2), build.rigid(2, 10.0, 1.0, 1)]
    sim = Simulator(Platform.single(2), jobs)

    def at10(s: Simulator) -> None:
        s.shrink(1, 1)
        assert s.jobs[1].state is JobState.RUNNING and s.jobs[1].rate == 0.5
        s.start(2)

    drive_sim(sim, {0.0: lambda s: s.start(1), 10.0: at10})
    assert times(sim) == {1: (0.0, 190.0), 2: (10.0, 11.0)}
    assert sim.jobs[1].waste == 0.0


# ----------------------------------------------------------------------------- moldable
def test_moldable_started_at_other_sizes(build, drive_sim):
    # J1: 60 s at 4 nodes, PowerLaw(rho=0.5), s(n) = sqrt(n); on 1 node its rate is
    # sqrt(1)/sqrt(4) = 1/2 -> 120 s. J2: 60 s at 4 nodes, Amdahl(0.5), s(n) = 1/(0.5+0.5/n):
    # s(2) = 4/3, s(4) = 1.6, rate on 2 nodes = (4/3)/1.6 = 5/6 -> 72 s. J3 rigid, 1 node.
    jobs = [
        build.moldable(1, 0.0, 60.0, 4, 1, 4, speedup=PowerLaw(0.5)),
        build.moldable(2, 0.0, 60.0, 4, 1, 4, speedup=Amdahl(0.5)),
        build.rigid(3, 0.0, 10.0, 1),
    ]
    sim = Simulator(Platform.single(4), jobs)
    placed = {}

    def at0(s: Simulator) -> None:
        s.start(1, 1)
        s.start(2, 2)
        s.start(3)
        placed.update({j: s.jobs[j].nodes.tolist() for j in (1, 2, 3)})

    drive_sim(sim, {0.0: at0})
    assert placed == {1: [0], 2: [1, 2], 3: [3]}
    assert sim.jobs[1].end_time == 120.0
    assert sim.jobs[2].end_time == pytest.approx(72.0, rel=1e-12)
    assert sim.jobs[3].end_time == 10.0
    assert sim.jobs[1].max_size == 1 and sim.jobs[2].max_size == 2


def test_moldable_larger_than_requested_runs_faster(build, drive_sim):
    # 40 s at 2 nodes, linear: on 4 nodes rate 2 -> 20 s; power-of-two rule accepts 4.
    jobs = [build.moldable(1, 0.0, 40.0, 2, 1, 4, size_rule=SizeRule.POWER_OF_TWO)]
    sim = Simulator(Platform.single(4), jobs)
    drive_sim(sim, {0.0: lambda s: s.start(1, 4)})
    assert times(sim)[1] == (0.0, 20.0)


# ----------------------------------------------------------------------------- sharing
def test_two_jobs_share_a_node_at_half_each(build, drive_sim):
    # Both 10 s, 1 node, cpu_need 1, on node 0 at share 0.5: rate 1/2 each -> both end at 20.
    # Node 1 stays idle the whole time.
    jobs = [build.rigid(1, 0.0, 10.0, 1), build.rigid(2, 0.0, 10.0, 1)]
    sim = Simulator(Platform.single(2), jobs)
    seen = {}

    def at0(s: Simulator) -> None:
        s.start(1, nodes=[0], cpu=0.5)
        s.start(2, nodes=[0], cpu=0.5)
        seen["cpu"] = s.node_cpu_used.tolist()
        seen["free"] = s.free_nodes()
        seen["rates"] = (s.jobs[1].rate, s.jobs[2].rate)

    drive_sim(sim, {0.0: at0})
    assert seen == {"cpu": [1.0, 0.0], "free": 1, "rates": (0.5, 0.5)}
    assert times(sim) == {1: (0.0, 20.0), 2: (0.0, 20.0)}
    # Held 20 s at yield 1/2: virtual time (integral of the yield) 10 s; no waste.
    j1 = sim.jobs[1]
    assert (j1.held_time, j1.virtual_time, j1.waste) == (20.0, 10.0, 0.0)


def test_set_shares_cuts_and_restores_rates(build, drive_sim):
    # J1 alone on node 0 from 0 (rate 1). At 4 J2 arrives: J1 is cut to 0.5 and J2 joins
    # node 0 at 0.5. J1 has 6 left at rate 1/2 -> ends 16. J2 did 12 x 0.5 = 6 by 16, then
    # gets share 1 back: 4 left at rate 1 -> ends 20.
    jobs = [build.rigid(1, 0.0, 10.0, 1), build.rigid(2, 4.0, 10.0, 1)]
    sim = Simulator(Platform.single(1), jobs)

    def at4(s: Simulator) -> None:
        s.set_shares(1, 0.5)
        s.start(2, nodes=[0], cpu=0.5)
        assert (s.jobs[1].rate, s.jobs[2].rate) == (0.5, 0.5)

    actions = {0.0: lambda s: s.start(1), 4.0: at4, 16.0: lambda s: s.set_shares(2, 1.0)}
    log = drive_sim(sim, actions)
    assert [t for t, _ in log] == [0.0, 4.0, 16.0, 20.0]
    assert times(sim) == {1: (0.0, 16.0), 2: (4.0, 20.0)}


def test_share_at_or_above_cpu_need_is_full_speed(build, drive_sim):
    # cpu_need 0.5: a 0.5 share gives min(1, 0.5/0.5) = 1 (10 s); a 0.25 share gives 1/2 (20 s).
    jobs = [build.rigid(1, 0.0, 10.0, 1, cpu_need=0.5), build.rigid(2, 0.0, 10.0, 1, cpu_need=0.5)]
    sim = Simulator(Platform.single(1), jobs)

    def at0(s: Simulator) -> None:
        s.start(1, nodes=[0], cpu=0.5)
        s.start(2, nodes=[0], cpu=0.25)

    drive_sim(sim, {0.0: at0})
    assert times(sim) == {1: (0.0, 10.0), 2: (0.0, 20.0)}


def test_multi_task_per_node_jobs(build, drive_sim):
    # cpu_need 0.25. J1: 4 tasks packed on node 0 (CPU 1.0, memory 4 x 0.2 = 0.8), 10 s.
    # J2: 2 tasks on node 1 (CPU 0.5, memory 2 x 0.3 = 0.6), 8 s. J3: 2 tasks, memory 0.3:
    # automatic placement wants 2 distinct nodes with room; only node 1 has room, so it is
    # refused; packing both on node 1 breaks memory (0.6 + 0.6). At 8 J2 ends, but node 0 is
    # still full, so only node 1 has room: refused again. At 10 J1 ends and J3 goes on [0, 1]
    # for 5 s -> ends 15.
    jobs = [
        build.rigid(1, 0.0, 10.0, 4, cpu_need=0.25, mem=0.2),
        build.rigid(2, 0.0, 8.0, 2, cpu_need=0.25, mem=0.3),
        build.rigid(3, 0.0, 5.0, 2, cpu_need=0.25, mem=0.3),
    ]
    sim = Simulator(Platform.single(2), jobs)
    seen = {}

    def try_j3(s: Simulator) -> None:
        try:
            s.start(3)
        except CapacityError:
            seen.setdefault("refused", []).append(s.now)

    def at0(s: Simulator) -> None:
        s.start(1, nodes=[0, 0, 0, 0])
        s.start(2, nodes=[1, 1])
        seen["cpu"] = s.node_cpu_used.tolist()
        seen["mem"] = [round(m, 12) for m in s.node_mem_used.tolist()]
        seen["free"] = s.free_nodes()
        with pytest.raises(CapacityError, match=r"job 3\b"):
            s.start(3, nodes=[1, 1])
        try_j3(s)

    def at10(s: Simulator) -> None:
        try_j3(s)
        seen["j3"] = s.jobs[3].nodes.tolist()

    drive_sim(sim, {0.0: at0, 8.0: try_j3, 10.0: at10})
    assert seen == {
        "cpu": [1.0, 0.5],
        "mem": [0.8, 0.6],
        "free": 0,
        "refused": [0.0, 8.0],
        "j3": [0, 1],
    }
    assert times(sim) == {1: (0.0, 10.0), 2: (0.0, 8.0), 3: (10.0, 15.0)}


# ----------------------------------------------------------------------------- suspend, migrate
def test_suspend_and_resume_with_restart_penalty(build, drive_sim):
    # J1: 2 nodes, 20 s, FixedCost(3). J2 (2 nodes, 5 s) arrives at 5: J1 is suspended (15
    # left, nothing held) and J2 runs 5..10. At 10 J1 resumes: restart 10..13 holding 2 nodes
    # (waste 6), then 15 s -> ends 28. Walltime 25 counts held time only: 5 + 18 = 23 < 25.
    jobs = [
        build.rigid(1, 0.0, 20.0, 2, reconfig=FixedCost(3.0), walltime=25.0),
        build.rigid(2, 5.0, 5.0, 2),
    ]
    sim = Simulator(Platform.single(2), jobs)
    seen = {}

    def at5(s: Simulator) -> None:
        s.suspend(1)
        seen["suspended"] = (s.jobs[1].state, s.jobs[1].size, s.free_nodes(), list(s.suspended))
        s.start(2)

    def at10(s: Simulator) -> None:
        s.resume(1)
        seen["resumed"] = (s.jobs[1].state, s.jobs[1].busy_until)

    log = drive_sim(sim, {0.0: lambda s: s.start(1), 5.0: at5, 10.0: at10})
    assert seen == {
        "suspended": (JobState.SUSPENDED, 0, 2, [1]),
        "resumed": (JobState.RECONFIGURING, 13.0),
    }
    assert [t for t, _ in log] == [0.0, 5.0, 10.0, 13.0, 28.0]
    assert times(sim)[1] == (0.0, 28.0)
    j1 = sim.jobs[1]
    assert (j1.state, j1.preemptions, j1.waste, j1.held_time) == (JobState.COMPLETED, 1, 6.0, 23.0)


def test_walltime_counts_held_time_across_a_suspension(build, drive_sim):
    # As above with walltime 22: held 5 s before the suspension, 17 more after the resume at
    # 10 -> killed at 27 (3 s restart + 14 s of progress, 1 s of work left).
    jobs = [
        build.rigid(1, 0.0, 20.0, 2, reconfig=FixedCost(3.0), walltime=22.0),
        build.rigid(2, 5.0, 5.0, 2),
    ]
    sim = Simulator(Platform.single(2), jobs)

    def at5(s: Simulator) -> None:
        s.suspend(1)
        s.start(2)

    drive_sim(sim, {0.0: lambda s: s.start(1), 5.0: at5, 10.0: lambda s: s.resume(1)})
    j1 = sim.jobs[1]
    assert (j1.state, j1.end_time) == (JobState.KILLED, 27.0)
    assert sim.remaining_work(j1) == pytest.approx(1.0, abs=1e-12)


def test_migration_within_and_across_clusters(build, drive_sim):
    # Two clusters of 2 nodes: ids 0-1 and 2-3. J1 (2 nodes, 20 s, FixedCost(4)) starts on
    # [0, 1]; at 5 it migrates to [2, 3] (cluster 1): 5..9 without progress, 15 left -> ends 24.
    # J2 (2 nodes, 1 s) arrives at 5 and starts on the freed [0, 1] at once: ends 6.
    jobs = [
        build.rigid(1, 0.0, 20.0, 2, reconfig=FixedCost(4.0)),
        build.rigid(2, 5.0, 1.0, 2),
    ]
    sim = Simulator(Platform.multi([2, 2]), jobs)
    seen = {}

    def at5(s: Simulator) -> None:
        s.migrate(1, [2, 3])
        seen["after"] = (s.jobs[1].nodes.tolist(), s.jobs[1].cluster, s.node_cpu_used.tolist())
        s.start(2)
        seen["j2"] = s.jobs[2].nodes.tolist()

    drive_sim(sim, {0.0: lambda s: s.start(1), 5.0: at5})
    assert seen == {"after": ([2, 3], 1, [0.0, 0.0, 1.0, 1.0]), "j2": [0, 1]}
    assert times(sim) == {1: (0.0, 24.0), 2: (5.0, 6.0)}
    assert (sim.jobs[1].migrations, sim.jobs[1].waste) == (1, 8.0)


# ----------------------------------------------------------------------------- evolving
def test_evolving_waits_for_grant_then_steps_down(build, fcfs):
    # 4 nodes. J1 evolving: 10 s on 1 node, 20 s on 3, 5 s on 2. J2 rigid: 3 nodes, 15 s.
    # FCFS at 0: J1 on [0], J2 on [1, 2, 3]. At 10 J1 asks for 3 and holds node 0 idle until
    # J2 ends at 15 and the grant gives it [0, 1, 2]: waste 1 CPU x 5 s. Step 1 runs 15..35.
    # At 35 step 2 needs 2: node 2 is released at once (STEPPED); it runs to 40.
    jobs = [build.evolving(1, 0.0, [(10.0, 1), (20.0, 3), (5.0, 2)]), build.rigid(2, 0.0, 15.0, 3)]
    sim, sched = fcfs(Platform.single(4), jobs)
    assert sched.log == [
        (0.0, [(SUB, 1), (SUB, 2)]),
        (10.0, [(REQ, 1)]),
        (15.0, [(DONE, 2)]),
        (35.0, [(STEP, 1)]),
        (40.0, [(DONE, 1)]),
    ]
    j1 = sim.jobs[1]
    assert times(sim)[1] == (0.0, 40.0)
    assert (j1.waste, j1.reconfigurations, j1.max_size) == (5.0, 1, 3)
    assert sim.result().jobs.set_index("id").loc[1, "waste"] == 5.0


def test_evolving_request_state_and_step_down_release(build, drive_sim):
    # Same job alone on 4 nodes, granted at once with FixedCost(2): at 10 the request is
    # visible (request 3, rate 0, still 1 node); grant -> reconfiguring 10..12 on 3 nodes
    # (waste 3 x 2 = 6); step 1 runs 12..32; at 32 it keeps 2 nodes, 2 idle; ends 37.
    jobs = [build.evolving(1, 0.0, [(10.0, 1), (20.0, 3), (5.0, 2)], reconfig=FixedCost(2.0))]
    sim = Simulator(Platform.single(4), jobs)
    seen = {}

    def at10(s: Simulator) -> None:
        j = s.jobs[1]
        seen["request"] = (j.state, j.request, j.rate, j.size, j.step)
        s.grant(1)
        seen["granted"] = (j.state, j.size, j.busy_until, j.request)

    def at32(s: Simulator) -> None:
        seen["stepped"] = (s.jobs[1].size, s.free_nodes(), s.jobs[1].nodes.tolist())

    log = drive_sim(sim, {0.0: lambda s: s.start(1), 10.0: at10, 32.0: at32})
    assert seen == {
        "request": (JobState.RUNNING, 3, 0.0, 1, 1),
        "granted": (JobState.RECONFIGURING, 3, 12.0, 0),
        "stepped": (2, 2, [0, 1]),
    }
    assert [t for t, _ in log] == [0.0, 10.0, 12.0, 32.0, 37.0]
    assert (sim.jobs[1].end_time, sim.jobs[1].waste) == (37.0, 6.0)


# ----------------------------------------------------------------------------- walltime
def _walltime_jobs(build):
    # 2 nodes. J1: 1 node, 30 s of work, walltime 20. J2: 1 node, 10 s, walltime exactly 10
    # (completion wins over the kill at the same instant). J3: 2 nodes, 5 s, waits for both.
    return [
        build.rigid(1, 0.0, 30.0, 1, walltime=20.0),
        build.rigid(2, 0.0, 10.0, 1, walltime=10.0),
        build.rigid(3, 0.0, 5.0, 2),
    ]


def test_walltime_kill(build, fcfs):
    # J1 killed at 20; J3 starts at 20, ends 25.
    sim, sched = fcfs(Platform.single(2), _walltime_jobs(build))
    states = {jid: j.state for jid, j in sim.jobs.items()}
    assert states == {1: JobState.KILLED, 2: JobState.COMPLETED, 3: JobState.COMPLETED}
    assert times(sim) == {1: (0.0, 20.0), 2: (0.0, 10.0), 3: (20.0, 25.0)}
    assert (20.0, [(KILL, 1)]) in sched.log
    counts = sim.counts
    assert (counts["completed"], counts["killed"], counts["rejected"]) == (2, 1, 0)


def test_no_walltime_kill_when_disabled(build, fcfs):
    # Same world, kill_on_walltime=False: J1 runs its 30 s; J3 then runs 30..35.
    sim, _ = fcfs(Platform.single(2), _walltime_jobs(build), SimConfig(kill_on_walltime=False))
    assert all(j.state is JobState.COMPLETED for j in sim.jobs.values())
    assert times(sim) == {1: (0.0, 30.0), 2: (0.0, 10.0), 3: (30.0, 35.0)}


# ----------------------------------------------------------------------------- rejection
def test_job_larger_than_the_cluster_is_rejected_and_counted(build, fcfs):
    # 4 nodes: J2 asks for 5 and is rejected at its submission (t = 1); the others run
    # normally. Moldable J3 (min 2, max 8) can fit, so it is kept; J4 (min 5) cannot.
    jobs = [
        build.rigid(1, 0.0, 10.0, 4),
        build.rigid(2, 1.0, 10.0, 5),
        build.moldable(3, 2.0, 10.0, 4, 2, 8),
        build.moldable(4, 3.0, 10.0, 6, 5, 8),
    ]
    sim, sched = fcfs(Platform.single(4), jobs)
    assert sched.log[1] == (1.0, [(REJ, 2)])
    assert sched.log[3] == (3.0, [(REJ, 4)])
    states = {jid: j.state for jid, j in sim.jobs.items()}
    assert states == {
        1: JobState.COMPLETED,
        2: JobState.REJECTED,
        3: JobState.COMPLETED,
        4: JobState.REJECTED,
    }
    assert times(sim)[3] == (10.0, 20.0)
    assert sim.jobs[2].end_time == 1.0 and math.isnan(sim.jobs[2].start_time)
    c = sim.counts
    assert (c["submitted"], c["completed"], c["killed"], c["rejected"]) == (4, 2, 0, 2)
    res = sim.result()
    assert len(res.jobs) == 4
    assert list(res.jobs["state"]) == ["completed", "rejected", "completed", "rejected"]
    assert (res.summary["completed"], res.summary["rejected"]) == (2.0, 2.0)


def test_rejection_uses_the_largest_cluster_not_the_total(build, fcfs):
    # Clusters of 3 and 3 nodes: a 4-node job fits the total (6) but no cluster.
    jobs = [build.rigid(1, 0.0, 1.0, 4), build.rigid(2, 0.0, 1.0, 3)]
    sim, _ = fcfs(Platform.multi([3, 3]), jobs)
    assert sim.jobs[1].state is JobState.REJECTED
    assert sim.jobs[2].state is JobState.COMPLETED


def test_rejection_of_packed_tasks_and_evolving_peaks(build):
    # 2 nodes. cpu_need 0.25 packs 4 tasks per node: 8 tasks fit, 9 never do. With memory 0.5
    # only 2 per node fit: 5 tasks never do. An evolving job whose largest step (3) exceeds
    # the cluster is rejected although its first step fits.
    jobs = [
        build.rigid(1, 0.0, 1.0, 8, cpu_need=0.25),
        build.rigid(2, 0.0, 1.0, 9, cpu_need=0.25),
        build.rigid(3, 0.0, 1.0, 5, cpu_need=0.25, mem=0.5),
        build.rigid(4, 0.0, 1.0, 4, cpu_need=0.25, mem=0.5),
        build.evolving(5, 0.0, [(1.0, 1), (1.0, 3)]),
    ]
    sim = Simulator(Platform.single(2), jobs)
    assert sim.advance()
    states = {jid: j.state for jid, j in sim.jobs.items()}
    assert states == {
        1: JobState.QUEUED,
        2: JobState.REJECTED,
        3: JobState.REJECTED,
        4: JobState.QUEUED,
        5: JobState.REJECTED,
    }
    # The accepted packed job does fit, packed explicitly.
    sim.start(1, nodes=[0, 0, 0, 0, 1, 1, 1, 1])
    assert sim.node_cpu_used.tolist() == [1.0, 1.0]


# ----------------------------------------------------------------------------- ticks, stalls
def test_periodic_ticks(build, fcfs):
    # tick 10 from the first submission (t=0): ticks at 10, 20, 30. J1 (25 s) ends at 25; J2
    # is submitted at 30, together with the tick (submission reported first); it ends at 35,
    # after which everything has ended and no further tick is reported.
    jobs = [build.rigid(1, 0.0, 25.0, 1), build.rigid(2, 30.0, 5.0, 1)]
    sim, sched = fcfs(Platform.single(1), jobs, SimConfig(tick=10.0))
    assert sim.done
    assert sched.log == [
        (0.0, [(SUB, 1)]),
        (10.0, [(TICK, None)]),
        (20.0, [(TICK, None)]),
        (25.0, [(DONE, 1)]),
        (30.0, [(SUB, 2), (TICK, None)]),
        (35.0, [(DONE, 2)]),
    ]


def test_stalled_when_nobody_acts(build):
    # A queued job, no scheduler action, no future event: the second advance must raise.
    sim = Simulator(Platform.single(2), [build.rigid(7, 0.0, 1.0, 1)])
    assert sim.advance()
    with pytest.raises(StalledError, match=r"\b7\b"):
        sim.advance()


def test_stalled_with_a_suspended_job(build):
    sim = Simulator(Platform.single(2), [build.rigid(7, 0.0, 10.0, 1)])
    sim.advance()
    sim.start(7)
    sim.suspend(7)
    with pytest.raises(StalledError, match=r"\b7\b"):
        sim.advance()


def test_the_stall_message_lists_the_unfinished_jobs_in_submission_order(build):
    """Queued, suspended and (stuck) running jobs, finished ones left out; the first ten in
    submission order, then how many more."""
    specs = [build.rigid(100 - i, float(i), 1.0, 1) for i in range(14)]  # ids fall as time goes
    sim = Simulator(Platform.single(2), specs)
    while sim.now < 13.0:
        assert sim.advance()
        if sim.now == 0.0:
            sim.start(100)  # completes at 1.0: not listed
        if sim.now == 2.0:
            sim.start(98)
            sim.suspend(98)
    with pytest.raises(StalledError) as raised:
        sim.advance()
    text = str(raised.value)
    assert "13 jobs are unfinished" in text
    shown = [int(x.split(" ")[0]) for x in text.split(": ", 1)[1].split(". ")[0].split(", ")]
    assert shown[:10] == [99, 98, 97, 96, 95, 94, 93, 92, 91, 90]
    assert "(suspended)" in text and "(queued)" in text and text.count("and 3 more") == 1


def test_stalled_with_ticks_after_two_idle_ticks(build):
    # With ticks, the engine wakes the scheduler once more (t = 5) and then gives up at the
    # next tick (t = 10) when no command was issued in between.
    sim = Simulator(Platform.single(2), [build.rigid(7, 0.0, 1.0, 1)], SimConfig(tick=5.0))
    assert sim.advance() and sim.now == 0.0
    assert sim.advance() and sim.now == 5.0
    with pytest.raises(StalledError, match=r"\b7\b"):
        sim.advance()
    assert sim.now == 10.0


def test_ticks_do_not_stall_before_a_pending_walltime_kill(build):
    # Found by this suite, fixed in e58a149. Without ticks this job (waiting at its second
    # step, never granted) is killed at its walltime, t = 100. Ticks must not change that: a
    # kill is an event that will occur.
    spec = build.evolving(1, 0.0, [(10.0, 1), (10.0, 2)], walltime=100.0)
    for tick in (None, 5.0):
        sim = Simulator(Platform.single(2), [spec], SimConfig(tick=tick))
        while sim.advance():
            if sim.queue:
                sim.start(1)
        assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.KILLED, 100.0), tick


# ----------------------------------------------------------------------------- more corners
def test_evolving_step_is_wall_time_at_full_cpu(build, drive_sim):
    # J1 evolving, one 10 s step on 1 node, starts on node 0 at share 0.5 next to J2 (rigid,
    # 5 s, share 0.5): both at rate 1/2. J2 ends at 10; J1 has done 5 of its 10 s and gets
    # share 1 back: ends at 15.
    jobs = [build.evolving(1, 0.0, [(10.0, 1)]), build.rigid(2, 0.0, 5.0, 1)]
    sim = Simulator(Platform.single(1), jobs)

    def at0(s: Simulator) -> None:
        s.start(1, nodes=[0], cpu=0.5)
        s.start(2, nodes=[0], cpu=0.5)
        assert (s.jobs[1].rate, s.jobs[1].yield_) == (0.5, 0.5)

    drive_sim(sim, {0.0: at0, 10.0: lambda s: s.set_shares(1, 1.0)})
    assert times(sim) == {1: (0.0, 15.0), 2: (0.0, 10.0)}


def test_estimated_end_through_a_reconfiguration(build):
    # The FixedCost(5) malleable world: just after the shrink at 10 the job is reconfiguring
    # until 15, with 90 left at the 1-node rate 1/2: estimated end 15 + 180 = 195. After the
    # expansion at 30: 35 + 82.5 / 2 = 76.25, which is when it does end.
    jobs = [
        build.malleable(1, 0.0, 100.0, 2, 1, 4, reconfig=FixedCost(5.0)),
        build.rigid(2, 10.0, 20.0, 3),
    ]
    sim = Simulator(Platform.single(4), jobs)
    seen = []
    while sim.advance():
        if sim.now == 0.0:
            sim.start(1)
            seen.append(sim.estimated_end(sim.jobs[1]))
        elif sim.now == 10.0:
            sim.shrink(1, 1)
            sim.start(2)
            seen.append(sim.estimated_end(sim.jobs[1]))
        elif sim.now == 30.0:
            sim.expand(1, 4)
            seen.append(sim.estimated_end(sim.jobs[1]))
    assert seen == [100.0, 195.0, 76.25]
    assert sim.jobs[1].end_time == 76.25


def test_same_submit_time_keeps_input_order(build):
    # Jobs 5 and 3 are both submitted at 0, in that order in the input: the queue, its head
    # and the events follow the input order, not the ids.
    sim = Simulator(Platform.single(1), [build.rigid(5, 0.0, 1.0, 1), build.rigid(3, 0.0, 1.0, 1)])
    assert sim.advance()
    assert [(k, j.id) for k, j in sim.happened] == [(SUB, 5), (SUB, 3)]
    assert list(sim.queue) == [5, 3]
    assert sim.queue_head().id == 5


def test_suspend_during_a_reconfiguration(build, drive_sim):
    # J1 malleable (100 s at 2 nodes, FixedCost(10)) shrinks to 1 at 0 and is suspended at
    # once: the resize is abandoned, nothing is held. Resumed at 5 (J2's submission) on 1
    # node: restart 5..15 (waste 1 x 10), then 100 at rate 1/2 -> ends 215.
    jobs = [
        build.malleable(1, 0.0, 100.0, 2, 1, 2, reconfig=FixedCost(10.0)),
        build.rigid(2, 5.0, 1.0, 1),
    ]
    sim = Simulator(Platform.single(2), jobs)

    def at0(s: Simulator) -> None:
        s.start(1)
        s.shrink(1, 1)
        s.suspend(1)
        assert s.free_nodes() == 2 and math.isnan(s.jobs[1].busy_until)

    def at5(s: Simulator) -> None:
        s.resume(1)
        s.start(2)

    log = drive_sim(sim, {0.0: at0, 5.0: at5})
    assert [t for t, _ in log] == [0.0, 5.0, 6.0, 15.0, 215.0]
    j1 = sim.jobs[1]
    assert (j1.end_time, j1.waste, j1.preemptions, j1.reconfigurations) == (215.0, 10.0, 1, 1)


def test_walltime_kill_during_a_migration(build, drive_sim):
    # J1 (20 s, walltime 12, FixedCost(5)) migrates at 10 with 10 s of work left; it is still
    # reconfiguring at 12 when its walltime is reached: killed with 10 left, held 12 s. J2
    # runs 10..11 on node 0.
    jobs = [
        build.rigid(1, 0.0, 20.0, 1, walltime=12.0, reconfig=FixedCost(5.0)),
        build.rigid(2, 10.0, 1.0, 1),
    ]
    sim = Simulator(Platform.single(2), jobs)

    def at10(s: Simulator) -> None:
        s.migrate(1, [1])
        s.start(2)  # on the node J1 just left

    drive_sim(sim, {0.0: lambda s: s.start(1), 10.0: at10})
    j1 = sim.jobs[1]
    assert (j1.state, j1.end_time, j1.held_time) == (JobState.KILLED, 12.0, 12.0)
    assert sim.remaining_work(j1) == 10.0
    assert j1.waste == 2.0  # 1 node x the 2 s of migration before the kill
    assert times(sim)[2] == (10.0, 11.0)


def test_automatic_placement_takes_the_first_cluster_with_room(build, fcfs):
    # Clusters of 2 (ids 0-1) and 3 (ids 2-4). J1 (3 nodes) does not fit cluster 0: it gets
    # [2, 3, 4]. J2 (2 nodes) gets [0, 1]. J3 (1 node, submitted at 1) waits for J2's end at 5
    # and takes node 0, although J1 would free cluster 1 only at 10.
    jobs = [
        build.rigid(1, 0.0, 10.0, 3),
        build.rigid(2, 0.0, 5.0, 2),
        build.rigid(3, 1.0, 1.0, 1),
    ]
    sim, sched = fcfs(Platform.multi([2, 3]), jobs)
    assert sched.placed == {1: (0.0, (2, 3, 4)), 2: (0.0, (0, 1)), 3: (5.0, (0,))}
    assert [sim.jobs[j].end_time for j in (1, 2, 3)] == [10.0, 5.0, 6.0]


def test_empty_workload(build):
    sim = Simulator(Platform.single(2), [])
    assert not sim.advance() and sim.done
    res = sim.result()
    assert len(res.jobs) == 0
    assert (res.summary["jobs"], res.summary["makespan"], res.summary["energy"]) == (0, 0, 0)


def test_stalled_advance_leaves_the_clock_at_the_decision_point(build):
    # Found by this suite (stale events moved the clock); fixed in f879c37.
    # J7 (10 s) starts and is suspended at 0: nothing can happen, so advance raises at t = 0.
    # Recovering (resume at 0, no restart cost) it then ends at 0 + 10 = 10.
    sim = Simulator(Platform.single(2), [build.rigid(7, 0.0, 10.0, 1)])
    sim.advance()
    sim.start(7)
    sim.suspend(7)
    with pytest.raises(StalledError, match=r"at t=0\b"):
        sim.advance()
    assert sim.now == 0.0
    sim.resume(7)
    while sim.advance():
        pass
    assert sim.jobs[7].end_time == 10.0


def test_evolving_suspended_while_waiting_then_resumed_and_granted(build, drive_sim):
    # 4 nodes. J1 evolving (10 s on 1, then 10 s on 3), FixedCost(2); J2 rigid, 3 nodes, 20 s.
    # At 10 J1 asks for 3 and is suspended at once (releases node 0, keeps its request). At 20
    # J2 ends; J1 resumes on 1 node: restart 20..22 (waste 1 x 2). At 22 it still waits for
    # its 3 nodes: granted, resize 22..24 on 3 nodes (waste 3 x 2); step 1 runs 24..34.
    # Held: 10 + 2 + 2 + 10 = 24 s.
    jobs = [
        build.evolving(1, 0.0, [(10.0, 1), (10.0, 3)], reconfig=FixedCost(2.0)),
        build.rigid(2, 0.0, 20.0, 3),
    ]
    sim = Simulator(Platform.single(4), jobs)
    seen = {}

    def at0(s: Simulator) -> None:
        s.start(1)
        s.start(2)

    def at22(s: Simulator) -> None:
        j = s.jobs[1]
        seen["waiting"] = (j.state, j.request, j.size, j.rate)
        s.grant(1)

    log = drive_sim(
        sim, {0.0: at0, 10.0: lambda s: s.suspend(1), 20.0: lambda s: s.resume(1), 22.0: at22}
    )
    assert [(t, ev) for t, ev in log] == [
        (0.0, [(SUB, 1), (SUB, 2)]),
        (10.0, [(REQ, 1)]),
        (20.0, [(DONE, 2)]),
        (22.0, [(RECONF, 1)]),
        (24.0, [(RECONF, 1)]),
        (34.0, [(DONE, 1)]),
    ]
    assert seen["waiting"] == (JobState.RUNNING, 3, 1, 0.0)
    j1 = sim.jobs[1]
    assert (j1.end_time, j1.waste, j1.held_time) == (34.0, 8.0, 24.0)
    assert (j1.preemptions, j1.reconfigurations) == (1, 1)
