"""Batsim JSON workloads in and out: round trips keep every job field; foreign files; errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hpcgym.cli import main
from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads import load, read_workload, registry, transforms, write_workload
from hpcgym.workloads.batsim import batsim_document, read_batsim
from hpcgym.workloads.convert import trace_to_workload, workload_to_trace
from hpcgym.workloads.formats import file_format
from hpcgym.workloads.swf import COL, read_swf
from hpcgym.workloads.workload import Workload

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "slurm-sample.sacct"


def _same(a: Workload, b: Workload) -> None:
    """Every job field, every SWF field, the header and the machine are equal."""
    assert a.jobs == b.jobs and a.fingerprint() == b.fingerprint()
    assert [(j.user, j.group, j.walltime) for j in a.jobs] == [
        (j.user, j.group, j.walltime) for j in b.jobs
    ]
    assert np.array_equal(workload_to_trace(a).data, workload_to_trace(b).data)
    assert a.platform == b.platform


def test_round_trip_keeps_every_field_of_a_real_trace(tmp_path: Path) -> None:
    w = transforms.first(load("swf/kth-sp2-v0"), 400)
    write_workload(w, tmp_path / "k.json", command="test")
    back = read_workload(tmp_path / "k.json")
    _same(w, back)
    # ... and the same as the SWF round trip, header included.
    write_workload(w, tmp_path / "k.swf", command="test")
    swf = read_workload(tmp_path / "k.swf")
    assert back.header == swf.header and np.array_equal(back.rows, swf.rows)  # type: ignore[arg-type]


def test_round_trip_of_an_imported_slurm_dump(tmp_path: Path) -> None:
    w = read_workload(SAMPLE)
    write_workload(w, tmp_path / "s.json")
    _same(w, read_workload(tmp_path / "s.json"))


def test_round_trip_in_whole_nodes(tmp_path: Path) -> None:
    w = load("swf/hpc2n-v0")  # 120 dual-processor nodes, jobs in whole nodes
    write_workload(w, tmp_path / "n.json")
    doc = json.loads((tmp_path / "n.json").read_text())
    assert doc["nb_res"] == 120
    assert [j["res"] for j in doc["jobs"][:50]] == [j.nodes for j in w.jobs[:50]]
    back = read_workload(tmp_path / "n.json", allocation="node", procs_per_node=2)
    assert back.jobs == w.jobs and back.platform == w.platform


def _odd_times() -> Workload:
    jobs = (
        JobSpec(id=3, submit=0.0, work=1 / 3, nodes=2, walltime=10.5, user=4, group=2),
        JobSpec(id=8, submit=0.1, work=7.7, nodes=4, walltime=None, user=5, group=2),
        JobSpec(id=9, submit=2.25, work=0.0, nodes=1, walltime=60.0),
    )
    return Workload("odd", jobs, Platform.single(4))


@pytest.mark.parametrize("speed", [1e9, 3.3e9])
def test_parallel_homogeneous_round_trip_is_exact(tmp_path: Path, speed: float) -> None:
    w = _odd_times()
    p = tmp_path / "ph.json"
    write_workload(w, p, profile="parallel_homogeneous", speed=speed)
    doc = json.loads(p.read_text())
    assert {pr["type"] for pr in doc["profiles"].values()} == {"parallel_homogeneous"}
    assert doc["hpcgym"]["speed"] == speed
    back = read_workload(p)
    assert back.jobs == w.jobs  # 1/3 s survives cpu / speed rounding
    # Without the recorded exact run times, cpu / speed is used: equal to rounding.
    for job in doc["jobs"]:
        job["swf"].pop("run_time")
    p.write_text(json.dumps(doc))
    runs = read_batsim(p).data[:, COL["run_time"]]
    assert runs == pytest.approx([1 / 3, 7.7, 0.0], rel=1e-12)


def test_delay_profiles_are_shared_and_walltime_left_out_when_unknown(tmp_path: Path) -> None:
    w = _odd_times()
    p = write_workload(w, tmp_path / "d.json")
    doc = json.loads(p.read_text())
    assert doc["jobs"][0] == {
        "id": 3,
        "subtime": 0,
        "res": 2,
        "profile": doc["jobs"][0]["profile"],
        "walltime": 10.5,
        "swf": {"alloc_procs": 2, "req_procs": 2, "status": 1, "user_id": 4, "group_id": 2},
    }
    assert "walltime" not in doc["jobs"][1]
    assert doc["profiles"][doc["jobs"][1]["profile"]] == {"type": "delay", "delay": 7.7}


FOREIGN = {
    "nb_res": 16,
    "jobs": [
        {"id": "1", "subtime": 0, "walltime": 100, "res": 4, "profile": "d10"},
        {"id": 2, "subtime": 5.5, "walltime": -1, "res": 16, "profile": "ph"},
        {"id": "3", "subtime": 9, "res": 1, "profile": "d10", "user": "extra keys are fine"},
    ],
    "profiles": {
        "d10": {"type": "delay", "delay": 10},
        "ph": {"type": "parallel_homogeneous", "cpu": 4e9, "com": 1e6},
    },
}


def test_a_foreign_batsim_workload_reads(tmp_path: Path) -> None:
    p = tmp_path / "foreign.json"
    p.write_text(json.dumps(FOREIGN))
    trace = read_batsim(p, speed=2e9)
    assert list(trace.data[:, COL["job_id"]]) == [1, 2, 3]
    assert list(trace.data[:, COL["run_time"]]) == [10, 2, 10]  # 4e9 flops at 2e9 flop/s
    assert list(trace.data[:, COL["req_time"]]) == [100, -1, -1]
    assert list(trace.data[:, COL["alloc_procs"]]) == [4, 16, 1]
    assert trace.header.max_procs == 16
    assert trace.report is not None and any("com" in n for n in trace.report.notes)
    w = trace_to_workload(trace)
    assert len(w) == 3 and w.platform.total_nodes == 16


def test_non_numeric_ids_are_numbered_in_file_order(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(FOREIGN))
    doc["jobs"][0]["id"] = "w0!1"
    p = tmp_path / "ids.json"
    p.write_text(json.dumps(doc))
    trace = read_batsim(p, speed=1e9)
    assert list(trace.data[:, COL["job_id"]]) == [1, 2, 3]
    assert trace.report is not None and any("numbered" in n for n in trace.report.notes)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["profiles"].update(ph={"type": "msg_par"}), "has type 'msg_par'"),
        (lambda d: d["jobs"][0].update(profile="nope"), "names profile 'nope'"),
        (lambda d: d["jobs"][0].update(res=0), "res is 0"),
        (lambda d: d["jobs"][0].update(subtime=-3), "subtime is -3"),
        (lambda d: d["jobs"][0].update(swf={"colour": 1}), "'swf' names 'colour'"),
        (lambda d: d.pop("nb_res"), "nb_res is None"),
        (lambda d: d.pop("profiles"), "no 'profiles' object"),
    ],
)
def test_bad_workloads_name_the_job_and_the_problem(tmp_path: Path, change, message) -> None:
    doc = json.loads(json.dumps(FOREIGN))
    change(doc)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(WorkloadError, match=message):
        read_batsim(p, speed=1e9)


def test_parallel_homogeneous_needs_a_speed(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    p.write_text(json.dumps(FOREIGN))
    with pytest.raises(WorkloadError, match=r"job 2 \(id 2\): profile 'ph' .* give the platform"):
        read_batsim(p)


def test_broken_json_names_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "broken.json"
    p.write_text('{"nb_res": 4,\n "jobs": [,]}')
    with pytest.raises(WorkloadError, match=r"broken.json:2:11: not valid JSON"):
        read_batsim(p)


def test_writing_refuses_jobs_batsim_cannot_run(tmp_path: Path) -> None:
    w = read_workload(SAMPLE)
    trace = workload_to_trace(w)
    sizes = np.array([j.nodes for j in w.jobs])
    with pytest.raises(WorkloadError, match="job 101 needs 64 resources; the platform has 32"):
        batsim_document(trace, sizes, 32)
    with pytest.raises(WorkloadError, match="profile must be one of"):
        batsim_document(trace, sizes, 104, profile="sequence")


def test_json_is_detected_and_loads_as_a_set(tmp_path: Path) -> None:
    p = tmp_path / "w.json"
    write_workload(read_workload(SAMPLE), p)
    other = tmp_path / "w.data"
    other.write_bytes(p.read_bytes())
    assert file_format(p) == "batsim" and file_format(other) == "batsim"
    assert registry.load(str(other)).jobs == registry.load(str(SAMPLE)).jobs


def test_cli_export_import_and_simulate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["workloads", "import", "slurm", str(SAMPLE), "jobs.swf"]) == 0
    assert main(["workloads", "export", "batsim", "jobs.swf", "jobs.json"]) == 0
    assert "wrote jobs.json" in capsys.readouterr().out
    doc = json.loads(Path("jobs.json").read_text())
    assert "workloads export batsim" in doc["hpcgym"]["command"]
    assert main(["workloads", "import", "batsim", "jobs.json", "back.swf"]) == 0
    capsys.readouterr()
    back, first = read_swf("back.swf"), read_swf("jobs.swf")
    ran = first.data[first.data[:, COL["run_time"]] >= 0]
    assert np.array_equal(back.data[:, COL["job_id"]], ran[:, COL["job_id"]])
    assert np.array_equal(back.data[:, COL["run_time"]], ran[:, COL["run_time"]])
    for target in ("jobs.swf", "jobs.json"):
        assert (
            main(["simulate", "--scheduler", "easy", "--workload", target, "--out", "o.csv"]) == 0
        )
        capsys.readouterr()
        Path(f"{target}.csv").write_bytes(Path("o.csv").read_bytes())
    assert Path("jobs.swf.csv").read_bytes() == Path("jobs.json.csv").read_bytes()
    assert main(["workloads", "export", "batsim", "jobs.swf", "jobs.txt"]) == 2
    assert "is a .json file" in capsys.readouterr().err
    assert main(["workloads", "convert", "jobs.swf", "conv.json", "--first", "5"]) == 0
    assert len(json.loads(Path("conv.json").read_text())["jobs"]) == 5


def test_a_platform_beyond_what_hpcgym_simulates_is_refused(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(FOREIGN))
    doc["nb_res"] = 2**40
    p = tmp_path / "huge.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(WorkloadError, match="nb_res is 1099511627776"):
        read_batsim(p, speed=1e9)
