"""The engine's event heap against ``heapq`` on tuples (issue 43, fourth slice).

The engine once queued events as ``(time, prio, seq, job, version)`` tuples with ``heapq``; it
now queues ``Event`` records with ``push_event`` and ``pop_event``, the same algorithm ordered by
``(time, prio, seq)``. Any interleaving of pushes and pops must pop the same events in the same
order, and the heap must stay a heap; the ``Job`` copies of ``JobSpec`` fields that the loop reads
must equal the spec's.
"""

from __future__ import annotations

import heapq
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.sim import JobSpec, Platform, Simulator
from hpcgym.sim.engine import EventHeap, PyEventHeap

# A push (time, prio) or a pop (None); few distinct times and priorities, so ties are common.
_OPS = st.lists(
    st.one_of(
        st.none(),
        st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, 1e9, -0.0]), st.integers(0, 6)),
    ),
    max_size=300,
)


HEAPS = [pytest.param(EventHeap, id="built"), pytest.param(PyEventHeap, id="python")]


def _sim_with(heap_type: Any) -> Simulator:
    """An empty simulator whose event queue is a ``heap_type``."""
    sim = Simulator(Platform.single(1), [])
    sim._heap = heap_type()
    sim._bind_heap()
    return sim


@pytest.mark.parametrize("heap_type", HEAPS)
@settings(max_examples=300, deadline=None)
@given(ops=_OPS)
def test_pops_follow_heapq_on_tuples(heap_type: Any, ops: list[tuple[float, int] | None]) -> None:
    # Events are made by the engine (``_push``: the queue's ``push`` with the next ``seq``).
    sim = _sim_with(heap_type)
    heap = sim._heap
    ref: list[tuple[float, int, int]] = []
    seq = 0
    for op in ops:
        if op is None:
            if ref:
                assert heap.pop().key() == heapq.heappop(ref)
            continue
        time, prio = op
        sim._push(time, prio, None, seq % 3)
        heapq.heappush(ref, (time, prio, seq))
        seq += 1
        slots = heap.events()
        for i in range(1, len(slots)):
            assert not slots[i].key() < slots[(i - 1) >> 1].key()
        top = heap.top()
        assert top is not None and top.key() == min(ref)
    assert sorted(e.key() for e in heap) == sorted(ref)
    while ref:
        assert heap.pop().key() == heapq.heappop(ref)
    assert not heap and len(heap) == 0 and heap.top() is None
    with pytest.raises(IndexError):
        heap.pop()


@pytest.mark.parametrize("heap_type", HEAPS)
@settings(max_examples=200, deadline=None)
@given(ops=_OPS)
def test_pop_top_is_pop_then_top(heap_type: Any, ops: list[tuple[float, int] | None]) -> None:
    # Two queues fed the same pushes: one pops then reads the top, the other calls pop_top.
    # The event loop holds the first event (from ``top``) while pop_top drops it.
    a, b = _sim_with(heap_type), _sim_with(heap_type)
    for op in ops:
        if op is None:
            if a._heap:
                first = b._heap.top()
                popped = a._heap.pop()
                want = a._heap.top()
                got = b._heap.pop_top()
                assert first is not None and first.key() == popped.key()
                assert (want is None) == (got is None)
                assert want is None or (got is not None and want.key() == got.key())
        else:
            for sim in (a, b):
                sim._push(op[0], op[1], None, 0)
        assert [e.key() for e in a._heap.events()] == [e.key() for e in b._heap.events()]
    while b._heap:
        b._heap.pop_top()
    with pytest.raises(IndexError):
        b._heap.pop_top()


@settings(max_examples=200, deadline=None)
@given(ops=_OPS)
def test_built_and_python_heaps_keep_the_same_slots(ops: list[tuple[float, int] | None]) -> None:
    # The same algorithm (heapq's): the same events in the same slots after every operation,
    # so that a pickle from either continues alike.
    sims = [_sim_with(EventHeap), _sim_with(PyEventHeap)]
    for op in ops:
        for sim in sims:
            if op is None:
                if sim._heap:
                    sim._heap.pop()
            else:
                sim._push(op[0], op[1], None, 0)
        built, python = ([e.key() for e in sim._heap.events()] for sim in sims)
        assert built == python


@pytest.mark.parametrize("heap_type", HEAPS)
def test_a_pickled_queue_pops_the_same_events(heap_type: Any) -> None:
    sim = _sim_with(heap_type)
    for i, (time, prio) in enumerate([(5.0, 1), (1.0, 3), (5.0, 0), (2.5, 2), (1.0, 0)]):
        sim._push(time, prio, None, i)
    sim._heap.pop()
    sim_before = pickle.loads(pickle.dumps(sim))
    copy = pickle.loads(pickle.dumps(sim))
    assert type(copy._heap) is heap_type and copy._heap is not sim._heap
    # The copy's bound methods are its own queue's.
    copy._push(0.5, 4, None, 9)
    assert len(copy._heap) == len(sim._heap) + 1
    assert copy._heap.pop().key() == (0.5, 4, 5)
    while sim._heap:
        a, b = sim._heap.pop(), copy._heap.pop()
        assert (a.key(), a.version) == (b.key(), b.version)
    assert not copy._heap
    # Ties in (time, prio) leave in push order, counted on across the copy: pushed after
    # the pickle, these leave after the events of equal time and priority pushed before it.
    copy = pickle.loads(pickle.dumps(sim_before))
    for version in (20, 21):
        copy._push(5.0, 1, None, version)
        copy._push(2.5, 2, None, version)
    keys = []
    while copy._heap:
        keys.append(copy._heap.pop().key())
    assert keys == sorted(keys)


@pytest.mark.skipif(EventHeap is PyEventHeap, reason="the C event queue is not built")
def test_built_queue_refuses_bad_arguments_unchanged() -> None:
    heap = EventHeap()
    with pytest.raises(TypeError, match="three"):
        heap.push(1.0, 0)
    with pytest.raises(TypeError):
        heap.push("soon", 0, None)
    with pytest.raises(TypeError):
        heap.push(1.0, "first", None)
    assert len(heap) == 0
    with pytest.raises(TypeError, match="list"):
        heap.__setstate__("not a list")
    with pytest.raises(TypeError, match="list"):
        heap.__setstate__((0, "not a list"))


def test_event_fields_and_repr() -> None:
    sim = Simulator(Platform.single(1), [])
    sim._push(3.5, 2, None, 4)
    e = sim._heap.top()
    assert e is not None
    assert (e.time, e.prio, e.seq, e.job, e.version) == (3.5, 2, 0, None, 4)
    assert e.key() == (3.5, 2, 0)
    assert repr(e) == "Event(3.5, 2, 0, None, 4)"


def test_job_keeps_the_spec_fields_the_loop_reads() -> None:
    specs = [
        JobSpec(5, 0.0, work=10.0, nodes=3, mem=0.25),
        JobSpec(9, 1.0, work=4.0, nodes=1),
    ]
    sim = Simulator(Platform.single(4), specs)
    for spec in specs:
        job = sim.jobs[spec.id]
        assert (job.id, job._id, job._want, job._mem) == (spec.id, spec.id, spec.nodes, spec.mem)
    # Events are queued with increasing sequence numbers, wake-ups and starts alike.
    assert sim.advance()
    sim.start(5)
    sim.wake_at(2.0)
    assert sorted(e.seq for e in sim._heap) == list(range(len(sim._heap)))
