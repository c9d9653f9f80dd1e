"""Blank lines are legal SWF anywhere, however many (issue "Hardening III", N3).

A piece of the file holding only blank lines (one job, then megabytes of newlines) made the
line numbering index an empty array: ``IndexError`` wherever the file was read.
"""

from __future__ import annotations

import gzip

from hpcgym.workloads import read_swf, read_workload
from hpcgym.workloads import swf as swf_module

HEADER = "; MaxNodes: 4\n; MaxProcs: 4\n"
RECORD = "1 0 0 10 1 -1 -1 1 20 -1 1 3 4 -1 -1 -1 -1 -1\n"


def test_one_job_then_megabytes_of_blank_lines_gzipped(tmp_path):
    blanks = b"\n" * (swf_module.CHUNK_BYTES + 1000)
    p = tmp_path / "blank.swf.gz"
    p.write_bytes(gzip.compress((HEADER + RECORD).encode() + blanks))
    trace = read_swf(p)
    assert list(trace.lines) == [3]
    assert len(read_workload(p)) == 1


def test_a_piece_of_only_blank_lines_between_records(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_module, "CHUNK_BYTES", 64)
    p = tmp_path / "mid.swf"
    p.write_text(HEADER + RECORD + " \t\n" * 100 + RECORD.replace("1", "2", 1))
    trace = read_swf(p)
    assert list(trace.lines) == [3, 104]
    assert list(trace.column("job_id")) == [1, 2]
