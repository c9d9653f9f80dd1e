"""Algorithm 1 offline and online: hand-computed schedules, invariants, engine agreement."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile as EP
from hpcgym.baselines.evolving.fit import is_feasible, step_limits
from hpcgym.baselines.evolving.list_scheduling import (
    VARIANTS,
    plan_metrics,
    requested_ep,
    schedule_jobs,
    variant,
)
from hpcgym.baselines.evolving.online import (
    EvolvingListScheduler,
    SortedListScheduler,
    evolving_factories,
)
from hpcgym.errors import SpecError
from hpcgym.sim import JobKind, JobSpec, Platform, Simulator
from hpcgym.workloads.evolving import generate_klein


def evolving(job_id: int, submit: float, *steps: tuple[float, int]) -> JobSpec:
    return JobSpec(job_id, submit, kind=JobKind.EVOLVING, evolution=steps)


# A holds 5 of 10 nodes until 1000; B's last step needs all 10; C (5 nodes) arrives at 50.
WORLD = [
    evolving(1, 0.0, (1000, 5)),
    evolving(2, 0.0, (100, 1), (100, 5), (100, 10)),
    evolving(3, 50.0, (200, 5)),
]
# (start, end, waste) of B and C, by variant: computed by hand.
EXPECTED = {
    "rigid": ((1000, 1300, 300 * 10 - 1600), (50, 250, 0)),
    "noX": ((800, 1100, 0), (50, 250, 0)),
    "2X": ((700, 1100, 500), (50, 250, 0)),
    "2X+c": ((800, 1100, 0), (50, 250, 0)),
    "infX": ((0, 1100, 4000), (1100, 1300, 0)),
    "infX+c": ((800, 1100, 0), (50, 250, 0)),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_offline_hand_computed(name: str) -> None:
    plans = {p.id: p for p in schedule_jobs(WORLD, 10, name)}
    assert (plans[1].start, plans[1].end, plans[1].waste) == (0, 1000, 0)
    b, c = EXPECTED[name]
    assert (plans[2].start, plans[2].end, plans[2].waste) == b
    assert (plans[3].start, plans[3].end, plans[3].waste) == c


@pytest.mark.parametrize("name", list(VARIANTS))
def test_online_runs_the_offline_plan(name: str) -> None:
    sim = Simulator(Platform.single(10), WORLD)
    sched = EvolvingListScheduler(name)
    sched.run(sim)
    table = sim.result().jobs.set_index("id")
    b, c = EXPECTED[name]
    assert (table.loc[2, "start"], table.loc[2, "end"]) == b[:2]
    assert (table.loc[3, "start"], table.loc[3, "end"]) == c[:2]
    # The engine's waste is the plan's, except rigid's held-but-unused nodes (not in the engine).
    assert table.loc[2, "waste"] == (0 if name == "rigid" else b[2])
    assert sched.replans >= 2


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_klein_plans_are_valid_and_engine_agrees(seed: int, name: str) -> None:
    w = generate_klein(seed)
    nnodes = w.platform.total_nodes
    plans = schedule_jobs(w.jobs, nnodes, name)
    var = variant(name)
    epr = EP()
    for p in plans:
        if var.rigid:
            assert p.scheduled.steps == [(p.requested.duration, p.requested.peak())]
        else:
            assert is_feasible(p.requested, p.start, p.scheduled, epr, nnodes, var.limit)
        epr = epr + p.allocated
    assert epr.peak() <= nnodes
    sim = Simulator(w.platform, w.jobs)
    EvolvingListScheduler(name).run(sim)
    result = sim.result()
    table = result.jobs.set_index("id")
    for p in plans:
        assert table.loc[p.id, "start"] == pytest.approx(p.start)
        assert table.loc[p.id, "end"] == pytest.approx(p.end)
        if not var.rigid:
            assert table.loc[p.id, "waste"] == pytest.approx(p.waste)
    m = plan_metrics(plans, nnodes)
    assert result.summary["makespan"] == pytest.approx(m["makespan"])
    assert result.summary["effective_utilization"] == pytest.approx(m["effective_utilization"])
    if not var.rigid:
        assert result.summary["utilization"] == pytest.approx(m["utilization"])


apps_st = st.lists(
    st.tuples(
        st.integers(0, 300).map(float),
        st.lists(
            st.tuples(st.integers(1, 200).map(float), st.integers(1, 10)), min_size=1, max_size=4
        ),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(apps_st, st.sampled_from(list(VARIANTS)))
def test_random_worlds_online_equals_offline(apps: list, name: str) -> None:
    jobs = [evolving(i + 1, submit, *steps) for i, (submit, steps) in enumerate(apps)]
    plans = schedule_jobs(jobs, 10, name)
    var = variant(name)
    epr = EP()
    for p in plans:
        limits = step_limits(p.requested, math.inf if var.rigid else var.limit)
        if not var.rigid:
            assert (p.scheduled.durations <= p.requested.durations * limits + 1e-9).all()
            assert is_feasible(p.requested, p.start, p.scheduled, epr, 10, var.limit)
        assert p.start >= p.submit
        epr = epr + p.allocated
    assert epr.peak() <= 10
    sim = Simulator(Platform.single(10), jobs)
    EvolvingListScheduler(name).run(sim)
    for p in plans:
        job = sim.jobs[p.id]
        assert job.start_time == pytest.approx(p.start)
        assert job.end_time == pytest.approx(p.end)


def test_klein_cases_complete_for_each_variant() -> None:
    w = generate_klein(3)
    for name in ("noX", "2X", "infX+c"):
        sim = Simulator(w.platform, w.jobs)
        EvolvingListScheduler(name).run(sim)
        assert sim.counts["completed"] == len(w.jobs)


def test_factories_and_errors() -> None:
    facts = evolving_factories()
    sorts = ["evolving-infX-longest", "evolving-infX-widest"]
    assert sorted(facts) == sorted([*(f"evolving-{v}" for v in VARIANTS), *sorts])
    assert facts["evolving-infX-widest"]().sort == "widest"
    with pytest.raises(SpecError, match="sort is one of"):
        SortedListScheduler("infX", "shortest")
    assert facts["evolving-2X+c"]().variant.name == "2X+c"
    with pytest.raises(SpecError):
        variant("3X")
    with pytest.raises(SpecError):
        requested_ep(JobSpec(1, 0.0, work=5.0, nodes=1))
