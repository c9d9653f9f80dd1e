from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

from hpcgym.workloads import catalog
from hpcgym.workloads.swf import COL, FIELDS, N_FIELDS, read_swf, write_swf


def _raw_text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("ascii", errors="replace")


def test_every_shared_trace_is_listed_and_parses(traces_dir, traces):
    files = sorted(p.name for p in traces_dir.glob("*.swf*"))
    assert files == sorted(traces)


@pytest.mark.parametrize(
    "name",
    [
        "lublin_256.swf.gz",
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "hpc2n.swf.gz",
        "CEA-Curie-2011-sample.swf.gz",
    ],
)
def test_trace_counts_and_header(traces_dir, traces, name):
    path = traces_dir / name
    trace = read_swf(path, drop_status=())
    jobs, machine, notes = traces[name]
    assert len(trace) == jobs
    assert trace.report.data_lines == jobs and trace.report.skipped == ()
    # A complete log holds as many records as its header announces.
    if trace.header.max_records is not None and "excerpt" not in notes:
        assert trace.header.max_records == len(trace)
        assert trace.report.notes == ()
    elif trace.header.max_records is not None:
        assert "MaxRecords" in trace.report.notes[0]
    # The README's machine size appears as MaxNodes or MaxProcs.
    size = int(re.search(r"([\d,]+) (?:nodes|CPUs|cores)", machine).group(1).replace(",", ""))
    assert size in (trace.header.max_nodes, trace.header.max_procs)
    # Every "; Key: value" line of the file reads back by key (first occurrence).
    text = _raw_text(path)
    seen = set()
    for line in text.splitlines():
        m = re.match(r"^;\s?(\w+):\s*(.*?)\s*$", line)
        if m and not line.startswith(";   ") and m.group(1).lower() not in seen:
            seen.add(m.group(1).lower())
            assert trace.header.get(m.group(1)).split("\n")[0] == m.group(2)
    # First and last records equal the file's text.
    data_lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(";")]
    for row, line in ((trace.data[0], data_lines[0]), (trace.data[-1], data_lines[-1])):
        assert row.tolist() == [float(t) for t in line.split()]
    assert text.splitlines()[trace.lines[-1] - 1] == data_lines[-1]


def test_sdsc_header_fields(traces_dir):
    h = read_swf(traces_dir / "SDSC-SP2-1998-4.2-cln.swf.gz").header
    assert h.unix_start_time == 893466664
    assert h.time_zone_string == "US/Pacific"
    assert h.max_nodes == 128 and h.procs_per_node == 1
    assert len(h.get_all("Queue")) == 7
    assert "educational" in h.get("Copyright")


@pytest.mark.parametrize("name", ["KTH-SP2-1996-2.1-cln.swf.gz", "hpc2n.swf.gz"])
def test_round_trip_of_real_traces(traces_dir, tmp_path, name):
    trace = read_swf(traces_dir / name, drop_status=())
    out = write_swf(trace, tmp_path / (name + ".out.gz"))
    again = read_swf(out, drop_status=())
    assert np.array_equal(trace.data, again.data)
    assert again.header.lines == trace.header.lines


SAMPLE = """; Version: 2.2
; MaxNodes: 4
; MaxProcs: 8
1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1
2 10 0 50.5 2 -1 -1 2 60 -1 2 1 1 -1 -1 -1 -1 -1
3 20 0 30 8 -1 -1 8 60 -1 3 1 1 -1 -1 -1 -1 -1
4 30 0 30 1 -1 -1 1 -1 -1 1 2 2 -1 -1 -1 -1 -1
"""


def _write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_status_filter_and_float_times(tmp_path):
    trace = read_swf(_write(tmp_path, SAMPLE))
    assert trace.column("job_id").tolist() == [1.0, 4.0]
    assert dict(trace.report.filtered_status) == {2: 1, 3: 1}
    everything = read_swf(_write(tmp_path, SAMPLE), drop_status=())
    assert everything.column("run_time")[1] == 50.5
    assert everything.lines.tolist() == [4, 5, 6, 7]


def test_gzip_input_detected_by_content(tmp_path):
    p = tmp_path / "plain-name.swf"
    p.write_bytes(gzip.compress(SAMPLE.encode()))
    assert len(read_swf(p, drop_status=())) == 4


BAD_CASES = [
    ("1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1\n", None, "has 17 fields"),
    ("1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1 7\n", None, "has 19 fields"),
    ("1 0 5 1x0 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n", "run_time", "'1x0'"),
    ("1 0 5 100 -4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n", "alloc_procs", "negative"),
    ("1 0 5 -7 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n", "run_time", "negative"),
    ("1 0 5 nan 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n", "run_time", "finite"),
]


@pytest.mark.parametrize(("line", "field", "text"), BAD_CASES)
def test_bad_line_strict_names_file_line_field(tmp_path, line, field, text):
    from hpcgym.errors import WorkloadError

    good = SAMPLE.splitlines(keepends=True)
    p = _write(tmp_path, "".join([*good[:4], line, *good[4:]]), "bad.swf")
    with pytest.raises(WorkloadError) as info:
        read_swf(p)
    msg = str(info.value)
    assert "bad.swf:5" in msg and text in msg and "strict=False" in msg
    if field is not None:
        assert f"field {COL[field] + 1} ({field})" in msg


@pytest.mark.parametrize(("line", "field", "text"), BAD_CASES)
def test_bad_line_lenient_skips_and_reports(tmp_path, line, field, text):
    good = SAMPLE.splitlines(keepends=True)
    p = _write(tmp_path, "".join([*good[:4], line, *good[4:]]), "bad.swf")
    trace = read_swf(p, strict=False, drop_status=())
    assert trace.column("job_id").tolist() == [1.0, 2.0, 3.0, 4.0]
    assert trace.report.data_lines == 5 and trace.report.kept == 4
    (problem,) = trace.report.skipped
    assert problem.line == 5 and problem.field == field and text in problem.message
    assert trace.lines.tolist() == [4, 6, 7, 8]


def test_unreadable_files(tmp_path):
    from hpcgym.errors import WorkloadError

    with pytest.raises(WorkloadError, match=r"cannot read workload file .*missing\.swf"):
        read_swf(tmp_path / "missing.swf")
    broken = tmp_path / "broken.swf.gz"
    broken.write_bytes(gzip.compress(SAMPLE.encode())[:40])
    with pytest.raises(WorkloadError, match=r"broken\.swf\.gz"):
        read_swf(broken)
    binary = tmp_path / "binary.swf"
    binary.write_bytes(
        SAMPLE.encode() + "9 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 é\n".encode()
    )
    with pytest.raises(WorkloadError, match=r"binary\.swf:8.*non-ASCII"):
        read_swf(binary)


def test_empty_file(tmp_path):
    trace = read_swf(_write(tmp_path, "; Version: 2.2\n"))
    assert len(trace) == 0 and trace.data.shape == (0, N_FIELDS)


def test_fields_are_the_18_of_swf():
    assert len(FIELDS) == 18 and FIELDS[10] == "status" and FIELDS[17] == "think_time"


def test_bundled_readme_agrees_with_the_catalog(traces_dir):
    text = (traces_dir / "README.md").read_text()
    for trace in catalog.BUNDLED:
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| `{trace.file}` |"))
        assert f"| {trace.jobs:,} |" in row and f"`{trace.sha256}`" in row
    assert catalog.PWA_CITATION.split(",")[0] in text.replace("\n> ", " ")
