"""Hand-computed schedules of FCFS, SJF, EASY and conservative backfilling."""

from __future__ import annotations

import pytest
from baseline_helpers import rigid, run

from hpcgym.baselines import make, names
from hpcgym.errors import SpecError
from hpcgym.sim import Platform, Simulator

# 4 nodes: J1 holds 2 nodes for 10 s, J2 wants all 4, J3 (1 node, 2 s) arrives at 1.
SMALL = [rigid(1, 0, 10, 2), rigid(2, 0, 5, 4), rigid(3, 1, 2, 1)]

# 6 nodes, where EASY and conservative differ (see test_easy_vs_conservative).
SIX = [
    rigid(1, 0, 10, 4),
    rigid(2, 0, 5, 3),
    rigid(3, 0, 10, 5),
    rigid(4, 1, 30, 2),
    rigid(5, 1, 5, 2),
]


def test_registry_lists_the_classics() -> None:
    assert {"fcfs", "sjf", "easy", "conservative"} <= set(names())
    assert make("easy").name == "easy"
    with pytest.raises(KeyError, match="known: "):
        make("no-such-baseline")


def test_fcfs() -> None:
    _, t = run(make("fcfs"), SMALL, 4)
    assert t == {1: (0, 10), 2: (10, 15), 3: (15, 17)}


def test_sjf_shortest_first_and_blocks() -> None:
    # At 0, J2 (5 s) goes before J1 (10 s); at 1, J3 (2 s) heads the order but nothing is free.
    _, t = run(make("sjf"), SMALL, 4)
    assert t == {2: (0, 5), 1: (5, 15), 3: (5, 7)}


def test_easy_backfills_a_short_job() -> None:
    # J2's shadow time is 10 with no extra node; J3 ends by 3 <= 10, so it backfills.
    easy = make("easy")
    _, t = run(easy, SMALL, 4)
    assert t == {1: (0, 10), 2: (10, 15), 3: (1, 3)}


def test_easy_plans_with_the_walltime() -> None:
    # J3 truly needs 2 s but asks for 20: it would end after the shadow time (10) on a node
    # the head needs, so EASY does not backfill it. Without a walltime it plans with the work.
    jobs = [rigid(1, 0, 10, 2, 10), rigid(2, 0, 5, 4, 5), rigid(3, 1, 2, 1, 20)]
    _, t = run(make("easy"), jobs, 4)
    assert t == {1: (0, 10), 2: (10, 15), 3: (15, 17)}


def test_easy_vs_conservative() -> None:
    # EASY: J2 shadows at 10 with 3 extra nodes; J4 (2 nodes, ends 31) takes 2 of them and
    # delays J3, the second in line, from 15 to 31. J5 backfills at 15 (ends 20 <= 31).
    _, t = run(make("easy"), SIX, 6)
    assert t == {1: (0, 10), 2: (10, 15), 3: (31, 41), 4: (1, 31), 5: (15, 20)}
    # Conservative: J3 holds [15, 25) on 5 nodes, so J4 must wait until 25; J5 fits [1, 6).
    cons = make("conservative")
    _, t = run(cons, SIX, 6)
    assert t == {1: (0, 10), 2: (10, 15), 3: (15, 25), 4: (25, 55), 5: (1, 6)}


def test_easy_reservation_attribute() -> None:
    easy = make("easy")
    seen = []
    run(easy, SMALL, 4, after=lambda sim: seen.append(easy.reservation))  # type: ignore[attr-defined]
    assert seen[0] == (2, 10.0)
    assert seen[-1] is None


def test_conservative_moves_reservations_up_on_early_end() -> None:
    # J1 asks for 20 s but ends at 10: J2 planned at 20 starts at 10, J3 follows it.
    jobs = [rigid(1, 0, 10, 4, 20), rigid(2, 0, 5, 4, 5), rigid(3, 0, 5, 2, 5)]
    cons = make("conservative")
    plans = []
    _, t = run(cons, jobs, 4, after=lambda sim: plans.append(dict(cons.reservations)))  # type: ignore[attr-defined]
    assert plans[0] == {2: 20.0, 3: 25.0}
    assert t == {1: (0, 10), 2: (10, 15), 3: (15, 20)}


@pytest.mark.parametrize("name", ["fcfs", "sjf", "easy", "conservative"])
def test_single_cluster_only(name: str) -> None:
    sim = Simulator(Platform.multi([2, 2]), [rigid(1, 0, 1, 1)])
    with pytest.raises(SpecError, match="single cluster"):
        make(name).run(sim)


@pytest.mark.parametrize("name", ["fcfs", "sjf", "easy", "conservative"])
def test_one_instance_runs_two_episodes(name: str) -> None:
    sched = make(name)
    _, first = run(sched, SIX, 6)
    _, second = run(sched, SIX, 6)
    assert first == second


@pytest.mark.parametrize("name", ["fcfs", "sjf", "easy", "conservative"])
def test_ticks_change_no_start(name: str) -> None:
    # A tick is a decision point where only time moved: with kills at walltime no job can
    # start there that would not start at the next event (EASY once failed on the tick's
    # job-less event).
    import hpcgym.workloads as W
    from hpcgym.sim import SimConfig
    from hpcgym.workloads import transforms

    w = transforms.first(W.load("swf/lublin256-v0"), 400)
    starts = []
    for tick in (None, 600.0):
        sim = Simulator(w.platform, w.jobs, SimConfig(tick=tick))
        scheduler = make(name)
        while sim.advance():
            scheduler.schedule(sim)
        starts.append([sim.jobs[j.id].start_time for j in w.jobs])
    assert starts[0] == starts[1]


class _CountingStarts(Simulator):
    """A ``Simulator`` subclass that overrides ``start`` (as ``ShadowSimulator`` does)."""

    def _init_counts(self) -> None:
        self.started: list[int] = []

    def start(self, job_id, size=None, **kwargs):  # type: ignore[no-untyped-def]
        self.started.append(int(job_id))
        super().start(job_id, size, **kwargs)


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_starts_through_an_overridden_start_the_same_schedule(name: str) -> None:
    # On a plain ``Simulator`` FCFS and EASY start the jobs they hold without ``start``'s
    # lookup; on a subclass they call ``start``, which the subclass sees. Same schedule either
    # way (EASY backfills here: sizes up to 4 of 6 nodes, estimates above run times).
    works = [5.0 + (i * 37) % 23 for i in range(60)]
    jobs = [
        rigid(i, float(i % 7) * 3.0, works[i], 1 + (i * 5) % 4, works[i] + (i % 5) * 4.0)
        for i in range(60)
    ]
    plain = Simulator(Platform.single(6), jobs)
    sub = _CountingStarts(Platform.single(6), jobs)
    sub._init_counts()
    scheduler = make(name)
    for sim in (plain, sub):
        scheduler.reset()
        while sim.advance():
            scheduler.schedule(sim)
    assert sorted(sub.started) == list(range(60))
    assert plain.result().jobs.equals(sub.result().jobs)
    assert plain.result().summary == sub.result().summary
