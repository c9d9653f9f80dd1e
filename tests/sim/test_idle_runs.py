"""The idle-node runs against the explicit per-node arrays they replaced (issue 20, item 1).

Whole-node starts once took the lowest idle ids by scanning ``cpu_used == 0.0``; they now take
them from ``NodePool.idle`` (runs of idle ids). ``ScanRuns`` below is the old scan, kept as the
oracle: it answers every question of ``IdleRuns`` from the node arrays and ignores updates. The
same random episode on a wide machine (random commands, legal and illegal) must give the same
node ids at every decision point and the same per-job table with either; and the runs must
always be exactly the idle nodes (``tests/conftest.py::check_invariants``).
"""

from __future__ import annotations

import contextlib
import pickle
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcgym.sim.nodes as nodes_module
from hpcgym.errors import CommandError
from hpcgym.sim import JobKind, JobSpec, JobState, Platform, Simulator, SizeRule
from hpcgym.sim.nodes import (
    SLICE_RUN,
    IdleRuns,
    NodePool,
    PyIdleRuns,
    first_ids,
    idle_ids,
    ids_of_runs,
    pack_runs,
    runs_of_ids,
    set_runs,
    unpack_runs,
)

IMPLEMENTATIONS = [pytest.param(IdleRuns, id="built"), pytest.param(PyIdleRuns, id="python")]
"""The idle runs the engine uses (the C ones when built) and their Python twin."""


class ScanRuns(IdleRuns):  # type: ignore[misc,valid-type]
    """The old placement: every answer scans the cluster's CPU array; updates are ignored."""

    def __init__(self, pool: NodePool, lo: int, hi: int) -> None:
        super().__init__(lo, hi)
        self.pool, self.span = pool, (lo, hi)

    def _scan(self, k: int) -> np.ndarray:
        lo, hi = self.span
        self.pool.sync()  # the lazy whole-node holdings written, as any reader of the array does
        return (self.pool.cpu_used[lo:hi] == 0.0).nonzero()[0][:k] + lo

    def take_front(self, k: int) -> int:
        return -1

    def take_runs(self, k: int) -> list[int]:
        ids = self._scan(k).tolist()
        runs: list[int] = []
        for i in ids:  # the scanned ids as runs, one id at a time
            if runs and runs[-1] == i:
                runs[-1] = i + 1
            else:
                runs += [i, i + 1]
        assert ids_of_runs(runs).tolist() == ids
        return runs

    def take_packed(self, k: int) -> bytes:
        return pack_runs(self.take_runs(k))

    def first_runs(self, k: int) -> list[int]:
        return runs_of_ids(self._scan(k))

    def give(self, a: int, b: int) -> None:
        pass

    def give_runs(self, runs: list[int]) -> int:
        return sum(runs[i + 1] - runs[i] for i in range(0, len(runs), 2))

    def give_packed(self, runs: bytes) -> int:
        return self.give_runs(unpack_runs(runs))

    def occupy(self, a: int, b: int) -> None:
        pass

    def give_ids(self, ids: np.ndarray) -> None:
        pass

    def occupy_ids(self, ids: np.ndarray) -> None:
        pass


def drain(sim: Any) -> None:
    """Let the episode end: with nothing running, resume and start what nothing else will."""
    if not sim.running:
        for job in list(sim.suspended.values()):
            with contextlib.suppress(CommandError):
                sim.resume(job.id)
        for job in list(sim.queue.values()):
            if job.state is JobState.QUEUED:
                with contextlib.suppress(CommandError):
                    sim.start(job.id, job.spec.min_nodes)


def wide_world(rng: random.Random) -> tuple[Platform, list[JobSpec]]:
    widths = [rng.randint(200, 3000) for _ in range(rng.randint(1, 3))]
    jobs = []
    for jid in range(1, rng.randint(5, 40) + 1):
        kind = rng.choice([JobKind.RIGID, JobKind.RIGID, JobKind.MOLDABLE, JobKind.MALLEABLE])
        top = min(widths)
        size = rng.choice([1, 2, rng.randint(1, 64), rng.randint(1, top)])
        lo = size if kind is JobKind.RIGID else rng.randint(1, size)
        hi = size if kind is JobKind.RIGID else rng.randint(size, top)
        jobs.append(
            JobSpec(
                jid,
                float(rng.randint(0, 30)),
                work=float(rng.randint(1, 40)),
                nodes=size,
                kind=kind,
                min_nodes=lo,
                max_nodes=hi,
                size_rule=SizeRule.ANY,
                cpu_need=rng.choice([1.0, 1.0, 1.0, 0.5]),
                mem=rng.choice([0.0, 0.0, 0.0, 0.5]),
                walltime=rng.choice([None, float(rng.randint(5, 50))]),
            )
        )
    return Platform.multi(widths), jobs


def some_idle(rng: random.Random, sim: Simulator, cluster: int, k: int) -> list[int]:
    lo = sim.platform.offsets[cluster]
    idle = np.flatnonzero(sim.node_idle[lo : lo + sim.platform.clusters[cluster].nodes]) + lo
    return sorted(rng.sample(idle.tolist(), k)) if idle.size >= k else []


def act(rng: random.Random, sim: Simulator) -> None:
    """One random command; refused ones are fine (they must change nothing)."""
    queued, running = list(sim.queue.values()), list(sim.running.values())
    suspended = list(sim.suspended.values())
    roll = rng.random()
    try:
        if queued and roll < 0.45:
            job = rng.choice(queued)
            how = rng.random()
            if how < 0.6:
                sim.start(job.id)
            elif how < 0.8:
                sim.start(job.id, cluster=rng.randrange(len(sim.platform.clusters)))
            else:
                c = rng.randrange(len(sim.platform.clusters))
                ids = some_idle(rng, sim, c, job.spec.nodes)
                if ids:
                    rng.shuffle(ids)
                    sim.start(job.id, nodes=ids)
        elif running and roll < 0.65:
            job = rng.choice(running)
            if job.spec.kind is JobKind.MALLEABLE:
                size = rng.randint(job.spec.min_nodes, job.spec.max_nodes)
                if size < job.size and rng.random() < 0.5:
                    sim.shrink(
                        job.id, size, release=rng.sample(job.nodes.tolist(), job.size - size)
                    )
                else:
                    sim.resize(job.id, size)
        elif running and roll < 0.75:
            sim.suspend(rng.choice(running).id)
        elif suspended and roll < 0.85:
            sim.resume(rng.choice(suspended).id)
        elif running and roll < 0.92:
            job = rng.choice(running)
            ids = some_idle(rng, sim, job.cluster, job.size)
            if ids:
                sim.migrate(job.id, ids)
        elif queued:
            sim.start(queued[0].id)
    except CommandError:
        pass


def episode(seed: int, oracle: bool, check: Any = None) -> tuple[list[Any], Any]:
    rng = random.Random(seed)
    platform, jobs = wide_world(rng)
    sim = Simulator(platform, jobs)
    if oracle:
        pool = sim.pool
        pool.idle = [ScanRuns(pool, lo, hi) for lo, hi in pool.bounds]
    seen = []
    while sim.advance():
        for _ in range(rng.randint(0, 4)):
            act(rng, sim)
            if check is not None:
                check(sim)
        drain(sim)
        seen.append([(j.id, j.nodes.tolist()) for j in sim.running.values()])
    return seen, sim.result().jobs


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_runs_place_as_the_per_node_scan_did(state: Any, seed: int) -> None:
    got, table = episode(seed, oracle=False, check=state.check)
    want, want_table = episode(seed, oracle=True)
    assert got == want
    assert table.equals(want_table)


@pytest.mark.parametrize("kind", IMPLEMENTATIONS)
@settings(max_examples=200, deadline=None)
@given(ids=st.sets(st.integers(0, 300), max_size=120), n=st.integers(1, 40))
def test_runs_take_give_and_occupy_like_a_set(kind: Any, ids: set[int], n: int) -> None:
    runs = kind(0, 301)
    busy = np.array(sorted(ids), dtype=np.int64)
    runs.occupy_ids(busy)
    idle = sorted(set(range(301)) - ids)
    assert idle_ids(runs).tolist() == idle
    assert first_ids(runs, n).tolist() == idle[:n]
    if len(idle) >= n:
        front = runs.take_front(n)
        taken = np.arange(front, front + n) if front >= 0 else ids_of_runs(runs.take_runs(n))
        assert taken.tolist() == idle[:n]
        assert idle_ids(runs).tolist() == idle[n:]
        runs.give_ids(np.array(idle[:n][::-1], dtype=np.int64))
    else:
        with pytest.raises(ValueError, match=f"{n} idle ids wanted, {len(idle)} idle"):
            runs.take_runs(n)
        assert idle_ids(runs).tolist() == idle  # refused: nothing taken
    runs.give_ids(busy)
    assert runs.lo == [0] and runs.hi == [301]


OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "take_front",
                "take_runs",
                "take_packed",
                "first_runs",
                "give",
                "occupy",
                "pickle",
                "ids",
            ]
        ),
        st.integers(0, 600),
        st.integers(1, 80),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 600), ops=OPS)
def test_built_runs_answer_as_the_python_ones(width: int, ops: list[tuple[str, int, int]]) -> None:
    """Any sequence of takes, gives (of busy runs), occupations (of idle ones), copies and
    refused takes: the built ``IdleRuns`` and ``PyIdleRuns`` return and hold the same runs."""
    import pickle

    built, python = IdleRuns(0, width), PyIdleRuns(0, width)
    held: list[tuple[int, int]] = []  # busy runs a job could give back
    for op, at, k in ops:
        idle = python.runs()
        if op in ("take_front", "take_runs", "take_packed", "first_runs"):
            results = []
            for runs in (built, python):
                try:
                    results.append(getattr(runs, op)(k))
                except ValueError as e:
                    results.append(str(e))
            assert results[0] == results[1], (op, k, idle)
            got = results[1]
            if op == "take_front" and isinstance(got, int) and got >= 0:
                held.append((got, got + k))
            elif op == "take_runs" and isinstance(got, list):
                held += [(got[i], got[i + 1]) for i in range(0, len(got), 2)]
            elif op == "take_packed" and isinstance(got, bytes):
                runs = unpack_runs(got)
                held += [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]
        elif op == "give" and held:
            a, b = held.pop(at % len(held))
            built.give(a, b)
            python.give(a, b)
        elif op == "occupy" and idle:
            i = 2 * (at % (len(idle) // 2))
            a = idle[i] + at % (idle[i + 1] - idle[i])
            b = min(idle[i + 1], a + k)
            built.occupy(a, b)
            python.occupy(a, b)
            held.append((a, b))
        elif op == "pickle":
            built = pickle.loads(pickle.dumps(built))
        elif op == "ids":
            # Ids in any order, as arrays or lists: some held runs given back, then as many
            # idle ids occupied (``NodePool.add`` and ``remove`` with a job's node array).
            rng = random.Random(at)
            back = [held.pop(rng.randrange(len(held))) for _ in range(min(k % 4, len(held)))]
            ids = [x for a, b in back for x in range(a, b)]
            rng.shuffle(ids)
            built.give_ids(np.array(ids, dtype=np.int64))
            python.give_ids(np.array(ids, dtype=np.int64))
            free = ids_of_runs(python.runs()).tolist()
            taken = rng.sample(free, min(k, len(free)))
            built.occupy_ids(taken)
            python.occupy_ids(np.array(taken, dtype=np.int64))
            runs = runs_of_ids(np.array(taken, dtype=np.int64))
            held += [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]
        assert built.runs() == python.runs(), (op, at, k)
        assert built.lo == python.lo and built.hi == python.hi
    with pytest.raises(ValueError, match="given twice"):
        built.give_ids(np.array([5, 5], dtype=np.int64))
    # Everything given back, in one pass per job's ascending runs (half as a list, half
    # packed, as a job's end gives them): the whole range again.
    held.sort()
    half = len(held) // 2
    mine = [x for ab in held[:half] for x in ab]
    assert built.give_runs(mine) == python.give_runs(mine) == sum(b - a for a, b in held[:half])
    packed = pack_runs([x for ab in held[half:] for x in ab])
    assert built.give_packed(packed) == python.give_packed(packed)
    assert built.runs() == python.runs() == [0, width]


@pytest.mark.parametrize("kind", IMPLEMENTATIONS)
@settings(max_examples=200, deadline=None)
@given(
    ids=st.sets(st.integers(0, 300), max_size=150),
    pick=st.integers(0, 10**6),
)
def test_give_runs_is_give_run_by_run(kind: Any, ids: set[int], pick: int) -> None:
    """``give_runs`` (a job's ascending runs in one pass) leaves what ``give`` one by one does,
    and counts the nodes."""
    one, other = kind(0, 301), kind(0, 301)
    busy = np.array(sorted(ids), dtype=np.int64)
    one.occupy_ids(busy)
    other.occupy_ids(busy)
    runs = runs_of_ids(busy)
    # A job's holding: an ascending subset of the busy runs (what it holds is busy), chosen
    # at random from ``pick``.
    mine = [
        x
        for i in range(0, len(runs), 2)
        if random.Random(pick + i).random() < 0.5
        for x in (runs[i], runs[i + 1])
    ]
    for i in range(0, len(mine), 2):
        one.give(mine[i], mine[i + 1])
    assert other.give_runs(mine) == sum(mine[i + 1] - mine[i] for i in range(0, len(mine), 2))
    assert other.lo == one.lo and other.hi == one.hi


def test_runs_of_ids_round_trip() -> None:
    ids = np.array([9, 3, 4, 5, 12, 10, 0], dtype=np.int64)
    runs = runs_of_ids(ids)
    assert runs == [0, 1, 3, 6, 9, 11, 12, 13]
    assert ids_of_runs(runs).tolist() == sorted(ids.tolist())
    # Not sorted, first and last one apart from the size: still three runs, not one.
    assert runs_of_ids(np.array([2, 0, 4], dtype=np.int64)) == [0, 1, 2, 3, 4, 5]
    assert runs_of_ids(np.array([7], dtype=np.int64)) == [7, 8]


@settings(max_examples=200, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 5000), min_size=2, max_size=40, unique=True),
    every=st.integers(1, 3),
    value=st.sampled_from([0.0, 1.0, 0.25]),
)
def test_set_runs_writes_what_a_scatter_writes(cuts: list[int], every: int, value: float) -> None:
    # Runs from sorted cut points (every ``every``-th gap a run): long runs take the run-by-run
    # fill, short ones the scatter; both must write exactly the runs' ids and nothing else.
    bounds = sorted(cuts)
    runs: list[int] = []
    for i in range(0, len(bounds) - 1, every):
        runs += [bounds[i], bounds[i + 1]]
    ids = ids_of_runs(runs)
    got = np.full(5001, 0.5)
    set_runs(got, runs, ids, value)
    want = np.full(5001, 0.5)
    want[ids] = value
    assert np.array_equal(got, want)


@pytest.mark.parametrize("mean_run", [1, 8, SLICE_RUN - 1, SLICE_RUN, 1000])
def test_set_runs_both_ways_on_fragmented_runs(mean_run: int) -> None:
    # Runs of ``mean_run`` ids with gaps between: the threshold's both sides.
    runs = [i for a in range(0, 40 * (mean_run + 3), mean_run + 3) for i in (a, a + mean_run)]
    ids = ids_of_runs(runs)
    got = np.zeros(runs[-1] + 5)
    set_runs(got, runs, ids, 1.0)
    assert np.flatnonzero(got).tolist() == ids.tolist()
    set_runs(got, runs, ids, 0.0)
    assert not got.any()


def lazy_episode(seed: int, eager: bool) -> tuple[list[Any], Any]:
    """Random commands on one wide cluster; the CPU array read at random points only.

    ``eager``: the array written after every command and every advance (``NodePool.sync``), as
    it was before whole-node starts left it to be written when read.
    """
    rng = random.Random(seed)
    platform, jobs = wide_world(rng)
    sim = Simulator(Platform.single(sum(c.nodes for c in platform.clusters)), jobs)
    look = random.Random(seed + 1)
    seen: list[Any] = []

    def maybe_read() -> None:
        if eager:
            sim.pool.sync()
        if look.random() < 0.1:
            cpu = sim.node_cpu_used
            want = np.zeros(cpu.size)
            for job in sim.running.values():
                np.add.at(want, job.nodes, job.cpu)  # a node may hold several tasks
            np.testing.assert_allclose(cpu, want, rtol=0, atol=1e-9)
            seen.append(cpu.tolist())

    while sim.advance():
        maybe_read()
        for _ in range(rng.randint(0, 4)):
            act(rng, sim)
            maybe_read()
        drain(sim)
        if look.random() < 0.3:  # else the ids of multi-run starts may stay unbuilt to the end
            seen.append([(j.id, j.nodes.tolist()) for j in sim.running.values()])
    # every holding ended or written is no longer lazy
    assert not any(job._cpu_lazy for job in sim.pool.lazy)
    assert not any(job._cpu_lazy for job in sim.jobs.values())
    assert not sim.node_cpu_used.any()
    return seen, sim.result().jobs


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_lazy_cpu_array_equals_the_eager_one(seed: int) -> None:
    # Starts, ends, shrinks, expansions, suspensions and migrations with the whole-node
    # holdings written only when read: the same arrays where read, the same per-job table.
    got, table = lazy_episode(seed, eager=False)
    want, want_table = lazy_episode(seed, eager=True)
    assert got == want
    assert table.equals(want_table)


def test_a_whole_node_start_is_written_when_read() -> None:
    sim = Simulator(Platform.single(10), [JobSpec(1, 0.0, work=5.0, nodes=4)])
    sim.advance()
    sim.start(1)
    lazy = [(job.id, unpack_runs(job._runs), job._cpu_lazy) for job in sim.pool.lazy]
    assert lazy == [(1, [0, 4], True)]
    assert not sim.pool.cpu_used.any()  # not written yet
    assert sim.node_cpu_used.tolist() == [1.0] * 4 + [0.0] * 6
    assert not sim.pool.lazy and not sim.jobs[1]._cpu_lazy
    assert sim.node_idle.tolist() == [False] * 4 + [True] * 6
    sim.advance()
    assert not sim.node_cpu_used.any()


def test_the_lazy_list_is_compacted_and_ended_holdings_are_not_written() -> None:
    """Nothing reads the CPU array: the lazy list keeps at most about twice the lazy jobs
    (ended ones are dropped at each compaction), and an ended lazy job is never written."""
    n = 3 * nodes_module.LAZY_COMPACT
    jobs = [JobSpec(i, float(i), work=1.5, nodes=1 + i % 3) for i in range(n)]
    sim = Simulator(Platform.single(8), jobs)
    longest = 0
    while sim.advance():
        while (head := sim.queue_head()) is not None and head._want <= sim.pool.free[0]:
            sim.start(head.id)
        longest = max(longest, len(sim.pool.lazy))
        lazy_now = sum(job._cpu_lazy for job in sim.running.values())
        assert len(sim.pool.lazy) <= max(nodes_module.LAZY_COMPACT, 2 * lazy_now + 1)
    assert longest == nodes_module.LAZY_COMPACT - 1
    assert not sim.pool.cpu_used.any()  # the lazy holdings all ended unwritten
    assert sim.counts["completed"] == n


def test_runs_stay_the_idle_nodes_on_a_wide_machine() -> None:
    """Wide-machine starts and ends (ids past 256, the small-int cache): the runs stay exactly
    the idle nodes, and the idle counts are ``box``'s shared objects."""
    from hpcgym.sim.nodes import BOXED_IDS, box

    specs = [JobSpec(i, 0.0, work=float(1 + i % 5), nodes=100 + 37 * (i % 7)) for i in range(40)]
    sim = Simulator(Platform.single(1000), specs)  # its pool makes the counts up to 1000 once
    assert box(300) is box(300) and box(-1) == -1 and box(BOXED_IDS + 5) == BOXED_IDS + 5
    while sim.advance():
        for jid in list(sim.queue):
            if sim.jobs[jid].spec.nodes <= sim.free_nodes():
                sim.start(jid)
        assert sim.pool.free[0] is box(sim.pool.free[0])
        idle = np.flatnonzero(sim.node_cpu_used == 0.0)
        assert np.array_equal(idle_ids(sim.pool.idle[0]), idle)
    assert all(j.state is JobState.COMPLETED for j in sim.jobs.values())


@pytest.mark.parametrize("kind", IMPLEMENTATIONS)
def test_packed_runs_are_native_int64_pairs(kind: Any) -> None:
    """A job's packed runs are its runs as int64 pairs, given back as such; anything else is
    refused with nothing given."""
    runs = kind(0, 100)
    runs.occupy(10, 20)
    packed = runs.take_packed(15)
    assert unpack_runs(packed) == [0, 10, 20, 25] == np.frombuffer(packed, np.int64).tolist()
    assert pack_runs(unpack_runs(packed)) == packed and pack_runs([]) == b""
    for bad in ([0, 10], b"\x00" * 8):
        with pytest.raises(TypeError, match="int64 pairs"):
            runs.give_packed(bad)
    assert runs.runs() == [25, 100]
    assert runs.give_packed(packed) == 15 and runs.runs() == [0, 10, 20, 100]


def _bound_to_own_runs(pool: Any) -> bool:
    """Whether the pool's kept methods (``take0``, ``gives``) are those of the runs it holds."""
    idle = pool.idle
    return pool.take0.__self__ is idle[0] and all(
        g.__self__ is r for g, r in zip(pool.gives, idle, strict=True)
    )


def test_pool_keeps_the_methods_of_the_runs_it_holds() -> None:
    # The pool calls ``take_packed`` and ``give_packed`` through bound methods it keeps: a
    # pickled copy, and a pool whose runs are replaced, must call their own runs, not others'.
    platform = Platform.multi([8, 4])
    jobs = [JobSpec(id=i, submit=0.0, nodes=2, work=10.0 + i) for i in range(3)]
    sim = Simulator(platform, jobs)
    assert _bound_to_own_runs(sim.pool)
    sim.advance()
    copy = pickle.loads(pickle.dumps(sim))
    assert _bound_to_own_runs(copy.pool)
    copy.start(0)
    assert copy.pool.idle[0].lo == [2] and sim.pool.idle[0].lo == [0]
    for jid in (1, 2):
        copy.start(jid)
    while copy.advance():
        pass
    assert copy.pool.idle[0].lo == [0] and copy.pool.idle[0].hi == [8]
    pool = sim.pool
    pool.idle = [PyIdleRuns(lo, hi) for lo, hi in pool.bounds]
    assert _bound_to_own_runs(pool)
    sim.start(1)
    assert pool.idle[0].lo == [2]


@pytest.mark.parametrize("size", [0, 1, 7, 5000])
def test_unknown_ids_are_a_read_only_stand_in_made_once_per_size(size: int) -> None:
    made = nodes_module.unknown_ids(size)
    assert made.shape == (size,) and made.dtype == np.int64
    assert (made == -1).all()
    assert made.strides == (0,)  # no data of its own, whatever the size
    assert not made.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        made[...] = 3
    assert nodes_module.unknown_ids(size) is made
    assert (nodes_module.unknown_ids(size + 1) == -1).all()
