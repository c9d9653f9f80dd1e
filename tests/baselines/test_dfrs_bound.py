"""The Theorem 1 lower bound: exact cases, LP/flow agreement, and never above an achieved max."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.baselines import FCFS
from hpcgym.baselines.dfrs import DFRSScheduler, degradation, dfrs_setup, max_stretch_bound
from hpcgym.baselines.dfrs.bound import feasible, theorem1_feasible_lp
from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator


def job(jid: int, submit: float, work: float, tasks: int = 1, cpu: float = 1.0, mem: float = 0.1):
    return JobSpec(jid, submit, work=work, nodes=tasks, cpu_need=cpu, mem=mem)


def test_single_job_has_bound_one() -> None:
    assert max_stretch_bound([job(1, 0, 100)], 1) == 1.0


def test_two_equal_jobs_on_one_node() -> None:
    # Both released at 0 with 100 s of work on one node: the best max stretch is 2.
    b = max_stretch_bound([job(1, 0, 100), job(2, 0, 100)], 1, rel_tol=1e-6)
    assert b == pytest.approx(2.0, rel=1e-5) and b <= 2.0


def test_low_cpu_need_jobs_share_a_node() -> None:
    # Four quarter-core jobs fit one node at full speed: no stretch at all.
    jobs = [job(i, 0, 100, cpu=0.25) for i in range(4)]
    assert max_stretch_bound(jobs, 1) == 1.0
    # A fifth one pushes the total CPU work to 125 node-seconds in a window of at most 100 S.
    jobs.append(job(9, 0, 100, cpu=0.25))
    assert max_stretch_bound(jobs, 1, rel_tol=1e-6) == pytest.approx(1.25, rel=1e-5)


def test_bounded_stretch_threshold() -> None:
    # A 1 s job behind a 100 s job on one node: bounded stretch uses max(work, 10 s).
    b = max_stretch_bound([job(1, 0, 100), job(2, 0, 1)], 1, rel_tol=1e-6)
    # Run the short job first: it ends at 1 (bounded 1), the long one at 101 (1.01).
    assert b == pytest.approx(1.01, rel=1e-4)


def test_degradation() -> None:
    assert degradation(30.0, 3.0) == 10.0


jobs_strategy = st.lists(
    st.tuples(
        st.integers(0, 2000),
        st.integers(1, 3000),
        st.integers(1, 3),
        st.sampled_from([0.25, 0.5, 1.0]),
        st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.6]),
    ),
    min_size=2,
    max_size=7,
)


def _specs(rows: list[tuple[int, int, int, float, float]]) -> list[JobSpec]:
    return [job(i + 1, float(s), float(w), t, c, m) for i, (s, w, t, c, m) in enumerate(rows)]


@settings(max_examples=30, deadline=None)
@given(jobs_strategy, st.floats(1.0, 8.0))
def test_flow_check_agrees_with_the_literal_lp(rows, stretch) -> None:
    specs = _specs(rows)
    assert feasible(specs, 2, stretch) == theorem1_feasible_lp(specs, 2, stretch) or (
        # The flow rounds capacities up: it may accept an S the LP misses by a hair.
        feasible(specs, 2, stretch) and theorem1_feasible_lp(specs, 2, stretch * 1.001)
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs_strategy)
def test_bound_never_above_an_achieved_max_stretch(rows) -> None:
    specs = _specs(rows)
    nodes = 3
    bound = max_stretch_bound(specs, nodes)
    assert bound >= 1.0
    for name in ("GreedyP */opt=min", "GreedyPM */per/opt=min/minvt=600", "MCB8/per/opt=avg"):
        js, config = dfrs_setup(specs, name)
        sim = Simulator(Platform.single(nodes, cores=4), js, config)
        DFRSScheduler(name).run(sim)
        achieved = sim.result().summary["max_bounded_stretch"]
        assert bound <= achieved * (1 + 1e-9), name
    sim = Simulator(Platform.single(nodes), specs, SimConfig())
    FCFS().run(sim)
    assert bound <= sim.result().summary["max_bounded_stretch"] * (1 + 1e-9)
