"""``simulate()`` straight from the specs (``hpcgym.sim.batch_specs``) against the event loop.

``run_specs`` must give the ``SimResult`` a ``Simulator`` stepped by the event loop gives, bit
for bit (columns and summary), and give up (``None``) exactly where a run would not take the
batch core, so that the caller builds the simulator and its errors are the simulator's.
"""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make
from hpcgym.errors import SpecError
from hpcgym.sim import JobKind, JobSpec, Platform, SimConfig, SimResult, Simulator, batch
from hpcgym.sim.batch_specs import run_specs

pytestmark = pytest.mark.skipif(
    not batch.available(), reason="pure-Python build: no batch core, every run is the event loop"
)


def loop_result(platform: Platform, jobs: list[JobSpec], config: SimConfig, name: str) -> SimResult:
    sim = Simulator(platform, jobs, config)
    scheduler = make(name)
    while sim.advance():
        scheduler.schedule(sim)
    return sim.result()


def assert_same_result(got: SimResult | None, expected: SimResult) -> None:
    assert got is not None, "run_specs gave up"
    assert list(got.columns) == list(expected.columns)
    for key, col in expected.columns.items():
        other = got.columns[key]
        assert other.dtype == col.dtype, key
        if col.dtype == object:
            assert other.tolist() == col.tolist(), key
        else:
            assert np.array_equal(other, col, equal_nan=True), key
    assert list(got.summary) == list(expected.summary)
    for key, value in expected.summary.items():
        mine = got.summary[key]
        assert mine == value or (math.isnan(mine) and math.isnan(value)), key


job_st = st.tuples(
    st.integers(0, 30),  # submit
    st.sampled_from([0, 1, 2, 3, 5, 8, 13, 21, 0.5, 2.25]),  # work
    st.integers(1, 10),  # nodes (the machine has 8: some are rejected)
    st.sampled_from([None, 0, 1, 4, -1, -0.5]),  # walltime: none, or work + this
)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.lists(job_st, min_size=1, max_size=30),
    kill=st.booleans(),
    name=st.sampled_from(["fcfs", "easy"]),
    offset=st.sampled_from([0.0, 0.1, 1e9 + 0.3]),
    tau=st.sampled_from([10.0, 0.5]),
    ints=st.booleans(),
)
def test_specs_run_equals_event_loop(raw, kill, name, offset, tau, ints) -> None:  # type: ignore[no-untyped-def]
    jobs = []
    for i, (s, w, n, d) in enumerate(raw):
        wall = None if d is None else w + d
        if wall is not None and wall <= 0:
            wall = None
        # ``ints``: times kept as the Python ints a spec accepts where they are whole numbers
        submit = s if ints and offset == 0.0 else s + offset
        work = w if ints else float(w)
        jobs.append(JobSpec(id=100 - i, submit=submit, work=work, nodes=n, walltime=wall))
    config = SimConfig(kill_on_walltime=kill, bsld_tau=tau)
    expected = loop_result(Platform.single(8), jobs, config, name)
    got = run_specs(Platform.single(8), jobs, config, make(name))
    if not kill and any(j.walltime is not None and j.work > j.walltime for j in jobs):
        assert got is None  # a job would outlive its estimate: the event loop's
        got = make(name).simulate(Platform.single(8), jobs, config)
    assert_same_result(got, expected)
    # simulate() takes it, from a tuple too
    assert_same_result(make(name).simulate(Platform.single(8), tuple(jobs), config), expected)


def test_where_it_gives_up() -> None:
    platform = Platform.single(8)
    jobs = [JobSpec(id=i, submit=float(i), work=3.0, nodes=2) for i in range(5)]
    config = SimConfig()
    assert run_specs(platform, jobs, config, make("easy")) is not None
    assert run_specs(platform, jobs, config, make("sjf")) is None
    assert run_specs(platform, [], config, make("easy")) is None
    assert run_specs(platform, jobs, SimConfig(tick=10.0), make("easy")) is None
    assert run_specs(Platform.multi([4, 4]), jobs, config, make("easy")) is None
    first = jobs[0]
    for changed in (
        dataclasses.replace(first, kind=JobKind.MOLDABLE, max_nodes=4),
        dataclasses.replace(first, cpu_need=0.5),
        dataclasses.replace(first, mem=0.25),
    ):
        assert run_specs(platform, [changed, *jobs[1:]], config, make("easy")) is None

    @dataclasses.dataclass(frozen=True, slots=True)
    class Mine(JobSpec):
        """A subclass could read its fields otherwise: not read slot by slot."""

    assert run_specs(platform, [Mine(id=9, submit=0.0), *jobs[1:]], config, make("easy")) is None
    # A duplicate id: the simulator's own error.
    twice = [*jobs, dataclasses.replace(first, submit=9.0)]
    assert run_specs(platform, twice, config, make("fcfs")) is None
    with pytest.raises(SpecError, match="appears twice"):
        make("fcfs").simulate(platform, twice)


def test_unsorted_specs_run_in_submission_order() -> None:
    platform = Platform.single(4)
    jobs = [
        JobSpec(id=1, submit=5.0, work=2.0, nodes=3),
        JobSpec(id=2, submit=0.0, work=9.0, nodes=2),
        JobSpec(id=3, submit=5.0, work=1.0, nodes=1),
        JobSpec(id=4, submit=0.0, work=4.0, nodes=4, walltime=2.0),
    ]
    for name in ("fcfs", "easy"):
        expected = loop_result(platform, jobs, SimConfig(), name)
        assert_same_result(run_specs(platform, jobs, SimConfig(), make(name)), expected)
        assert expected.columns["id"].tolist() == [2, 4, 1, 3]


def test_core_run_specs_reads_the_slots() -> None:
    """The core's own pass over the specs: what it gives up on, and what it returns."""
    from hpcgym.sim import _batchcore
    from hpcgym.sim.batch_specs import _COLUMNS, _PLAIN_RIGID

    def run(jobs: list[JobSpec], kill: bool = True) -> object:
        return _batchcore.run_specs(1, 8, 60.0, kill, JobSpec, jobs, _COLUMNS, _PLAIN_RIGID)

    jobs = [
        JobSpec(id=7, submit=0, work=3, nodes=2, walltime=4),  # Python ints where allowed
        JobSpec(id=-2, submit=1.5, work=2.0, nodes=8),
        JobSpec(id=3, submit=1.5, work=5.0, nodes=9),  # larger than the machine: rejected
    ]
    out = run(jobs)
    assert isinstance(out, tuple) and len(out) == 14
    assert np.frombuffer(out[12], dtype=np.int64).tolist() == [7, -2, 3]
    if sys.version_info < (3, 12):  # the sum() of floats the core repeats
        assert out[13] == sum(float(j.work) * j.nodes for j in jobs)
    else:  # a compensated sum(): run_specs sums in Python
        assert out[13] is None
    assert np.frombuffer(out[2], dtype=np.int8).tolist() == [0, 0, 2]
    assert run(jobs[::-1]) is False  # not in submission order
    assert run([*jobs, dataclasses.replace(jobs[1], submit=9.0)]) is None  # id twice
    assert run([jobs[2], jobs[0], dataclasses.replace(jobs[1], id=3)]) is None  # unsorted ids
    assert run([JobSpec(id=2**63, submit=0.0)]) is None  # beyond int64: the simulator's
    assert run([dataclasses.replace(jobs[0], walltime=2.0)], kill=False) is None  # outlives it
    assert run([dataclasses.replace(jobs[0], mem=0.5)]) is None
    assert run([dataclasses.replace(jobs[0], cpu_need=0.5)]) is None
    assert run([jobs[0], 1]) is None  # type: ignore[list-item]
    assert run([]) is not None
    with pytest.raises(TypeError, match="6 descriptors"):
        _batchcore.run_specs(1, 8, 60.0, True, JobSpec, jobs, _COLUMNS[:5], ())
    with pytest.raises(TypeError, match="triples"):
        _batchcore.run_specs(1, 8, 60.0, True, JobSpec, jobs, _COLUMNS, ((JobSpec.mem, 0.0),))
    with pytest.raises(ValueError, match="neither"):
        _batchcore.run_specs(2, 8, 60.0, True, JobSpec, jobs, _COLUMNS, ())


def test_core_reads_columns() -> None:
    from hpcgym.sim import _batchcore

    jobs = [JobSpec(id=5, submit=0.0, work=3.0), JobSpec(id=6, submit=1.0, walltime=2.0)]
    ids, walls = _batchcore.get_columns(JobSpec, jobs, (JobSpec.id, JobSpec.walltime))
    assert ids == [5, 6] and walls == [None, 2.0]
    assert _batchcore.get_columns(JobSpec, [*jobs, 1], (JobSpec.id,)) is None
    assert _batchcore.get_columns(JobSpec, [], (JobSpec.id,)) == ([],)
    rigid = ((JobSpec.kind, JobKind.RIGID, True),)
    assert _batchcore.get_columns(JobSpec, jobs, (JobSpec.id,), rigid) == ([5, 6],)
    mem = ((JobSpec.mem, 0, False),)  # 0.0 == 0
    assert _batchcore.get_columns(JobSpec, jobs, (JobSpec.id,), mem) == ([5, 6],)
    assert _batchcore.get_columns(JobSpec, jobs, (), ((JobSpec.mem, 0, True),)) is None
    assert _batchcore.get_columns(JobSpec, jobs, (), ((JobSpec.walltime, None, True),)) is None
    with pytest.raises(TypeError, match="triples"):
        _batchcore.get_columns(JobSpec, jobs, (), ((JobSpec.mem, 0.0),))
    with pytest.raises(TypeError, match="not a descriptor"):
        _batchcore.get_columns(JobSpec, jobs, (1,))
    with pytest.raises(TypeError):
        _batchcore.get_columns(JobSpec, tuple(jobs), (JobSpec.id,))
