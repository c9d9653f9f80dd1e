"""wake_at, set_walltime and the progress model option, on hand-computed worlds."""

from __future__ import annotations

import pytest

from hpcgym.errors import CommandError, JobStateError, SpecError
from hpcgym.sim import EventType, JobSpec, Platform, SimConfig, Simulator


def _started(jobs: list[JobSpec], nodes: int = 4, config: SimConfig | None = None) -> Simulator:
    sim = Simulator(Platform.single(nodes), jobs, config)
    assert sim.advance()
    for job_id in list(sim.queue):
        sim.start(job_id)
    return sim


def test_wake_at_gives_one_decision_point_per_instant_and_nothing_else() -> None:
    # One job of 100 s: without wake-ups the only decision points are 0 and 100.
    sim = _started([JobSpec(1, 0.0, work=100.0, nodes=1)])
    sim.wake_at(30.0)
    sim.wake_at(30.0)  # the same instant again: still one decision point
    sim.wake_at(60.0)
    seen = []
    while sim.advance():
        seen.append((sim.now, [e for e, _ in sim.happened]))
    assert seen == [
        (30.0, [EventType.WAKEUP]),
        (60.0, [EventType.WAKEUP]),
        (100.0, [EventType.COMPLETED]),
    ]


def test_wake_at_in_the_past_or_infinite_is_refused() -> None:
    sim = _started([JobSpec(1, 10.0, work=5.0, nodes=1)])
    assert sim.now == 10.0
    for bad in (9.0, float("inf"), float("nan")):
        with pytest.raises(CommandError):
            sim.wake_at(bad)
    assert sim.advance() and sim.now == 15.0


def test_a_wakeup_after_the_last_job_ends_is_not_reported() -> None:
    sim = _started([JobSpec(1, 0.0, work=10.0, nodes=1)])
    sim.wake_at(50.0)
    assert sim.advance() and sim.now == 10.0
    assert not sim.advance()


def test_set_walltime_extends_and_shortens_the_limit() -> None:
    # Job 1 (100 s, limit 50) would be killed at 50; at t=10 its limit becomes 200, so it
    # completes at 100. Job 2 (100 s, no limit) gets a 5 s limit at t=10, when it has already
    # held its node for 10 s: it is killed at 10.
    sim = _started([JobSpec(1, 0.0, 100.0, 1, walltime=50.0), JobSpec(2, 0.0, 100.0, 1)])
    sim.wake_at(10.0)
    assert sim.advance() and sim.now == 10.0
    sim.set_walltime(1, 200.0)
    sim.set_walltime(2, 5.0)
    assert sim.jobs[1].walltime == 200.0
    assert sim.advance() and sim.now == 10.0
    assert sim.happened == [(EventType.KILLED, sim.jobs[2])]
    assert sim.advance() and sim.now == 100.0
    assert sim.happened == [(EventType.COMPLETED, sim.jobs[1])]


def test_set_walltime_on_an_ended_job_or_to_a_bad_value_is_refused() -> None:
    sim = _started([JobSpec(1, 0.0, 10.0, 1), JobSpec(2, 0.0, 100.0, 1)])
    assert sim.advance() and sim.now == 10.0
    with pytest.raises(JobStateError):
        sim.set_walltime(1, 50.0)
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(CommandError):
            sim.set_walltime(2, bad)
    assert sim.jobs[2].walltime is None


@pytest.mark.parametrize(("progress", "end"), [("worst", 60.0), ("mean", 40.0)])
def test_progress_model(progress: str, end: float) -> None:
    # Two whole-node tasks at shares 1.0 and 0.5: the worst task's yield is 0.5 (30 s of work
    # take 60 s), the mean yield is 0.75 (they take 40 s).
    sim = Simulator(Platform.single(2), [JobSpec(1, 0.0, 30.0, 2)], SimConfig(progress=progress))
    assert sim.advance()
    sim.start(1, nodes=[0, 1], cpu=[1.0, 0.5])
    assert sim.advance() and sim.now == end
    assert sim.jobs[1].end_time == end


def test_unknown_progress_model_is_refused() -> None:
    with pytest.raises(SpecError):
        SimConfig(progress="best")


def test_a_pickled_or_copied_simulator_continues_with_the_same_timeline() -> None:
    import copy
    import pickle

    jobs = [JobSpec(i, float(i), work=10.0 + 7 * i, nodes=1 + i % 3) for i in range(8)]

    def finish(sim: Simulator) -> list[tuple[float, float]]:
        while sim.advance():
            while (head := sim.queue_head()) is not None and head.spec.nodes <= sim.free_nodes():
                sim.start(head.id)
        return [(j.start_time, j.end_time) for j in sim.jobs.values()]

    sim = Simulator(Platform.single(4), jobs)
    for _ in range(5):  # stop mid-episode, with jobs queued and running
        assert sim.advance()
        while (head := sim.queue_head()) is not None and head.spec.nodes <= sim.free_nodes():
            sim.start(head.id)
    clone = pickle.loads(pickle.dumps(sim))
    twin = copy.deepcopy(sim)
    assert not clone.node_cpu_used.flags.writeable
    expected = finish(sim)
    assert finish(clone) == expected
    assert finish(twin) == expected
    assert clone.result().summary == sim.result().summary


def test_happened_is_one_list_per_decision_point_built_when_read() -> None:
    """``happened`` is built on first read: the same list on every read at one point, kept
    as it was once the simulation moves on, equal in a pickled copy, and the same events
    whether or not an earlier point was read."""
    import pickle

    jobs = [
        JobSpec(1, 0.0, work=10.0, nodes=2),
        JobSpec(2, 0.0, work=5.0, nodes=9),  # never fits 4 nodes: rejected at submission
        JobSpec(3, 10.0, work=1.0, nodes=1),
    ]

    def episode(read: bool) -> list[list[tuple[EventType, int | None]]]:
        sim = Simulator(Platform.single(4), jobs)
        points = []
        while sim.advance():
            if read:
                first = sim.happened
                assert sim.happened is first
                copy = pickle.loads(pickle.dumps(sim))
                assert [(k, j and j.id) for k, j in copy.happened] == [
                    (k, j and j.id) for k, j in first
                ]
            for job_id in list(sim.queue):
                sim.start(job_id)
            points.append([(k, None if j is None else j.id) for k, j in sim.happened])
        return points

    want = [
        [(EventType.SUBMITTED, 1), (EventType.REJECTED, 2)],
        [(EventType.COMPLETED, 1), (EventType.SUBMITTED, 3)],
        [(EventType.COMPLETED, 3)],
    ]
    assert episode(read=True) == episode(read=False) == want
    sim = Simulator(Platform.single(4), jobs)
    sim.advance()
    kept = sim.happened
    sim.start(1)
    sim.advance()
    assert [(k, j and j.id) for k, j in kept] == want[0] and sim.happened is not kept
