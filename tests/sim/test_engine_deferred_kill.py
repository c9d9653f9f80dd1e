"""Deferred walltime kills: a job planned to complete before its deadline gets no kill event,
and any later change of plan that moves its completion past the deadline queues the kill.

Every case is hand-computed; the expected times are those of a kill armed at the start.
"""

from __future__ import annotations

from hpcgym.sim import FixedCost, JobKind, JobSpec, JobState, Platform, Simulator
from hpcgym.sim.events import WALLTIME


def _malleable(work: float, walltime: float, cost: float = 0.0) -> JobSpec:
    # 4 tasks at start, 1..4 allowed, linear speedup.
    return JobSpec(
        1,
        0.0,
        work=work,
        nodes=4,
        kind=JobKind.MALLEABLE,
        min_nodes=1,
        max_nodes=4,
        walltime=walltime,
        reconfig=FixedCost(cost),
    )


def _start_all(sim: Simulator) -> None:
    assert sim.advance()
    for job_id in list(sim.queue):
        sim.start(job_id)


def _kills_queued(sim: Simulator) -> int:
    return sum(
        1
        for e in sim._heap
        if e.prio == WALLTIME and e.job is not None and e.job._wt_version == e.version
    )


def _finish(sim: Simulator) -> None:
    while sim.advance():
        pass


def test_no_kill_event_while_the_completion_comes_first() -> None:
    sim = Simulator(Platform.single(4), [_malleable(work=10.0, walltime=20.0)])
    _start_all(sim)
    assert _kills_queued(sim) == 0
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.COMPLETED, 10.0)


def test_completion_exactly_at_the_deadline_wins() -> None:
    sim = Simulator(Platform.single(4), [_malleable(work=20.0, walltime=20.0)])
    _start_all(sim)
    assert _kills_queued(sim) == 0
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.COMPLETED, 20.0)


def test_a_shrink_that_moves_the_completion_past_the_deadline_queues_the_kill() -> None:
    # 4 tasks, work 12 (at 4 tasks), walltime 20. Shrunk to 1 task at t=2: 10 work-seconds
    # left at rate 1/4 -> would end at 42; the kill comes at held time 20.
    sim = Simulator(Platform.single(4), [_malleable(work=12.0, walltime=20.0)])
    _start_all(sim)
    sim.wake_at(2.0)
    assert sim.advance()
    assert _kills_queued(sim) == 0
    sim.shrink(1, 1)
    assert _kills_queued(sim) == 1
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.KILLED, 20.0)


def test_a_shrink_that_still_completes_in_time_keeps_it_deferred() -> None:
    # Work 8 at 4 tasks; shrunk to 2 at t=2: 6 left at rate 1/2 -> ends at 14 < 20.
    sim = Simulator(Platform.single(4), [_malleable(work=8.0, walltime=20.0)])
    _start_all(sim)
    sim.wake_at(2.0)
    assert sim.advance()
    sim.shrink(1, 2)
    assert _kills_queued(sim) == 0
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.COMPLETED, 14.0)


def test_a_reconfiguration_queues_the_kill_and_it_fires_mid_reconfiguration() -> None:
    # Work 10, walltime 12; shrunk to 2 tasks at t=4 with a 100 s reconfiguration cost. Held
    # time reaches 12 at t=12, during the reconfiguration.
    sim = Simulator(Platform.single(4), [_malleable(work=10.0, walltime=12.0, cost=100.0)])
    _start_all(sim)
    sim.wake_at(4.0)
    assert sim.advance()
    sim.shrink(1, 2)
    assert sim.jobs[1].state is JobState.RECONFIGURING
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.KILLED, 12.0)


def test_a_lower_cpu_share_that_delays_the_completion_queues_the_kill() -> None:
    # Rigid 1 task, work 10, walltime 15. Share halved at t=2: 8 left at rate 1/2 -> 18 > 15.
    sim = Simulator(Platform.single(1), [JobSpec(1, 0.0, work=10.0, nodes=1, walltime=15.0)])
    _start_all(sim)
    sim.wake_at(2.0)
    assert sim.advance()
    sim.set_shares(1, 0.5)
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.KILLED, 15.0)


def test_suspension_cancels_a_deferred_kill_and_resume_rearms_it() -> None:
    # Rigid 1 task, work 10, walltime 12. Suspended at 4 (held 4), resumed at 50: 6 left,
    # ends at 56 (held 10 < 12): completed, never killed.
    sim = Simulator(Platform.single(1), [JobSpec(1, 0.0, work=10.0, nodes=1, walltime=12.0)])
    _start_all(sim)
    sim.wake_at(4.0)
    sim.wake_at(50.0)
    assert sim.advance()
    sim.suspend(1)
    assert sim.advance() and sim.now == 50.0
    sim.resume(1)
    _finish(sim)
    assert (sim.jobs[1].state, sim.jobs[1].end_time) == (JobState.COMPLETED, 56.0)
