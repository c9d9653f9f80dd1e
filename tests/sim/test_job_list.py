"""``JobList``, the engine's queued, holding and suspended jobs, against a ``dict`` model.

``sim.queue``, ``sim.running`` and ``sim.suspended`` were read-only views of dicts; they are now
views of linked lists through the jobs (issue 43). Whatever a scheduler can read must answer as
the dict did: same ids in the same order, same lookups, same refusals.
"""

from __future__ import annotations

import operator
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.sim import JobSpec, Platform, Simulator
from hpcgym.sim.job import Job
from hpcgym.sim.joblist import NO_LIST, JobList, job_lists

N_JOBS = 8


def _lists() -> tuple[list[Job], list[JobList]]:
    """Jobs with ids 10, 20, ... in submission order, and three empty lists over them.

    The jobs of a simulator never advanced (``Job`` is built by the simulator, which numbers
    them); the lists are new ones over them.
    """
    specs = [JobSpec(id=10 * (i + 1), submit=float(i), work=5.0, nodes=1) for i in range(N_JOBS)]
    sim = Simulator(Platform.single(1), specs)
    order = sim._order
    assert [job._i for job in order] == list(range(N_JOBS))
    return order, list(job_lists(order, sim._jobs))


def _same_as(jl: JobList, model: dict[int, Job], order: list[Job]) -> None:
    """Every read of ``jl`` answers as the dict ``model`` does."""
    assert list(jl) == list(model)
    assert jl.keys() == list(model.keys())
    assert jl.values() == list(model.values())
    assert jl.items() == list(model.items())
    assert len(jl) == len(model)
    assert bool(jl) == bool(model)
    assert jl == model
    assert operator.ne(jl, model) is False
    assert dict(jl) == model
    for job in order:
        jid = job.id
        assert (jid in jl) == (jid in model)
        assert jl.get(jid) is model.get(jid)
        assert jl.get(jid, "none") is model.get(jid, "none")  # type: ignore[comparison-overlap]
        if jid in model:
            assert jl[jid] is model[jid]
        else:
            with pytest.raises(KeyError):
                jl[jid]
    assert 5 not in jl and "x" not in jl and jl.get(5) is None


# A move: job index, then the list it goes to (0: out of every list).
_MOVES = st.lists(st.tuples(st.integers(0, N_JOBS - 1), st.integers(0, 3)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(moves=_MOVES)
def test_lists_answer_as_dicts_through_any_moves(moves: list[tuple[int, int]]) -> None:
    order, lists = _lists()
    models: list[dict[int, Job]] = [{}, {}, {}]
    for i, to in moves:
        job = order[i]
        if job._list != NO_LIST:
            lists[job._list - 1]._remove(job)
        for model in models:
            model.pop(job.id, None)
        if to:
            lists[to - 1]._add(job)
            models[to - 1][job.id] = job
        for jl, model in zip(lists, models, strict=True):
            _same_as(jl, model, order)
        for job in order:
            if job._list == NO_LIST:
                assert (job._prev, job._next) == (-1, -1)


def test_iterating_a_list_while_it_changes_raises() -> None:
    order, (queue, running, _) = _lists()
    for job in order[:4]:
        queue._add(job)
    seen = []
    with pytest.raises(RuntimeError, match="queued jobs changed during iteration"):
        for jid in queue:
            seen.append(jid)
            queue._remove(order[0])
            running._add(order[0])
    assert seen == [10]
    # The lists made by keys(), values() and items() are the caller's: changing the list
    # after does not touch them.
    values = queue.values()
    queue._remove(order[1])
    assert values == order[1:4] and queue.values() == order[2:4]


def test_a_list_is_not_hashable_and_compares_by_content() -> None:
    _, (a, b, _) = _lists()
    with pytest.raises(TypeError):
        hash(a)
    assert a == b == {} and a != {10: None}
    assert a.__eq__(3) is NotImplemented


def test_a_pickled_list_keeps_its_order_and_its_jobs() -> None:
    order, (queue, running, _) = _lists()
    for i in (3, 1, 6, 0):
        queue._add(order[i])
    running._add(order[2])
    queue._remove(order[1])
    order2, queue2, running2 = pickle.loads(pickle.dumps((order, queue, running)))
    assert queue2.keys() == [40, 70, 10] and running2.keys() == [30]
    # The copy's jobs are the copied order's, and it keeps changing as the original would.
    assert all(
        a is b for a, b in zip(queue2.values(), (order2[3], order2[6], order2[0]), strict=True)
    )
    queue2._add(order2[5])
    queue2._remove(order2[6])
    assert queue2.keys() == [40, 10, 60] and queue.keys() == [40, 70, 10]


def _sim() -> Simulator:
    """Four one-node jobs at t=0 on two nodes, then two more at t=10."""
    jobs = [JobSpec(id=i, submit=0.0, work=100.0, nodes=1) for i in (5, 3, 9, 1)]
    jobs += [JobSpec(id=i, submit=10.0, work=100.0, nodes=1) for i in (7, 2)]
    return Simulator(Platform.single(2), jobs)


def test_the_simulator_views_follow_submission_start_suspension_and_ends() -> None:
    sim = _sim()
    assert sim.advance()
    assert list(sim.queue) == [5, 3, 9, 1] and not sim.running and not sim.suspended
    sim.start(9)
    sim.start(5)
    assert list(sim.queue) == [3, 1] and list(sim.running) == [9, 5]
    sim.suspend(9)
    assert list(sim.running) == [5] and list(sim.suspended) == [9]
    sim.start(1)
    assert sim.advance() and sim.now == 10.0
    assert list(sim.queue) == [3, 7, 2] and list(sim.running) == [5, 1]
    # Resumed jobs go to the end of the running jobs, as a dict insertion did.
    sim.suspend(5)
    sim.resume(5)
    assert list(sim.running) == [1, 5]
    assert sim.counts["queued"] == 3 and sim.counts["running"] == 2
    assert sim.counts["suspended"] == 1 and list(sim.suspended) == [9]
    assert sim.queued_jobs() == [sim.jobs[3], sim.jobs[7], sim.jobs[2]]
    with pytest.raises(TypeError):
        sim.queue[4] = sim.jobs[3]  # type: ignore[index]
    with pytest.raises(AttributeError):
        sim.queue._add(sim.jobs[3])  # type: ignore[attr-defined]


def test_a_pickled_simulator_keeps_its_lists() -> None:
    sim = _sim()
    sim.advance()
    sim.start(3)
    sim.start(1)
    copy = pickle.loads(pickle.dumps(sim))
    for view in ("queue", "running", "suspended"):
        assert list(getattr(copy, view)) == list(getattr(sim, view))
    # The copy's views read the copy's jobs, and the copy runs on alone.
    assert copy.queue[5] is copy.jobs[5] is not sim.jobs[5]
    copy.suspend(3)
    assert list(copy.running) == [1] and list(sim.running) == [3, 1]
    assert list(copy.suspended) == [3] and not sim.suspended
