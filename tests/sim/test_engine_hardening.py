"""Regressions from the fuzzing round (issue 16): the engine always makes progress or stops,
and it refuses odd types instead of converting them silently."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.errors import CommandError, SizeError, SpecError, StalledError
from hpcgym.sim import JobKind, JobSpec, Platform, SimConfig, Simulator
from hpcgym.sim.spec import TIME_HORIZON


def test_submit_past_the_horizon_is_refused_with_the_job_named() -> None:
    with pytest.raises(SpecError, match=r"job 1: submit time .* horizon"):
        JobSpec(1, 1e19, 10.0, 2)


def test_work_and_walltime_past_the_horizon_are_refused() -> None:
    with pytest.raises(SpecError, match=r"job 2: work .* horizon"):
        JobSpec(2, 0.0, 1e307, 1)
    with pytest.raises(SpecError, match=r"job 3: walltime .* horizon"):
        JobSpec(3, 0.0, 1.0, 1, walltime=1e300)
    JobSpec(4, TIME_HORIZON, TIME_HORIZON, 1)


def test_a_tick_too_small_to_move_the_clock_stalls_instead_of_hanging(limit) -> None:
    # 1e15 s is inside the horizon, but 1e15 + 0.01 == 1e15 in float64.
    sim = Simulator(Platform.single(4), [JobSpec(1, 1e15, 10.0, 2)], SimConfig(tick=0.01))
    with limit(10), pytest.raises(StalledError, match="tick"):
        while sim.advance():
            pass


def test_periodic_ticks_near_the_horizon_still_progress(limit) -> None:
    sim = Simulator(Platform.single(4), [JobSpec(1, 2.0**52, 4096.0, 2)], SimConfig(tick=600.0))
    with limit(10):
        while sim.advance():
            for jid in list(sim.queue):
                sim.start(jid)
    assert sim.done and sim.jobs[1].end_time == 2.0**52 + 4096.0


def test_decision_points_that_never_move_the_clock_raise_stalled(limit) -> None:
    sim = Simulator(Platform.single(4), [JobSpec(1, 0.0, 10.0, 2), JobSpec(2, 5.0, 1.0, 1)])
    assert sim.advance()
    with limit(20), pytest.raises(StalledError, match="clock"):
        while sim.advance():  # asks for the same instant again and again, never acting
            sim.wake_at(sim.now)


def test_node_ids_must_be_integers() -> None:
    for nodes in ([3.9, 5.2], [True, False], ["1", "2"], [1.0, 2.0]):
        sim = Simulator(Platform.single(8), [JobSpec(1, 0.0, 10.0, 2)])
        sim.advance()
        with pytest.raises(CommandError, match="job 1: node ids"):
            sim.start(1, nodes=nodes)
        assert sim.jobs[1].state.value == "queued"
    sim.start(1, nodes=np.array([3, 5], dtype=np.int32))
    assert list(sim.jobs[1].nodes) == [3, 5]


def test_cpu_shares_must_be_numbers() -> None:
    for cpu in (["0.5", "0.5"], [True, True], [np.nan, 0.5]):
        sim = Simulator(Platform.single(8), [JobSpec(1, 0.0, 10.0, 2)])
        sim.advance()
        with pytest.raises(CommandError, match="job 1: CPU shares"):
            sim.start(1, nodes=[0, 1], cpu=cpu)


def test_shrink_and_expand_take_whole_sizes() -> None:
    spec = JobSpec(1, 0.0, 10.0, 2, kind=JobKind.MALLEABLE, min_nodes=1, max_nodes=4)
    sim = Simulator(Platform.single(8), [spec])
    sim.advance()
    sim.start(1)
    for verb in (sim.shrink, sim.expand):
        for size in ("2", 1.5, True, None):
            with pytest.raises(SizeError, match="job 1: a size is a whole number"):
                verb(1, size)
    assert sim.jobs[1].size == 2


@pytest.mark.parametrize("name", ["id", "nodes", "min_nodes", "max_nodes", "user", "group"])
def test_numpy_integers_in_a_spec_become_python_ints(name: str) -> None:
    spec = JobSpec(**({"id": 1, "submit": 0.0, "work": 10.0, "nodes": 3} | {name: np.int64(3)}))
    assert type(getattr(spec, name)) is int
    sim = Simulator(Platform.single(8), [spec])
    sim.advance()
    sim.start(spec.id)
    while sim.advance():
        pass
    assert sim.result().summary["completed"] == 1


@pytest.mark.parametrize(
    ("kwargs", "what"),
    [
        ({"nodes": 2.5}, "nodes"),
        ({"nodes": True}, "nodes"),
        ({"nodes": "3"}, "nodes"),
        ({"id": 1.0}, "id"),
        ({"submit": "0"}, "submit"),
        ({"work": True}, "work"),
        ({"walltime": "5"}, "walltime"),
    ],
)
def test_spec_fields_of_the_wrong_type_are_refused(kwargs: dict, what: str) -> None:
    base = {"id": 1, "submit": 0.0, "work": 1.0, "nodes": 1} | kwargs
    with pytest.raises(SpecError, match=what):
        JobSpec(**base)


def test_power_model_and_tick_must_be_finite() -> None:
    with pytest.raises(SpecError):
        SimConfig(busy_power=float("inf"))
    with pytest.raises(SpecError):
        SimConfig(tick=float("inf"))
    with pytest.raises(SpecError):
        SimConfig(bsld_tau=float("nan"))


def test_metrics_that_overflow_are_an_error_not_inf() -> None:
    sim = Simulator(
        Platform.single(2),
        [JobSpec(1, 0.0, TIME_HORIZON, 1)],
        SimConfig(idle_power=1e300, busy_power=1e300),
    )
    sim.advance()
    sim.start(1)
    while sim.advance():
        pass
    with pytest.raises(SpecError, match="energy"):
        sim.result()


@pytest.mark.parametrize(
    "command",
    [
        lambda sim: sim.wake_at("5"),
        lambda sim: sim.wake_at(None),
        lambda sim: sim.set_walltime(1, "5"),
        lambda sim: sim.set_walltime(1, [1]),
        lambda sim: sim.start(1, cluster="0"),
        lambda sim: sim.start(1, cluster=0.5),
        lambda sim: sim.start(1, nodes=[[0, 1], [2]]),
        lambda sim: sim.start(1, nodes=[0, 1], cpu=[[0.5], [0.5, 0.5]]),
        lambda sim: sim.start(1, nodes=[0, 1], cpu=complex(1, 0)),
    ],
)
def test_commands_refuse_odd_argument_types_cleanly(command) -> None:
    """Found by tests/fuzz/test_engine_fuzz.py: these raised TypeError or ValueError."""
    sim = Simulator(Platform.single(8), [JobSpec(1, 0.0, 10.0, 2)])
    sim.advance()
    with pytest.raises(CommandError):
        command(sim)
    assert sim.jobs[1].state.value == "queued"


def test_jobs_given_out_of_order_run_in_submission_order_ties_as_given() -> None:
    """The set-up sorts by submit time, stably, and sums the work the workload needs."""
    specs = [
        JobSpec(5, 20.0, work=3.0, nodes=2),
        JobSpec(3, 0.0, work=4.0, nodes=1),
        JobSpec(9, 20.0, work=1.0, nodes=1),
        JobSpec(1, 0.0, work=2.0, nodes=3),
        JobSpec(7, 5.0, work=6.0, nodes=1, cpu_need=0.5),
    ]
    sim = Simulator(Platform.single(4), specs)
    assert list(sim.jobs) == [3, 1, 7, 5, 9]
    assert sim.now == 0.0 and sim.next_submission == 0.0
    assert sim.total_demand_work == sum(s.work * s.nodes * s.cpu_need for s in specs)
    ordered = Simulator(Platform.single(4), sorted(specs, key=lambda s: s.submit))
    assert list(ordered.jobs) == list(sim.jobs)
    assert ordered.total_demand_work == sim.total_demand_work


def test_an_id_given_twice_out_of_order_is_named() -> None:
    specs = [JobSpec(4, 9.0, work=1.0), JobSpec(2, 1.0, work=1.0), JobSpec(4, 3.0, work=1.0)]
    with pytest.raises(SpecError, match="job id 4 appears twice"):
        Simulator(Platform.single(2), specs)
