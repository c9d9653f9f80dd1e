"""The engine's event heap against ``heapq`` on tuples (issue 43, fourth slice).

The engine once queued events as ``(time, prio, seq, job, version)`` tuples with ``heapq``; it
now queues ``Event`` records with ``push_event`` and ``pop_event``, the same algorithm ordered by
``(time, prio, seq)``. Any interleaving of pushes and pops must pop the same events in the same
order, and the heap must stay a heap; the ``Job`` copies of ``JobSpec`` fields that the loop reads
must equal the spec's.
"""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.sim import JobSpec, Platform, Simulator
from hpcgym.sim.engine import pop_event

# A push (time, prio) or a pop (None); few distinct times and priorities, so ties are common.
_OPS = st.lists(
    st.one_of(
        st.none(),
        st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.0, 1e9, -0.0]), st.integers(0, 6)),
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_pops_follow_heapq_on_tuples(ops: list[tuple[float, int] | None]) -> None:
    # Events are made by the engine (``_push``: ``push_event`` with the next ``seq``).
    sim = Simulator(Platform.single(1), [])
    heap = sim._heap
    ref: list[tuple[float, int, int]] = []
    seq = 0
    for op in ops:
        if op is None:
            if ref:
                assert pop_event(heap).key() == heapq.heappop(ref)
            continue
        time, prio = op
        sim._push(time, prio, None, seq % 3)
        heapq.heappush(ref, (time, prio, seq))
        seq += 1
        for i in range(1, len(heap)):
            assert not heap[i].key() < heap[(i - 1) >> 1].key()
    assert sorted(e.key() for e in heap) == sorted(ref)
    while ref:
        assert pop_event(heap).key() == heapq.heappop(ref)
    assert not heap


def test_event_fields_and_repr() -> None:
    sim = Simulator(Platform.single(1), [])
    sim._push(3.5, 2, None, 4)
    e = sim._heap[0]
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
