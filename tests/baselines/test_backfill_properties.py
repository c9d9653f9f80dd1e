"""EASY and conservative backfilling keep their promises on real traces.

With estimates that bound run times (exact ones, or the users' with kill at walltime), EASY
never starts the head job later than the reservation it got when it first became the blocked
head, and conservative backfilling never starts any job later than the first reservation it
got. Every job ends, whatever the scheduler.
"""

from __future__ import annotations

import functools

import pytest

import hpcgym.workloads as W
from hpcgym.baselines import estimated_end, make, runtime_estimate, shadow
from hpcgym.sim import Simulator
from hpcgym.workloads import transforms

N_JOBS = 300
TOL = 1e-6


@functools.cache
def trace(name: str, estimates: str, offset: int) -> W.Workload:
    w = W.load(name, estimates=estimates)
    w = transforms.first(w, offset + N_JOBS)
    w = transforms.window(w, w.jobs[offset].submit, w.jobs[-1].submit + 1)
    return w


CASES = [
    ("swf/kth-sp2-v0", "exact", 0),
    ("swf/kth-sp2-v0", "user", 2000),
    ("swf/sdsc-sp2-v0", "exact", 5000),
    ("swf/lublin256-v0", "exact", 0),
    ("swf/lublin256-v0", "user", 4000),
]


def _run_recording(name: str, w: W.Workload) -> tuple[Simulator, dict[int, float]]:
    sched = make(name)
    sim = Simulator(w.platform, w.jobs)
    first: dict[int, float] = {}
    sched.reset()
    while sim.advance():
        sched.schedule(sim)
        if name == "easy":
            res = sched.reservation  # type: ignore[attr-defined]
            if res is not None:
                first.setdefault(res[0], res[1])
        else:
            for jid, t in sched.reservations.items():  # type: ignore[attr-defined]
                first.setdefault(jid, t)
    return sim, first


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
@pytest.mark.parametrize("name", ["easy", "conservative"])
def test_reservations_are_never_delayed(name: str, case: tuple[str, str, int]) -> None:
    w = trace(*case)
    assert len(w.jobs) == N_JOBS
    sim, first = _run_recording(name, w)
    assert sim.done
    assert first, "the window never blocks a job; pick a busier one"
    late = {
        jid: (t, sim.jobs[jid].start_time)
        for jid, t in first.items()
        if sim.jobs[jid].start_time > t + TOL
    }
    assert not late, f"{name} started jobs after their reservation: {late}"


@pytest.mark.parametrize("case", CASES[:2], ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("name", ["fcfs", "sjf", "easy", "conservative"])
def test_every_job_ends(name: str, case: tuple[str, str, int]) -> None:
    w = trace(*case)
    sim = Simulator(w.platform, w.jobs)
    make(name).run(sim)
    c = sim.counts
    assert c["completed"] + c["killed"] + c["rejected"] == c["total"] == N_JOBS
    table = sim.result().jobs
    started = table[table["start"].notna()]
    # Rigid semantics: every job ran at its requested size.
    assert (started["max_nodes_held"] == started["requested_nodes"]).all()


def test_backfilling_beats_fcfs_on_a_busy_window() -> None:
    w = trace("swf/lublin256-v0", "user", 4000)
    waits = {}
    for name in ("fcfs", "easy", "conservative"):
        sim = Simulator(w.platform, w.jobs)
        make(name).run(sim)
        waits[name] = sim.result().summary["mean_wait"]
    assert waits["easy"] < waits["fcfs"]
    assert waits["conservative"] < waits["fcfs"]


class PlainEasy:
    """EASY written the obvious way, to check the optimized one against."""

    def schedule(self, sim: Simulator) -> None:
        now = sim.now
        free = sim.free_nodes()
        queue = list(sim.queue.values())
        while queue and queue[0].spec.nodes <= free:
            sim.start(queue[0].id)
            free -= queue.pop(0).spec.nodes
        if not queue:
            return
        ends = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
        t_shadow, extra = shadow(now, free, queue[0].spec.nodes, ends)
        for job in queue[1:]:
            n = job.spec.nodes
            if n > free:
                continue
            if now + runtime_estimate(job.spec) > t_shadow:
                if n > extra:
                    continue
                extra -= n
            sim.start(job.id)
            free -= n


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_easy_equals_the_plain_algorithm(case: tuple[str, str, int]) -> None:
    w = trace(*case)
    starts = []
    for sched in (make("easy"), PlainEasy()):
        sim = Simulator(w.platform, w.jobs)
        sim.run(sched)
        starts.append({jid: j.start_time for jid, j in sim.jobs.items()})
    assert starts[0] == starts[1]
