"""The header's machine size and the records' status codes (issue "Hardening III", N11, L3).

``MaxProcs: 1000000000`` was accepted and numpy then failed to allocate 7.45 GiB;
``MaxProcs: 16.5`` or ``1e30`` gave "neither MaxProcs nor MaxNodes"; of two ``MaxProcs`` lines
the first won silently; status 7, which SWF 2.2 does not define, was read as a status.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import read_swf, read_workload, write_swf
from hpcgym.workloads.header import MAX_MACHINE_UNITS, SwfHeader
from hpcgym.workloads.swf import COL, N_FIELDS, SwfTrace


def record(job: int, procs: int = 2, status: str = "1") -> str:
    fields = [str(job), "0", "0", "10", str(procs), "-1", "-1", str(procs), "20", "-1"]
    return " ".join([*fields, status, "3", "4", "-1", "-1", "-1", "-1", "-1"])


def write(tmp_path: Path, header: str, *records: str) -> Path:
    p = tmp_path / "m.swf"
    p.write_text(header + "".join(r + "\n" for r in records))
    return p


def test_a_machine_beyond_the_limit_names_file_and_line(tmp_path):
    p = write(tmp_path, "; Version: 2.2\n; MaxProcs: 1000000000\n", record(1))
    with pytest.raises(WorkloadError, match=r"m\.swf:2: header MaxProcs: 1000000000 .*16,777,216"):
        read_workload(p)


def test_the_limit_itself_is_accepted(tmp_path):
    p = write(tmp_path, f"; MaxNodes: {MAX_MACHINE_UNITS}\n", record(1))
    assert read_swf(p).header.max_nodes == MAX_MACHINE_UNITS


def test_max_nodes_times_processors_per_node_beyond_the_limit(tmp_path):
    p = write(tmp_path, "; MaxNodes: 16777216\n", record(1))
    with pytest.raises(WorkloadError, match=r"m\.swf: .*MaxNodes 16777216 x 4 .*16,777,216"):
        read_workload(p, procs_per_node=4)


def test_a_node_machine_sized_by_a_huge_job_names_the_job(tmp_path):
    p = write(tmp_path, "; Note: no machine size\n", record(1), record(2, procs=10**12))
    with pytest.raises(WorkloadError, match=r"m\.swf:3: job 2 .*16,777,216"):
        read_workload(p, allocation="node")


@pytest.mark.parametrize("value", ["16.5", "1e30", "lots", "1,024", ""])
def test_a_machine_size_that_is_not_a_whole_number_names_the_line(tmp_path, value):
    p = write(tmp_path, f"; MaxNodes: 16\n; MaxProcs: {value}\n", record(1))
    with pytest.raises(WorkloadError, match=r"m\.swf:2: header MaxProcs: .*whole number") as e:
        read_workload(p)
    assert "neither" not in str(e.value)


def test_two_different_max_procs_lines_are_refused(tmp_path):
    p = write(tmp_path, "; MaxProcs: 64\n; Note: x\n; maxprocs: 128\n", record(1))
    with pytest.raises(WorkloadError, match=r"m\.swf:3: header maxprocs: 128 .*line 1 .*64"):
        read_swf(p)


def test_a_repeated_identical_max_procs_line_is_harmless(tmp_path):
    p = write(tmp_path, "; MaxProcs: 64\n; MaxProcs: 64 \n", record(1))
    assert read_workload(p).platform.total_nodes == 64


def test_trailing_words_after_the_number_are_still_read(tmp_path):
    p = write(tmp_path, "; MaxProcs: 64 (batch partition)\n", record(1))
    assert read_workload(p).platform.total_nodes == 64


@pytest.mark.parametrize("status", ["7", "6", "-2", "1.5", "100"])
def test_an_undefined_status_is_a_bad_line(tmp_path, status):
    p = write(tmp_path, "; MaxProcs: 64\n", record(1), record(2, status=status))
    with pytest.raises(WorkloadError, match=r"m\.swf:3: field 11 \(status\): .*0, 1, 5"):
        read_swf(p)
    lenient = read_swf(p, strict=False)
    assert [x.line for x in lenient.report.skipped] == [3] and len(lenient) == 1


@pytest.mark.parametrize("status", ["-1", "0", "1", "2", "3", "4", "5", "5.0"])
def test_every_defined_status_is_read(tmp_path, status):
    p = write(tmp_path, "; MaxProcs: 64\n", record(1, status=status))
    assert len(read_swf(p, drop_status=())) == 1


def test_an_undefined_status_is_not_written(tmp_path):
    data = np.full((1, N_FIELDS), -1.0)
    data[0, COL["status"]] = 7
    with pytest.raises(WorkloadError, match=r"field 11 \(status\)"):
        write_swf(SwfTrace(SwfHeader(), data), tmp_path / "o.swf")
    assert not (tmp_path / "o.swf").exists()
