from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads import transforms
from hpcgym.workloads.convert import read_workload, write_workload
from hpcgym.workloads.swf import read_swf
from hpcgym.workloads.workload import ProvenanceStep, Workload

SAMPLE = """; Version: 2.2
; MaxNodes: 10
; MaxProcs: 40
7 100 5 100 5 -1 -1 4 200 -1 1 3 4 -1 -1 -1 -1 -1
8 90 0 50 -1 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1
9 120 0 -1 4 -1 -1 4 60 -1 5 1 1 -1 -1 -1 -1 -1
10 130 0 30 -1 -1 -1 -1 60 -1 5 1 1 -1 -1 -1 -1 -1
"""


@pytest.fixture
def sample(tmp_path):
    p = tmp_path / "s.swf"
    p.write_text(SAMPLE)
    return p


def test_records_become_rigid_jobs_in_submission_order(sample):
    w = read_workload(sample, allocation="node")
    # Job 8 submits first; 9 has no run time and 10 no size: skipped and counted.
    assert [j.id for j in w] == [8, 7]
    j8, j7 = w.jobs
    assert (j8.submit, j7.submit) == (0.0, 10.0)
    # 40 procs on 10 nodes: 4 per node. Job 7 allocated 5 procs -> 2 nodes; job 8 asked 8 -> 2.
    assert (j7.nodes, j8.nodes) == (2, 2)
    assert (j7.work, j7.walltime, j8.walltime) == (100.0, 200.0, None)
    assert (j7.user, j7.group) == (3, 4)
    assert dict(w.skipped) == {"missing run time (field 4)": 1, "missing size (fields 5 and 8)": 1}
    assert w.platform == Platform.single(10, cores=4)
    assert w.rows is not None and w.rows[:, 0].tolist() == [8.0, 7.0]
    assert w.provenance[0].op == "from_swf"


def test_records_in_processors_by_default(sample):
    w = read_workload(sample)
    assert [j.nodes for j in w] == [8, 5]
    assert w.platform == Platform.single(40, cores=1)


def test_procs_per_node_override(sample):
    w = read_workload(sample, procs_per_node=1, allocation="node")
    assert [j.nodes for j in w] == [8, 5]
    assert w.platform.total_nodes == 40
    w = read_workload(sample, procs_per_node=8, allocation="node")
    assert [j.nodes for j in w] == [1, 1]
    assert w.platform == Platform.single(5, cores=8)


@pytest.mark.parametrize(
    "name", ["hpc2n.swf.gz", "lublin_256.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"]
)
def test_workload_round_trip_on_traces(traces_dir, tmp_path, name):
    w = read_workload(traces_dir / name)
    out = write_workload(w, tmp_path / "rt.swf", command="pytest")
    back = read_workload(out)
    assert back.jobs == w.jobs
    assert back.platform == w.platform


def test_round_trip_of_transformed_workload(traces_dir, tmp_path):
    w = read_workload(traces_dir / "hpc2n.swf.gz", procs_per_node=2, allocation="node")
    w = transforms.estimates(transforms.scale_load(w, 0.8), "noisy", seed=4)
    out = write_workload(w, tmp_path / "x.swf.gz")
    back = read_workload(out, procs_per_node=2, allocation="node")
    assert back.jobs == w.jobs


def test_written_header_records_command_version_seed(traces_dir, tmp_path):
    from hpcgym import __version__

    w = transforms.random_start(read_workload(traces_dir / "hpc2n.swf.gz"), 11, n_jobs=50)
    trace = read_swf(write_workload(w, tmp_path / "y.swf", command="hpcgym test --seed 11"))
    h = trace.header
    assert h.get("hpcgym-version") == __version__
    assert h.get("hpcgym-command") == "hpcgym test --seed 11"
    assert h.get("hpcgym-seed") == "11"
    assert [s.split('"op":"')[1].split('"')[0] for s in h.get_all("hpcgym-step")] == [
        "from_swf",
        "random_start",
    ]
    # The source acknowledgement is kept.
    assert h.get("Acknowledge") == "Ake Sandgren"


def test_workload_checks_order_and_ids():
    p = Platform.single(4)
    with pytest.raises(WorkloadError, match="submission order"):
        Workload("w", (JobSpec(1, 10.0, 1.0), JobSpec(2, 5.0, 1.0)), p)
    with pytest.raises(WorkloadError, match="unique"):
        Workload("w", (JobSpec(1, 1.0, 1.0), JobSpec(1, 5.0, 1.0)), p)
    with pytest.raises(WorkloadError, match="rows"):
        Workload("w", (JobSpec(1, 1.0, 1.0),), p, rows=np.zeros((2, 18)))


def test_fingerprint_sees_every_field():
    p = Platform.single(4)
    a = Workload("w", (JobSpec(1, 0.0, 10.0),), p)
    b = dataclasses.replace(a, jobs=(JobSpec(1, 0.0, 10.0, mem=0.5),))
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == Workload("other", (JobSpec(1, 0.0, 10.0),), p).fingerprint()
    step = ProvenanceStep.make("x", seed=3, b=2, a=1)
    assert step.to_json() == '{"op":"x","params":{"a":1,"b":2},"seed":3}'


def test_rewriting_replaces_hpcgym_lines(traces_dir, tmp_path):
    w = read_workload(traces_dir / "hpc2n.swf.gz")
    once = read_workload(write_workload(w, tmp_path / "a.swf", command="first"))
    twice = read_swf(write_workload(once, tmp_path / "b.swf", command="second")).header
    assert twice.get_all("hpcgym-command") == ["second"]
    assert len(twice.get_all("hpcgym-version")) == 1
