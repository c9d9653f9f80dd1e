"""Regressions from the fuzzing round (issue 16): the reader knows its format.

Every case is built from its reproduction: a file that is misread, a value that is converted
silently or an error that names no place.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import read_swf, read_workload, write_swf
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.swf import N_FIELDS, SwfTrace

HEADER = "; MaxNodes: 16\n; MaxProcs: 16\n"


def record(job: int, submit: float = 0.0, run: float = 10.0, procs: int = 2) -> str:
    fields = [job, submit, 0, run, procs, -1, -1, procs, 20, -1, 1, 3, 4, -1, -1, -1, -1, -1]
    return " ".join(f"{v:g}" for v in fields)


def write(tmp_path: Path, text: str | bytes, name: str = "t.swf") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_every_line_with_19_fields_is_refused_not_shifted(tmp_path, traces_dir):
    text = gzip.decompress((traces_dir / "lublin_256.swf.gz").read_bytes()).decode()
    shifted = "\n".join(
        line if line.lstrip().startswith(";") or not line.strip() else line + " 0"
        for line in text.splitlines()
    )
    p = write(tmp_path, shifted, "x.swf")
    with pytest.raises(WorkloadError, match=r"x\.swf:\d+: has 19 fields; SWF records have 18"):
        read_workload(p)
    trace = read_swf(p, strict=False)
    assert len(trace) == 0 and len(trace.report.skipped) == trace.report.data_lines == 10_000


def test_19_fields_on_every_line_of_a_small_file(tmp_path):
    p = write(tmp_path, HEADER + "\n".join(record(i) + " 7" for i in (1, 2, 3)) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:3: has 19 fields"):
        read_swf(p)


def test_integers_beyond_int64_are_refused_on_write(tmp_path):
    data = np.full((1, N_FIELDS), -1.0)
    data[0, :5] = [1, 0, 0, 10, 2.0**63]
    with pytest.raises(WorkloadError, match=r"record 1.*field 5 \(alloc_procs\).*int64"):
        write_swf(SwfTrace(SwfHeader(), data), tmp_path / "o.swf")
    assert not (tmp_path / "o.swf").exists()


def test_values_beyond_int64_are_refused_on_read_with_file_and_line(tmp_path):
    p = write(tmp_path, HEADER + record(1) + "\n" + record(2, procs=10**19) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:4: field 5 \(alloc_procs\).*int64"):
        read_swf(p)


def test_times_past_the_horizon_name_file_and_line(tmp_path):
    p = write(tmp_path, HEADER + record(1) + "\n" + record(2, submit=1e17) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:4: job 2: submit time"):
        read_workload(p)


def test_lenient_skip_report_reaches_the_workload(tmp_path):
    lines = [record(1), record(2, submit=5), " ".join(record(3, submit=9).split()[:10])]
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    w = read_workload(p, strict=False)
    assert len(w) == 2
    assert dict(w.skipped) == {"bad SWF line (unreadable; see the reader's report)": 1}
    params = dict(w.provenance[0].params)
    assert params["records"] == 3 and params["bad_lines"] == [5]


def test_cr_only_line_endings_are_read(tmp_path):
    text = (HEADER + record(1) + "\n" + record(2, submit=5) + "\n").replace("\n", "\r")
    trace = read_swf(write(tmp_path, text))
    assert len(trace) == 2 and list(trace.lines) == [3, 4] and trace.header.max_nodes == 16


def test_crlf_line_endings_are_read(tmp_path):
    text = (HEADER + record(1) + "\n" + record(2, submit=5) + "\n").replace("\n", "\r\n")
    assert len(read_swf(write(tmp_path, text))) == 2


@pytest.mark.parametrize("token", ["1_000", "0x10", "1,000", "\u0661\u0660", "1d5", '"1"'])
def test_non_swf_number_spellings_are_refused(tmp_path, token):
    fields = record(1).split()
    fields[3] = token
    p = write(tmp_path, HEADER + " ".join(fields) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:3: (field 4 \(run_time\)|non-ASCII)"):
        read_swf(p)


def test_a_utf8_bom_keeps_the_header(tmp_path):
    p = write(tmp_path, b"\xef\xbb\xbf" + (HEADER + record(1) + "\n").encode())
    for strict in (True, False):
        w = read_workload(p, strict=strict)
        assert w.platform.total_nodes == 16 and len(w) == 1


def test_duplicate_job_ids_name_the_id_and_lines(tmp_path):
    p = write(tmp_path, HEADER + record(7) + "\n" + record(7, submit=3) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:4: job id 7 .*line 3"):
        read_workload(p)


def test_header_errors_name_the_file(tmp_path):
    p = write(tmp_path, "; MaxNodes: -4\n" + record(1) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf: .*MaxNodes"):
        read_workload(p)


def test_strict_mode_stops_at_the_first_bad_line(tmp_path, monkeypatch):
    import hpcgym.workloads.swf as swf

    seen: list[int] = []
    real = swf._parse_line

    def counting(number, text):
        seen.append(number)
        return real(number, text)

    monkeypatch.setattr(swf, "_parse_line", counting)
    body = [record(i, submit=i) for i in range(1, 200_001)]
    body[10] = "garbage"
    p = write(tmp_path, HEADER + "\n".join(body) + "\n")
    with pytest.raises(WorkloadError, match=r":13: has 1 fields"):
        read_swf(p)
    assert max(seen) == 13


def test_one_bad_last_line_costs_little_in_lenient_mode(tmp_path, monkeypatch):
    """A bad line sends only its own block to the line-by-line parser, not the whole file
    (work counted, not timed)."""
    import hpcgym.workloads.swf as swf

    body = "\n".join(record(i, submit=i) for i in range(1, 200_001))
    good = write(tmp_path, HEADER + body + "\n", "good.swf")
    bad = write(tmp_path, HEADER + body + "\ngarbage\n", "bad.swf")
    real = swf._parse_line
    parsed = [0]

    def counting(*args, **kwargs):
        parsed[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(swf, "_parse_line", counting)
    assert len(read_swf(good, strict=False)) == 200_000 and parsed[0] == 0
    assert len(read_swf(bad, strict=False)) == 200_000
    assert 0 < parsed[0] < 2_000  # of 200,001 lines


def test_cli_reports_the_lines_a_lenient_read_skipped(tmp_path, capsys):
    from hpcgym.cli import main

    lines = [record(1), record(2, submit=5), " ".join(record(3, submit=9).split()[:10])]
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    assert main(["workloads", "show", str(p), "--lenient"]) == 0
    out = capsys.readouterr().out
    assert "1 records skipped" in out
    assert "bad SWF line" in out and "lines 5" in out


def test_fractional_job_ids_are_refused_not_truncated(tmp_path):
    """Found by tests/fuzz/test_swf_fuzz.py: ids 0 and 0.5 both became job 0."""
    p = write(tmp_path, HEADER + record(1) + "\n" + record(2).replace("2", "2.5", 1) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:4: field 1 \(job_id\): job id 2\.5"):
        read_workload(p)


@pytest.mark.parametrize("text", ["\x0b\n", HEADER + "\x0c\n" + record(1) + "\n"])
def test_a_control_character_is_not_a_blank_line(tmp_path, text):
    """Found by tests/fuzz/test_swf_fuzz.py: a lone vertical tab was taken as a blank line."""
    with pytest.raises(WorkloadError, match="control character"):
        read_swf(write(tmp_path, text))


# ------------------------------------------------------------------ Hardening III (issue 39)
def test_job_ids_a_float64_cannot_hold_are_bad_lines(tmp_path):
    """L2: 2^53 and 2^53 + 1 became the same float, then 'duplicate' job ids."""

    def with_id(text: str, submit: float) -> str:  # record() would print 9.0072e+15
        return text + " " + record(7, submit=submit).split(" ", 1)[1]

    big = [record(1), with_id("9007199254740992", 1), with_id("9007199254740993", 2)]
    p = write(tmp_path, HEADER + "\n".join(big) + "\n")
    with pytest.raises(
        WorkloadError, match=r"t\.swf:4: field 1 \(job_id\): job id 9007199254740992 .*2\^53"
    ):
        read_swf(p)
    with pytest.raises(WorkloadError, match=r"t\.swf:4: field 1 \(job_id\)"):
        read_workload(p)
    lenient = read_swf(p, strict=False)
    assert [q.line for q in lenient.report.skipped] == [4, 5]
    assert lenient.report.data_lines == 3 and list(lenient.column("job_id")) == [1.0]
    w = read_workload(p, strict=False)
    assert [j.id for j in w.jobs] == [1]
    assert dict(w.skipped) == {"bad SWF line (unreadable; see the reader's report)": 2}
    # The largest id a float64 holds exactly is read.
    top = write(tmp_path, HEADER + with_id("9007199254740991", 0) + "\n", "top.swf")
    assert [j.id for j in read_workload(top).jobs] == [9007199254740991]


def test_fractional_job_ids_are_bad_lines_in_lenient_mode_too(tmp_path):
    p = write(tmp_path, HEADER + record(1) + "\n" + record(2).replace("2", "2.5", 1) + "\n")
    with pytest.raises(WorkloadError, match=r"t\.swf:4: field 1 \(job_id\): job id 2\.5 is not"):
        read_swf(p)
    w = read_workload(p, strict=False)
    assert [j.id for j in w.jobs] == [1]
    assert dict(w.skipped) == {"bad SWF line (unreadable; see the reader's report)": 1}


def test_a_job_that_names_itself_as_its_preceding_job_is_a_bad_line(tmp_path):
    """L1: field 17 equal to the job's own id was accepted."""

    def preceding(job: int, before: int, submit: float) -> str:
        return " ".join([*record(job, submit=submit).split()[:16], str(before), "-1"])

    lines = [preceding(1, -1, 0), preceding(2, 1, 1), preceding(3, 3, 2)]
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    with pytest.raises(
        WorkloadError, match=r"t\.swf:5: field 17 \(preceding_job\): job 3 names itself"
    ):
        read_swf(p)
    lenient = read_swf(p, strict=False)
    assert [q.line for q in lenient.report.skipped] == [5]
    assert list(lenient.column("job_id")) == [1.0, 2.0]
    w = read_workload(p, strict=False)
    assert [j.id for j in w.jobs] == [1, 2]
    assert dict(w.skipped) == {"bad SWF line (unreadable; see the reader's report)": 1}


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [(0, 2.5, r"whole numbers below 2\^53"), (0, 2.0**53, r"whole numbers below 2\^53"),
     (16, 2.0, "its own preceding job")],
)  # fmt: skip
def test_the_writer_refuses_what_the_reader_refuses(tmp_path, field, value, words):
    """A trace whose job id is fractional or too large, or names itself as its preceding job,
    is not written (the reader would refuse it as a bad line)."""
    from hpcgym.workloads.swf import read_swf, write_swf

    src = tmp_path / "a.swf"
    src.write_text(
        "; MaxProcs: 8\n"
        "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 5 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    trace = read_swf(src)
    trace.data[1, field] = value
    with pytest.raises(WorkloadError, match=words):
        write_swf(trace, tmp_path / "b.swf")
    assert not (tmp_path / "b.swf").exists()
