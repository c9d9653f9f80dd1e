"""The C batch core (``hpcgym.sim.batch``) against the event loop it replaces.

A batch run of FCFS or EASY must leave the simulator exactly as the event loop does: every
field of every job, the counters, the clock, the areas, and ``result()`` (columns and summary),
bit for bit. Checked on hypothesis-generated workloads (ties, zero-length jobs, jobs larger
than the machine, walltimes below, at and above the run time, kills on and off, fractional
times) and on windows of the bundled traces, arrivals compressed so the queue grows long.
Then: which runs must not take the core, and the core's own input checks.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcgym.workloads as W
from hpcgym.baselines import make
from hpcgym.baselines.classic import FCFS, EasyBackfill
from hpcgym.errors import SpecError
from hpcgym.sim import JobKind, JobSpec, Platform, SimConfig, Simulator, batch
from hpcgym.sim.job import Job
from hpcgym.workloads import transforms

pytestmark = pytest.mark.skipif(
    not batch.available(), reason="pure-Python build: no batch core, every run is the event loop"
)

_SIM_FIELDS = (
    "_now",
    "_next_sub",
    "_s_next",
    "_n_ended",
    "_n_completed",
    "_n_killed",
    "_n_rejected",
    "_commands",
    "_alloc_total",
    "_useful_total",
    "_demand_total",
    "alloc_area",
    "useful_area",
    "demand_area",
    "total_demand_work",
)


_JOB_FIELDS: tuple[str, ...] = getattr(Job, "__mypyc_attrs__", None) or Job.__slots__
"""Every field of a job (a compiled ``Job`` lists them in ``__mypyc_attrs__``)."""
assert "_remaining" in _JOB_FIELDS and "max_size" in _JOB_FIELDS


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def event_loop(platform: Platform, jobs: list[JobSpec], config: SimConfig, name: str) -> Simulator:
    sim = Simulator(platform, jobs, config)
    scheduler = make(name)
    while sim.advance():
        scheduler.schedule(sim)
    return sim


def assert_same_run(
    platform: Platform, jobs: list[JobSpec], config: SimConfig, name: str
) -> Simulator:
    """Run ``name`` through the core and through the event loop; assert equal everything."""
    fast = Simulator(platform, jobs, config)
    result = fast.run(make(name))
    assert fast._batch_out is not None, "the run did not take the batch core"
    slow = event_loop(platform, jobs, config, name)
    assert slow._batch_out is None
    for field in _SIM_FIELDS:
        assert _same(getattr(fast, field), getattr(slow, field)), field
    assert fast.counts == slow.counts
    assert fast.done and not fast.queue and not fast.running
    for jid, job in slow.jobs.items():
        other = fast.jobs[jid]
        for slot in _JOB_FIELDS:
            if slot == "_nodes":  # an empty array either way; compared by value
                assert np.array_equal(getattr(other, slot), getattr(job, slot))
                continue
            assert _same(getattr(other, slot), getattr(job, slot)), (jid, slot)
    expected = slow.result()
    for again in (result, fast.result()):
        assert list(again.columns) == list(expected.columns)
        for key, col in expected.columns.items():
            got = again.columns[key]
            assert got.dtype == col.dtype, key
            if col.dtype == object:
                assert got.tolist() == col.tolist(), key
            else:
                assert np.array_equal(got, col, equal_nan=True), key
        assert again.summary.keys() == expected.summary.keys()
        for key, value in expected.summary.items():
            assert _same(again.summary[key], value), key
    return fast


def test_zero_length_jobs_plan_as_overrunning() -> None:
    # Jobs of 1 and 2 nodes end at once (work 0): until their ends are processed EASY plans
    # them to end OVERRUN_GRACE from now, so the 3-node job starts beside the blocked head.
    raw = [(1, 0.0), (2, 0.0), (6, 0.0), (3, 1.0)]
    jobs = [JobSpec(id=i, submit=0.0, work=w, nodes=n) for i, (n, w) in enumerate(raw)]
    sim = assert_same_run(Platform.single(8), jobs, SimConfig(), "easy")
    assert sim.jobs[3].start_time == 0.0 and sim.jobs[2].start_time == 1.0


job_st = st.tuples(
    st.integers(0, 30),  # submit
    st.sampled_from([0, 1, 2, 3, 5, 8, 13, 21, 0.5, 2.25]),  # work
    st.integers(1, 10),  # nodes (the machine has 8: some are rejected)
    st.sampled_from([None, 0, 1, 4, -1, -0.5]),  # walltime: none, or work + this
)


@settings(max_examples=400, deadline=None)
@given(
    raw=st.lists(job_st, min_size=1, max_size=30),
    kill=st.booleans(),
    name=st.sampled_from(["fcfs", "easy"]),
    offset=st.sampled_from([0.0, 0.1, 1e9 + 0.3]),
)
def test_core_equals_event_loop_on_random_workloads(raw, kill, name, offset) -> None:  # type: ignore[no-untyped-def]
    jobs = []
    for i, (s, w, n, d) in enumerate(raw):
        wall = None if d is None else w + d
        if wall is not None and (wall <= 0 or (not kill and w > wall)):
            wall = None  # a job that could outlive its estimate is the event loop's (below)
        jobs.append(JobSpec(id=100 - i, submit=s + offset, work=float(w), nodes=n, walltime=wall))
    assert_same_run(Platform.single(8), jobs, SimConfig(kill_on_walltime=kill), name)


@functools.cache
def _trace(name: str, n: int, compress: float) -> tuple[Platform, list[JobSpec]]:
    w = transforms.first(W.load(name), n)
    if compress != 1.0:
        w = transforms.scale_arrivals(w, compress)
    return w.platform, list(w.jobs)


@pytest.mark.parametrize("name", ["fcfs", "easy"])
@pytest.mark.parametrize(
    "trace, compress",
    [
        ("swf/lublin256-v0", 1.0),
        ("swf/lublin256-v0", 0.25),
        ("swf/sdsc-sp2-v0", 0.25),
        ("swf/kth-sp2-v0", 1.0),
        ("swf/hpc2n-v0", 1.0),
        ("swf/cea-curie-v0", 1.0),
    ],
)
def test_core_equals_event_loop_on_trace_windows(trace: str, compress: float, name: str) -> None:
    platform, jobs = _trace(trace, 3000, compress)
    for kill in (True, False):
        config = SimConfig(kill_on_walltime=kill)
        if not kill and any(j.walltime is not None and j.work > j.walltime for j in jobs):
            continue  # such a run is the event loop's (test_which_runs_take_the_core)
        sim = assert_same_run(platform, jobs, config, name)
        assert sim.counts["completed"] > 0


def test_base_scheduler_run_and_simulate_take_the_core() -> None:
    platform, jobs = _trace("swf/lublin256-v0", 500, 1.0)
    sim = Simulator(platform, jobs)
    make("easy").run(sim)
    assert sim._batch_out is not None
    via_simulate = make("easy").simulate(platform, jobs)
    loop = event_loop(platform, jobs, SimConfig(), "easy").result()
    assert np.array_equal(via_simulate.columns["start"], loop.columns["start"], equal_nan=True)
    assert via_simulate.summary == loop.summary


class _CountingSimulator(Simulator):
    """A ``Simulator`` that counts the calls of ``result`` (a Python subclass)."""

    results = 0

    def result(self):  # type: ignore[no-untyped-def]
        type(self).results += 1
        return super().result()


@pytest.mark.parametrize("name", ["fcfs", "easy"])
def test_simulate_keeps_the_table_the_core_built(name: str, monkeypatch) -> None:
    # The core's run builds the result table; simulate() returns it instead of building a
    # second one with sim.result(), and it is the same table as run() then result() give.
    import hpcgym.baselines.base as base

    platform, jobs = _trace("swf/lublin256-v0", 300, 1.0)
    monkeypatch.setattr(base, "Simulator", _CountingSimulator)
    _CountingSimulator.results = 0
    via_simulate = make(name).simulate(platform, jobs)
    assert _CountingSimulator.results == 0
    sim = Simulator(platform, jobs)
    make(name).run(sim)
    again = sim.result()
    assert via_simulate.summary == again.summary
    assert via_simulate.columns.keys() == again.columns.keys()
    for key, column in again.columns.items():
        assert np.array_equal(via_simulate.columns[key], column, equal_nan=column.dtype.kind == "f")


def test_simulate_calls_a_subclass_own_run() -> None:
    from hpcgym.baselines.base import BaseScheduler

    class Mine(BaseScheduler):
        """FCFS's decisions, with a ``run`` of its own (and no batch core: not declared)."""

        calls = 0

        def __init__(self) -> None:
            self.fcfs = FCFS()

        def schedule(self, sim: Simulator) -> None:
            self.fcfs.schedule(sim)

        def run(self, sim: Simulator) -> None:
            type(self).calls += 1
            super().run(sim)

    platform, jobs = _trace("swf/lublin256-v0", 100, 1.0)
    result = Mine().simulate(platform, jobs)
    assert Mine.calls == 1
    assert result.summary == make("fcfs").simulate(platform, jobs).summary


class _Declares:
    batch_policy = batch.EASY


class _Inherits(_Declares):
    """Inherits ``batch_policy`` (as a subclass of ``EasyBackfill`` in a pure-Python build
    would; a compiled one cannot be subclassed) but must not inherit the core."""


def test_which_runs_take_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    platform, jobs = _trace("swf/lublin256-v0", 300, 1.0)

    def took_core(sim: Simulator, scheduler: object) -> bool:
        sim.run(scheduler)  # type: ignore[arg-type]
        return sim._batch_out is not None

    assert took_core(Simulator(platform, jobs), make("fcfs"))
    assert took_core(Simulator(platform, jobs), make("easy"))
    # Not these: other schedulers, a subclass, an advanced simulator, a tick, a moldable job,
    # a job sharing node CPU or memory, a job outliving its estimate with kills off.
    assert batch.batch_policy(make("sjf")) == -1
    assert not took_core(Simulator(platform, jobs), make("sjf"))
    assert batch.batch_policy(_Declares()) == batch.EASY
    assert batch.batch_policy(_Inherits()) == -1
    assert batch.batch_policy(EasyBackfill()) == batch.EASY
    advanced = Simulator(platform, jobs)
    advanced.advance()
    assert not took_core(advanced, make("easy"))
    assert not took_core(Simulator(platform, jobs, SimConfig(tick=60.0)), make("easy"))
    first = jobs[0]
    for changed in (
        JobSpec(
            id=first.id,
            submit=first.submit,
            work=first.work,
            nodes=2,
            max_nodes=4,
            kind=JobKind.MOLDABLE,
        ),
        JobSpec(id=first.id, submit=first.submit, work=first.work, nodes=1, cpu_need=0.5),
        JobSpec(id=first.id, submit=first.submit, work=first.work, nodes=1, mem=0.25),
        JobSpec(id=first.id, submit=first.submit, work=100.0, nodes=1, walltime=50.0),
    ):
        other = [changed, *jobs[1:]]
        config = SimConfig(kill_on_walltime=changed.walltime is None)
        assert not took_core(Simulator(platform, other, config), make("easy"))
    # Switched off, for timing the event loop.
    monkeypatch.setenv("HPCGYM_BATCH_CORE", "0")
    assert not batch.available()
    assert not took_core(Simulator(platform, jobs), make("easy"))


def test_multicluster_platforms_still_refused() -> None:
    platform = Platform.multi([4, 4])
    jobs = [JobSpec(id=1, submit=0.0, work=1.0, nodes=1)]
    with pytest.raises(SpecError, match="single cluster"):
        Simulator(platform, jobs).run(FCFS())


def test_core_checks_its_inputs() -> None:
    from hpcgym.sim import _batchcore

    ok = ([0.0, 1.0], [1.0, 1.0], [-1.0, 0.5], [1, 1])
    out = _batchcore.run(0, 4, 1.0, True, *ok)
    assert len(out) == 12
    assert np.frombuffer(out[2], dtype=np.int8).tolist() == [0, 1]  # the second is killed
    assert np.frombuffer(out[1]).tolist() == [1.0, 1.5]
    with pytest.raises(ValueError, match="neither 0"):
        _batchcore.run(2, 4, 1.0, True, *ok)
    with pytest.raises(ValueError, match="submission order"):
        _batchcore.run(0, 4, 1.0, True, [1.0, 0.0], *ok[1:])
    with pytest.raises(TypeError, match="list of 2"):
        _batchcore.run(0, 4, 1.0, True, ok[0], [1.0], *ok[2:])
    with pytest.raises(ValueError, match="size 0"):
        _batchcore.run(1, 4, 1.0, True, *ok[:3], [1, 0])
    with pytest.raises(TypeError):
        _batchcore.run(0, 4, 1.0, True, *ok[:3], (1, 1))
    with pytest.raises(TypeError, match="must be real number"):
        _batchcore.run(0, 4, 1.0, True, ok[0], ["1", 1.0], *ok[2:])


def test_core_builds_specs_as_the_constructor_does() -> None:
    import gc

    from hpcgym.sim import _batchcore
    from hpcgym.sim.spec import rigid_specs

    jobs = rigid_specs(
        np.array([5, 6]),
        np.array([0.0, 1.0]),
        np.array([3.0, 4.0]),
        np.array([1, 2]),
        np.array([np.nan, 9.0]),
        np.array([-1, 3]),
        np.array([-1, 4]),
    )
    assert jobs == [
        JobSpec(id=5, submit=0.0, work=3.0, nodes=1),
        JobSpec(id=6, submit=1.0, work=4.0, nodes=2, walltime=9.0, user=3, group=4),
    ]
    # Frozen, holding only atoms and the shared models: off the collector's lists.
    assert not any(gc.is_tracked(j) for j in jobs)
    assert gc.is_tracked(JobSpec(id=1, submit=0.0))
    del jobs
    gc.collect()

    class Own:
        def __new__(cls) -> Own:
            return super().__new__(cls)

    with pytest.raises(TypeError, match="own __new__"):
        _batchcore.new_objects(Own, 1)
    with pytest.raises(ValueError, match=">= 0"):
        _batchcore.new_objects(JobSpec, -1)
    empty = _batchcore.new_objects(JobSpec, 2)
    with pytest.raises(AttributeError):
        empty[0].id  # noqa: B018 (slots unset until filled)
    with pytest.raises(TypeError, match="not a data descriptor"):
        _batchcore.set_column(len, empty, 1, False)
    with pytest.raises(ValueError, match="list of 2"):
        _batchcore.set_column(JobSpec.id, empty, [1], True)
    with pytest.raises(TypeError, match="must be a list"):
        _batchcore.untrack((1, 2))
