"""``trace_to_workload``'s column-wise JobSpec building against the per-record loop before it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from hpcgym.errors import SpecError, WorkloadError
from hpcgym.sim.spec import JobSpec, rigid_specs, rigid_valid
from hpcgym.workloads.convert import record_procs, trace_to_workload, unit_sizes
from hpcgym.workloads.swf import COL, SwfTrace, read_swf
from hpcgym.workloads.workload import Workload

FIELDS = [f.name for f in dataclasses.fields(JobSpec)]


def jobs_before(trace: SwfTrace, allocation: str, ppn: int) -> list[JobSpec]:
    """The jobs as ``trace_to_workload`` built them before (commit b8b4593), record by record."""
    rows = trace.data
    procs = record_procs(rows)
    ok = (procs > 0) & (rows[:, COL["run_time"]] >= 0) & (rows[:, COL["submit_time"]] >= 0)
    kept = rows[ok]
    kept = kept[np.argsort(kept[:, COL["submit_time"]], kind="stable")]
    shift = float(kept[0, COL["submit_time"]]) if len(kept) else 0.0
    nodes = unit_sizes(record_procs(kept), allocation, ppn)  # type: ignore[arg-type]
    return [
        JobSpec(
            id=int(r[COL["job_id"]]),
            submit=float(r[COL["submit_time"]]) - shift,
            work=float(r[COL["run_time"]]),
            nodes=int(n),
            walltime=float(w) if w > 0 else None,
            user=int(r[COL["user_id"]]),
            group=int(r[COL["group_id"]]),
        )
        for r, n, w in zip(kept, nodes, kept[:, COL["req_time"]], strict=True)
    ]


def typed_fields(job: JobSpec) -> list[tuple[str, type, object]]:
    """Every field with the type of its value (``1 == 1.0``, but an int is not a float)."""
    return [(name, type(getattr(job, name)), getattr(job, name)) for name in FIELDS]


@pytest.mark.parametrize(
    "name", ["hpc2n.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz", "CEA-Curie-2011-sample.swf.gz"]
)
@pytest.mark.parametrize("allocation", ["processor", "node"])
def test_same_jobs_as_the_per_record_loop(traces_dir: Path, name: str, allocation: str) -> None:
    trace = read_swf(traces_dir / name)
    ppn = 2 if name == "hpc2n.swf.gz" else trace.header.procs_per_node  # HPC2N: 2-CPU nodes
    w = trace_to_workload(trace, allocation=allocation, procs_per_node=ppn)  # type: ignore[arg-type]
    got = w.jobs
    want = jobs_before(trace, allocation, ppn)
    assert len(got) == len(want) > 1000
    assert [typed_fields(j) for j in got] == [typed_fields(j) for j in want]
    # The models are the very default objects, as the constructor shares them.
    assert all(
        g.speedup is w.speedup and g.reconfig is w.reconfig for g, w in zip(got, want, strict=True)
    )
    assert w.rows is not None
    # Built without ``Workload.__post_init__`` (its checks were done on the columns): the same
    # workload as the checked constructor gives, rows included.
    checked = Workload(**{f.name: getattr(w, f.name) for f in dataclasses.fields(Workload)})
    assert checked == w and checked.rows is not None
    assert checked.rows.dtype == w.rows.dtype and np.array_equal(checked.rows, w.rows)
    assert w.rows.flags.c_contiguous
    sizes = np.array([j.nodes for j in got])
    procs = record_procs(w.rows)
    if allocation == "processor":
        assert (sizes == procs).all()
    else:  # on HPC2N's 2-CPU nodes the units differ
        assert (sizes == np.ceil(procs / ppn)).all()
        assert (sizes < procs).any() == (name == "hpc2n.swf.gz")


@pytest.mark.parametrize("c_columns", [True, False])
def test_rigid_specs_equal_the_constructor_and_refuse_what_it_refuses(
    c_columns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.sim import spec

    if c_columns:
        if spec._c_core() is None:
            pytest.skip("pure-Python build: no C core to set the slots")
    else:
        monkeypatch.setattr(spec, "_c_core", lambda: None)
    ids = np.array([3, 1, 2])
    submit = np.array([0.0, 1.5, 2.0])
    work = np.array([10.0, 0.0, 7.0])
    nodes = np.array([1, 4, 2])
    wall = np.array([np.nan, 5.0, 20.0])
    user = np.array([-1, 7, 8])
    group = np.array([2, -1, 3])
    got = rigid_specs(ids, submit, work, nodes, wall, user, group)
    want = [
        JobSpec(id=3, submit=0.0, work=10.0, nodes=1, user=-1, group=2),
        JobSpec(id=1, submit=1.5, work=0.0, nodes=4, walltime=5.0, user=7, group=-1),
        JobSpec(id=2, submit=2.0, work=7.0, nodes=2, walltime=20.0, user=8, group=3),
    ]
    assert [typed_fields(j) for j in got] == [typed_fields(j) for j in want]
    assert rigid_valid(submit, work, nodes, wall).all()
    for column, bad, message in (
        (submit, -1.0, "submit time"),
        (work, np.nan, "work"),
        (nodes, 0, "requested size"),
        (wall, 0.0, "walltime"),
    ):
        old = column[1]
        column[1] = bad
        assert not rigid_valid(submit, work, nodes, wall)[1]
        with pytest.raises(SpecError, match=f"job 1: {message}"):
            rigid_specs(ids, submit, work, nodes, wall, user, group)
        column[1] = old


def test_a_record_jobspec_refuses_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    big = 2.0**53 + 2  # a run time beyond the time horizon
    path.write_text(
        "; MaxProcs: 8\n"
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
        f"2 5 0 {big:.0f} 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    with pytest.raises(WorkloadError, match=r"t\.swf:3: job 2: work must be in"):
        trace_to_workload(read_swf(path))


def test_a_field_beyond_int64_is_named_by_line(tmp_path: Path) -> None:
    # read_swf refuses such a line itself; records made some other way are checked again.
    path = tmp_path / "t.swf"
    path.write_text(
        "; MaxNodes: 4\n; MaxProcs: 4\n"
        "1 0 0 10 1 -1 -1 1 20 -1 1 3 1 -1 1 -1 -1 -1\n"
        "2 5 0 10 1 -1 -1 1 20 -1 1 7 1 -1 1 -1 -1 -1\n"
    )
    trace = read_swf(path)
    assert len(trace_to_workload(trace)) == 2
    data = trace.data.copy()
    data[1, COL["user_id"]] = 1e19
    bad = dataclasses.replace(trace, data=data)
    with pytest.raises(WorkloadError, match=r"t\.swf:4: field 12 \(user_id\).*int64 range"):
        trace_to_workload(bad)
