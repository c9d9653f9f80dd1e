"""Fuzzing the sacct and Batsim readers: damaged input is a ``WorkloadError``, never a crash.

Hypothesis damages the test dump (a field replaced, a delimiter added or removed, bytes
inserted) and a Batsim workload (a value replaced). The readers must return records or raise
:class:`WorkloadError`; in lenient mode every data line is accounted for (a job, a step, a
requeued record, or a listed bad line), and whatever they return loads or is refused with a
:class:`WorkloadError`.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.errors import WorkloadError
from hpcgym.workloads.batsim import read_batsim
from hpcgym.workloads.convert import trace_to_workload
from hpcgym.workloads.slurm import read_sacct
from hpcgym.workloads.swf import COL

FAST = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
    derandomize=True,
)
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "slurm-sample.sacct"
LINES = SAMPLE.read_text().splitlines()
TOKENS = st.one_of(
    st.sampled_from(
        ["", "None", "Unknown", "UNLIMITED", "1-", "-1", "99999999999999999999999999", "1e400",
         "0001-01-01T00:00:00", "9999-12-31T23:59:59", "2024-02-30T00:00:00", "CANCELLED+",
         "25:61:61", "1.5", "nan", "|", "\u2603", "2024-03-30T10:00:00+99:00"]
    ),
    st.text(max_size=12),
)  # fmt: skip


def _accounted(path: Path) -> None:
    trace = read_sacct(path, strict=False)
    report = trace.report
    assert report is not None
    notes = " ".join(report.notes)
    steps = int(m.group(1)) if (m := re.search(r"(\d+) step lines", notes)) else 0
    requeued = int(m.group(1)) if (m := re.search(r"(\d+) lines are earlier", notes)) else 0
    assert report.data_lines == report.kept + steps + requeued + len(report.skipped)
    runs = trace.data[:, COL["run_time"]]
    assert ((runs >= 0) | (runs == -1)).all()
    with contextlib.suppress(WorkloadError):
        trace_to_workload(trace)


@FAST
@given(line=st.integers(1, len(LINES) - 1), field=st.integers(0, 14), token=TOKENS)
def test_a_damaged_field_is_an_error_or_accounted_for(tmp_path_factory, line, field, token) -> None:
    lines = list(LINES)
    fields = lines[line].split("|")
    fields[field % len(fields)] = token
    lines[line] = "|".join(fields)
    path = tmp_path_factory.mktemp("f") / "d.sacct"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        read_sacct(path)
    except WorkloadError as e:
        assert f"{path}:" in str(e)
    _accounted(path)


@FAST
@given(at=st.integers(0, len(SAMPLE.read_bytes())), junk=st.binary(min_size=1, max_size=8))
def test_inserted_bytes_are_an_error_or_accounted_for(tmp_path_factory, at, junk) -> None:
    raw = SAMPLE.read_bytes()
    path = tmp_path_factory.mktemp("b") / "d.sacct"
    path.write_bytes(raw[:at] + junk + raw[at:])
    try:
        read_sacct(path)
    except WorkloadError:
        return  # the header, the encoding, or (strict) a line
    _accounted(path)


DOC = {
    "nb_res": 8,
    "jobs": [
        {"id": 1, "subtime": 0, "walltime": 10, "res": 2, "profile": "a", "swf": {"user_id": 1}},
        {"id": 2, "subtime": 3, "res": 8, "profile": "b"},
    ],
    "profiles": {
        "a": {"type": "delay", "delay": 5},
        "b": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
    },
}
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
PLACES = [
    ("nb_res",), ("jobs", 0, "id"), ("jobs", 0, "subtime"), ("jobs", 0, "walltime"),
    ("jobs", 0, "res"), ("jobs", 0, "profile"), ("jobs", 0, "swf"), ("jobs", 0, "swf", "user_id"),
    ("jobs", 1), ("profiles", "a", "delay"), ("profiles", "b", "cpu"), ("profiles", "b", "com"),
    ("profiles", "a", "type"), ("profiles",), ("jobs",),
]  # fmt: skip


@FAST
@given(place=st.sampled_from(PLACES), value=VALUES)
def test_a_damaged_batsim_value_is_an_error_or_loads(tmp_path_factory, place, value) -> None:
    doc = json.loads(json.dumps(DOC))
    target = doc
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    path = tmp_path_factory.mktemp("j") / "w.json"
    path.write_text(json.dumps(doc))
    try:
        trace = read_batsim(path, speed=1e9)
    except WorkloadError:
        return
    with contextlib.suppress(WorkloadError):
        trace_to_workload(trace)
