"""Reserve mode on random small queues: backfilling never delays the chosen job.

The oracle computes, from scratch, the earliest time at which the running jobs' estimated
ends leave enough nodes for the chosen job (a sweep over those ends, independent of
``hpcgym.baselines.availability.shadow``). It is evaluated on the pass where the job first blocks.

- With estimates that bound run times, the chosen job starts no later than that time.
- With exact estimates it starts exactly then, as it would without backfilling: the first job
  that blocks starts at the same time with and without backfilling.
- Without backfilling, nothing starts while a chosen job waits.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import PriorityReserve
from hpcgym.baselines.priority import REGISTERED_SCORES
from hpcgym.sim import JobSpec, Platform, Simulator

TOL = 1e-9


def oracle_start(sim: Simulator, need: int) -> float:
    """Earliest estimated time ``need`` nodes are free, from the running jobs alone."""
    total = sim.platform.total_nodes
    ends = []
    for j in sim.running.values():
        w = j.spec.walltime
        ends.append((j.start_time + (j.spec.work if w is None else w), j.size))
    for t in sorted({sim.now, *(e for e, _ in ends if e > sim.now)}):
        busy = sum(n for e, n in ends if e > t)
        if total - busy >= need:
            return t
    return math.inf


@st.composite
def worlds(draw: st.DrawFn) -> tuple[int, list[JobSpec], str]:
    nodes = draw(st.integers(2, 8))
    n_jobs = draw(st.integers(2, 12))
    exact = draw(st.booleans())
    jobs = []
    for i in range(n_jobs):
        work = float(draw(st.integers(1, 40)))
        walltime = None if exact else work + draw(st.integers(0, 30))
        jobs.append(
            JobSpec(
                i + 1,
                float(draw(st.integers(0, 60))),
                work=work,
                nodes=draw(st.integers(1, nodes)),
                walltime=walltime,
            )
        )
    return nodes, jobs, draw(st.sampled_from(REGISTERED_SCORES))


def _run(
    nodes: int, jobs: list[JobSpec], score: str, backfill: bool
) -> tuple[Simulator, dict[int, float], list[tuple[int, int, int | None]]]:
    """Run to the end; returns the oracle start of each chosen job that blocked, and the log."""
    sim = Simulator(Platform.single(nodes), jobs)
    sched = PriorityReserve(score=score, backfill=backfill)
    sched.reset()
    promised: dict[int, float] = {}
    log: list[tuple[int, int, int | None]] = []  # (pass, job started, job chosen before)
    k = 0
    while sim.advance():
        before = {jid for jid, j in sim.jobs.items() if not math.isnan(j.start_time)}
        waiting = sched.chosen
        sched.schedule(sim)
        k += 1
        log += [(k, jid, waiting) for jid in sim.running if jid not in before]
        c = sched.chosen
        if c is not None and c not in promised:
            promised[c] = oracle_start(sim, sim.jobs[c].spec.nodes)
            if backfill:
                assert sched.reservation is not None
                assert sched.reservation == (c, promised[c])
    assert sim.done
    return sim, promised, log


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_backfilling_never_delays_the_chosen_job(world: tuple[int, list[JobSpec], str]) -> None:
    nodes, jobs, score = world
    sim, promised, _ = _run(nodes, jobs, score, backfill=True)
    late = {
        jid: (t, sim.jobs[jid].start_time)
        for jid, t in promised.items()
        if sim.jobs[jid].start_time > t + TOL
    }
    assert not late, f"chosen jobs started after their reservation: {late}"
    if all(j.walltime is None for j in jobs):
        early = {jid: t for jid, t in promised.items() if sim.jobs[jid].start_time < t - TOL}
        assert not early, f"exact estimates, yet a chosen job started early: {early}"


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_the_first_blocked_job_starts_as_without_backfilling(
    world: tuple[int, list[JobSpec], str],
) -> None:
    nodes, jobs, score = world
    jobs = [JobSpec(j.id, j.submit, work=j.work, nodes=j.nodes) for j in jobs]  # exact
    with_bf, promised_bf, _ = _run(nodes, jobs, score, backfill=True)
    without, promised, _ = _run(nodes, jobs, score, backfill=False)
    if not promised:
        return
    first = next(iter(promised))
    assert next(iter(promised_bf)) == first
    assert with_bf.jobs[first].start_time == without.jobs[first].start_time == promised[first]


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_without_backfilling_only_the_chosen_job_starts_after_a_wait(
    world: tuple[int, list[JobSpec], str],
) -> None:
    nodes, jobs, score = world
    sim, promised, log = _run(nodes, jobs, score, backfill=False)
    # In a pass that began with a chosen job waiting, the first job started is that one.
    first_start: dict[int, tuple[int, int | None]] = {}
    for k, jid, waiting in log:
        first_start.setdefault(k, (jid, waiting))
    for jid, waiting in first_start.values():
        assert waiting is None or jid == waiting
    # Every start follows the chosen jobs' starts in order: a job that blocked started no
    # later than any job chosen after it.
    order = list(promised)
    starts = [sim.jobs[j].start_time for j in order]
    assert starts == sorted(starts)
