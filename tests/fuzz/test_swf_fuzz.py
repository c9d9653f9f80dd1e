"""Fuzzing the SWF reader against an independent oracle (issue 16).

Hypothesis writes SWF text (valid records, records mutated one token or byte at a time, and
garbage) and the reader must agree with a line classifier written here from the format's rules:
in strict mode the exact records or a ``WorkloadError`` naming the file and the first bad line;
in lenient mode the good lines' records and exactly the bad lines skipped. Never a hang, a
shifted column or another exception.
"""

from __future__ import annotations

import gzip
import math
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.errors import WorkloadError
from hpcgym.workloads import read_swf, read_workload

# The default run is derandomized (the same examples every time); the long one explores.
FAST = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    derandomize=True,
)
LONG = settings(
    max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

STATUSES = (-1, 0, 1, 2, 3, 4, 5)
"""Field 11's codes in SWF 2.2: failed, completed, cancelled, partial executions, unknown."""

_SWF_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def oracle(raw: bytes) -> list[tuple[int, list[float] | None]]:
    """``(line number, values or None if bad)`` for every data line, from the format's rules."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    out: list[tuple[int, list[float] | None]] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        data = line.split(b";", 1)[0]  # a comment may hold any byte
        if any(b > 127 for b in data):
            out.append((number, None))
            continue
        text = data.decode("ascii")
        if any((c < " " and c != "\t") or c == "\x7f" for c in text):
            out.append((number, None))
            continue
        tokens = [t for t in re.split(r"[ \t]+", text) if t]
        if not tokens:
            continue
        values = []
        for tok in tokens:
            if not _SWF_NUMBER.fullmatch(tok):
                values = None
                break
            v = float(tok)
            if not math.isfinite(v) or (v < 0 and v != -1) or v >= 2.0**63:
                values = None
                break
            values.append(v)
        if values is not None and len(values) == 18 and values[10] not in STATUSES:
            values = None
        if (
            values is not None
            and len(values) == 18
            and values[0] != -1
            and (values[0] >= 2.0**53 or values[0] != math.floor(values[0]))
        ):
            values = None  # a job id float64 cannot hold exactly (issue 39, L2)
        if values is not None and len(values) == 18 and values[0] != -1 and values[16] == values[0]:
            values = None  # a job that names itself as its preceding job (issue 39, L1)
        out.append((number, values if values is not None and len(values) == 18 else None))
    return out


_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9_-]*)\s*:\s?(.*)")


def header_oracle(raw: bytes) -> int | None:
    """The line of the first header ``MaxNodes``/``MaxProcs`` that cannot size a machine: its
    value does not start with a whole number, exceeds 2^24, or contradicts an earlier one."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    seen: dict[str, int] = {}
    for number, line in enumerate(raw.split(b"\n"), start=1):
        text = line.strip(b" \t")
        if not text:
            continue
        if not text.startswith(b";"):
            return None  # the header ends at the first data line
        comment = text[1:].rstrip().decode("ascii", errors="replace")
        m = _KEY.fullmatch(comment)
        if m is None or comment.startswith(("   ", "\t")):
            continue
        key = m.group(1).lower()
        if key not in ("maxnodes", "maxprocs"):
            continue
        first = (m.group(2).split() or [""])[0]
        if not re.fullmatch(r"[+-]?[0-9]+", first) or int(first) > 2**24:
            return number
        if seen.setdefault(key, int(first)) != int(first):
            return number
    return None


# ------------------------------------------------------------------------------- strategies
swf_numbers = st.one_of(
    st.integers(0, 10**6).map(str),
    st.just("-1"),
    st.floats(0, 1e9, allow_nan=False).map(lambda x: f"{x:.3f}"),
    st.sampled_from(["0", "1e3", "+4", ".5", "5.", "1E+02", "0001", "9223372036854775807"]),
)
odd_tokens = st.sampled_from(
    [
        "1_000",
        "0x10",
        "1,000",
        "1d5",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "1e400",
        "-2",
        "-0.5",
        '"1"',
        "'1'",
        "#",
        "1.5e",
        "e5",
        "--1",
        "+-1",
        "1e",
        ".",
        "\u0661\u0660",
        "\uff11",
        "9223372036854775808",
        "1e19",
        "\x00",
        "\x0c",
        "\x1f",
        "\x7f",
        "\u00a0",
        "1\u20002",
        ";",
        "; 1 2 3",
        "\t",
        "",
    ]
)


@st.composite
def records(draw: st.DrawFn) -> list[str]:
    fields = draw(st.lists(swf_numbers, min_size=18, max_size=18))
    if draw(st.integers(0, 5)):  # mostly a status SWF defines; else any number
        fields[10] = draw(st.sampled_from([*map(str, STATUSES), "1.0", "+5", "05"]))
    return fields


@st.composite
def swf_text(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    if draw(st.booleans()):
        lines += ["; MaxNodes: 16", "; MaxProcs: 64"]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(
            st.sampled_from(["good", "good", "good", "mutate", "fields", "blank", "run", "note"])
        )
        fields = draw(records())
        if kind == "run":  # many blank lines at once: pieces of the file with no record (N3)
            lines += [draw(st.sampled_from(["", " ", "\t"]))] * draw(st.integers(2, 80))
            continue
        if kind == "mutate":
            fields[draw(st.integers(0, 17))] = draw(odd_tokens)
        elif kind == "fields":
            n = draw(st.sampled_from([0, 1, 17, 19, 20, 36]))
            fields = (fields * 3)[:n]
        elif kind == "blank":
            fields = [draw(st.sampled_from(["", "   ", "\t"]))]
        elif kind == "note":
            fields = [*fields, "; trailing", "comment"] if draw(st.booleans()) else ["; note"]
        sep = draw(st.sampled_from([" ", "  ", "\t", " \t "]))
        lines.append(draw(st.sampled_from(["", " ", "\t"])) + sep.join(fields))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = eol.join(lines) + draw(st.sampled_from([eol, ""]))
    raw = text.encode("utf-8")
    if draw(st.booleans()) and raw:
        # One damaged byte somewhere: the kind of noise a bad copy leaves.
        i = draw(st.integers(0, len(raw) - 1))
        raw = raw[:i] + bytes([draw(st.integers(0, 255))]) + raw[i + 1 :]
    if draw(st.integers(0, 9)) == 0:
        raw = b"\xef\xbb\xbf" + raw
    return raw


garbage = st.binary(max_size=400)

machine_values = st.one_of(
    st.integers(-2, 2**25).map(str),
    st.sampled_from(["16.5", "1e30", "1e3", "lots", "1,024", "", "0x10", "+64", "64 (batch)"]),
    st.sampled_from(["16777216", "16777217", "1000000000", str(2**70)]),
)


@st.composite
def machine_headers(draw: st.DrawFn) -> bytes:
    """Headers sizing the machine in every way, right or wrong, repeated or not, then records."""
    lines = ["; Version: 2.2"]
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(["MaxNodes", "MaxProcs", "maxprocs", "MAXNODES", "Note"]))
        lines.append(f";{draw(st.sampled_from([' ', '', '  ']))}{key}: {draw(machine_values)}")
    lines += [" ".join(draw(records())) for _ in range(draw(st.integers(0, 3)))]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------------------- contract
def check_reader(raw: bytes, path: Path, limit) -> None:
    path.write_bytes(raw)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            for strict in (True, False):
                with limit(20), pytest.raises(WorkloadError, match=f"cannot decompress {path}"):
                    read_swf(path, strict=strict)
            return
    bad_header = header_oracle(raw)
    if bad_header is not None:
        where = rf"{re.escape(str(path))}:{bad_header}: header"
        for strict in (True, False):
            with limit(20), pytest.raises(WorkloadError, match=where):
                read_swf(path, strict=strict)
        return
    lines = oracle(raw)
    good = [(n, v) for n, v in lines if v is not None]
    bad = [n for n, v in lines if v is None]
    with limit(20):
        if bad:
            with pytest.raises(WorkloadError) as info:
                read_swf(path, drop_status=())
            assert f"{path}:{bad[0]}:" in str(info.value), (str(info.value), bad)
        else:
            trace = read_swf(path, drop_status=())
            assert list(trace.lines) == [n for n, _ in good]
            np.testing.assert_array_equal(
                trace.data, np.array([v for _, v in good]).reshape(-1, 18)
            )
        lenient = read_swf(path, strict=False, drop_status=())
    assert [p.line for p in lenient.report.skipped] == bad
    assert list(lenient.lines) == [n for n, _ in good]
    np.testing.assert_array_equal(lenient.data, np.array([v for _, v in good]).reshape(-1, 18))
    assert lenient.report.data_lines == len(lines)


def check_workload(raw: bytes, path: Path, limit) -> None:
    """From records to jobs: a workload or a ``WorkloadError`` naming the file."""
    path.write_bytes(raw)
    with limit(20):
        try:
            w = read_workload(path, strict=False)
        except WorkloadError as e:
            assert str(path) in str(e), str(e)
            return
    assert len(w) + sum(c for _, c in w.skipped) == dict(w.provenance[0].params)["records"]


@pytest.fixture(scope="module")
def swf_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "f.swf"


@FAST
@given(raw=swf_text())
def test_reader_agrees_with_the_oracle(raw, swf_path, limit):
    check_reader(raw, swf_path, limit)


@FAST
@given(raw=garbage)
def test_reader_on_garbage(raw, swf_path, limit):
    check_reader(raw, swf_path, limit)


@FAST
@given(raw=swf_text())
def test_records_become_jobs_or_a_named_error(raw, swf_path, limit):
    check_workload(raw, swf_path, limit)


@FAST
@given(raw=swf_text(), chunk=st.integers(1, 96))
def test_reader_agrees_with_the_oracle_in_small_pieces(raw, chunk, swf_path, limit):
    """Pieces of a few bytes: some hold only blank or comment lines, some split nothing."""
    import hpcgym.workloads.swf as swf

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(swf, "CHUNK_BYTES", chunk)
        mp.setattr(swf, "SLOW_BYTES", max(1, chunk // 4))
        check_reader(raw, swf_path, limit)


@FAST
@given(raw=machine_headers())
def test_the_machine_size_is_read_or_refused_with_its_line(raw, swf_path, limit):
    check_reader(raw, swf_path, limit)
    check_workload(raw, swf_path, limit)
    if header_oracle(raw) is None:
        with limit(20):
            try:
                w = read_workload(swf_path, strict=False)
            except WorkloadError:
                return
        assert w.platform.total_nodes * w.platform.clusters[0].cores <= 2**24


@st.composite
def bombs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """``(file, text)``: a unit repeated up to thousands of times, plain or gzipped (one member
    or many), the shape of a decompression bomb or a file of endless blank lines (N4)."""
    unit = draw(st.sampled_from([b"\0", b"\n", b" \t\n", b"; c\n", b"\r\n", RECORD]))
    text = draw(st.sampled_from([b"", b"; MaxProcs: 4\n", RECORD])) + unit * draw(
        st.integers(0, 30_000)
    )
    form = draw(st.sampled_from(["plain", "gzip", "members"]))
    if form == "plain":
        return text, text
    if form == "gzip":
        return gzip.compress(text, mtime=0), text
    cut = draw(st.integers(0, len(text)))
    return gzip.compress(text[:cut], mtime=0) + gzip.compress(text[cut:], mtime=0), text


RECORD = b"1 0 0 10 1 -1 -1 1 20 -1 1 3 4 -1 -1 -1 -1 -1\n"


def read_or_error(path: Path, **kw) -> tuple[str, object]:
    try:
        trace = read_swf(path, strict=False, drop_status=(), **kw)
    except WorkloadError as e:
        return "error", str(e)
    return "trace", (trace.data.tolist(), trace.lines.tolist(), trace.header.lines)


@FAST
@given(bomb=bombs(), data=st.data())
def test_the_size_limit_counts_the_text_read(bomb, data, swf_path, limit):
    """Refused exactly when the (decompressed) text passes the limit; else read as without it."""
    raw, text = bomb
    max_bytes = data.draw(st.integers(1, 2 * len(text) + 2), label="max_bytes")
    swf_path.write_bytes(raw)
    with limit(20):
        if len(text) > max_bytes:
            with pytest.raises(WorkloadError, match=f"more than {max_bytes:,} bytes"):
                read_swf(swf_path, strict=False, max_bytes=max_bytes)
        else:
            got = read_or_error(swf_path, max_bytes=max_bytes)
            assert got == read_or_error(swf_path)


@pytest.mark.slow
@LONG
@given(raw=st.one_of(swf_text(), garbage))
def test_reader_agrees_with_the_oracle_long(raw, swf_path, limit):
    check_reader(raw, swf_path, limit)
    check_workload(raw, swf_path, limit)
