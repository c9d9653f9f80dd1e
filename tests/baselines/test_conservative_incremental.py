"""``ConservativeBackfill`` (kept profile, partial re-placement) against ``ConservativeReplan``.

``ConservativeReplan`` is the definition: at every decision point it rebuilds the profile and
re-places every queued job in the order of its previous reservations. The incremental
scheduler must give the same reservations after every pass and the same start times, job for
job: on hypothesis-generated small queues (exact and user estimates, kills at walltime or
overruns, ticks) and on windows of bundled traces, with arrivals compressed 4x so the queue
grows long.
"""

from __future__ import annotations

import functools

import pytest
from conservative_replan import ConservativeReplan
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcgym.workloads as W
from hpcgym.baselines import make
from hpcgym.baselines.classic import ConservativeBackfill
from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator
from hpcgym.workloads import transforms


def lockstep(platform: Platform, jobs: list[JobSpec], config: SimConfig | None = None) -> int:
    """Run both schedulers side by side; assert equal reservations at every decision point.

    Returns:
        How many passes the incremental scheduler did not re-plan from scratch.
    """
    config = config or SimConfig()
    sims = [Simulator(platform, jobs, config), Simulator(platform, jobs, config)]
    inc, ref = ConservativeBackfill(), ConservativeReplan()
    passes = 0
    while True:
        more = [s.advance() for s in sims]
        assert more[0] == more[1]
        if not more[0]:
            break
        assert sims[0].now == sims[1].now
        inc.schedule(sims[0])
        ref.schedule(sims[1])
        passes += 1
        assert inc.reservations == ref.reservations, f"reservations differ at t={sims[0].now}"
        assert list(sims[0].running) == list(sims[1].running)
    starts = [[s.jobs[j.id].start_time for j in jobs] for s in sims]
    assert starts[0] == starts[1]
    return passes - inc.replans


job_st = st.tuples(
    st.integers(0, 40),  # submit
    st.integers(1, 30),  # work
    st.integers(1, 8),  # nodes
    st.sampled_from([None, 0, 1, 5, 20, -3]),  # walltime: none, or work + this
)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.lists(job_st, min_size=1, max_size=25),
    kill=st.booleans(),
    tick=st.sampled_from([None, 7.0]),
)
def test_same_schedule_as_replanning_on_random_queues(raw, kill, tick) -> None:  # type: ignore[no-untyped-def]
    jobs = [
        JobSpec(
            id=i,
            submit=float(s),
            work=float(w),
            nodes=n,
            walltime=None if d is None else float(max(1, w + d)),
        )
        for i, (s, w, n, d) in enumerate(raw)
    ]
    lockstep(Platform.single(8), jobs, SimConfig(kill_on_walltime=kill, tick=tick))


@functools.cache
def window(name: str, estimates: str, offset: int, n: int, compress: float) -> W.Workload:
    w = W.load(name, estimates=estimates)
    w = transforms.first(w, offset + n)
    w = transforms.window(w, w.jobs[offset].submit, w.jobs[-1].submit + 1)
    return transforms.scale_arrivals(w, compress) if compress != 1 else w


TRACES = [
    ("swf/lublin256-v0", "exact", 0, 600, 0.25),
    ("swf/lublin256-v0", "user", 4000, 400, 0.25),
    ("swf/sdsc-sp2-v0", "user", 5000, 500, 0.25),
    ("swf/kth-sp2-v0", "user", 2000, 500, 1.0),
    ("swf/kth-sp2-v0", "user", 2000, 400, 0.25),
]


@pytest.mark.parametrize("case", TRACES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-x{1 / c[4]:g}")
def test_same_schedule_as_replanning_on_traces(case: tuple[str, str, int, int, float]) -> None:
    w = window(*case)
    kept = lockstep(w.platform, list(w.jobs))
    # The point of the incremental scheduler: most passes do not re-plan the whole queue.
    assert kept > 0


def test_exact_estimates_never_replan_after_the_first_pass() -> None:
    w = window("swf/lublin256-v0", "exact", 0, 600, 0.25)
    sim = Simulator(w.platform, w.jobs)
    cons = make("conservative")
    cons.run(sim)
    assert cons.replans == 1  # type: ignore[attr-defined]


def test_a_start_by_someone_else_makes_it_replan() -> None:
    # 4 nodes. Job 0 (2 nodes) starts at 0; job 1 (4 nodes) is reserved at 10; job 2 (1 node,
    # 20 s) would delay job 1, so it is reserved at 20. Then someone else starts job 2 now.
    jobs = [
        JobSpec(id=0, submit=0.0, work=10.0, nodes=2),
        JobSpec(id=1, submit=0.0, work=10.0, nodes=4),
        JobSpec(id=2, submit=0.0, work=20.0, nodes=1),
    ]
    sims = [Simulator(Platform.single(4), jobs) for _ in range(2)]
    inc, ref = ConservativeBackfill(), ConservativeReplan()
    for s, sched in zip(sims, (inc, ref), strict=True):
        s.advance()
        sched.schedule(s)
        assert sched.reservations == {1: 10.0, 2: 20.0}
        s.start(2)
    replans = inc.replans
    for s, sched in zip(sims, (inc, ref), strict=True):
        s.advance()  # job 0 ends at 10
        sched.schedule(s)
    assert inc.replans == replans + 1
    assert inc.reservations == ref.reservations == {1: 20.0}
