"""Standard Workload Format (SWF 2.2): reading and writing traces with all 18 fields.

A trace is kept as it is in the file: an ``(n, 18)`` float64 array of the data lines, ``-1``
meaning "missing" in every field, plus the header comments and the source line of every row.
Turning rows into jobs is :mod:`hpcgym.workloads.convert`'s work.

Parsing is vectorized (pandas' C tokenizer) for well-formed files; only when something is wrong
does a line-by-line pass run, to name the file, line and field of every problem.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import re
import warnings
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hpcgym.atomic import write_bytes
from hpcgym.errors import WorkloadError
from hpcgym.workloads.header import SwfHeader, check_machine_lines
from hpcgym.workloads.swf_input import read_limited

FIELDS: tuple[str, ...] = (
    "job_id",
    "submit_time",
    "wait_time",
    "run_time",
    "alloc_procs",
    "avg_cpu_time",
    "used_memory",
    "req_procs",
    "req_time",
    "req_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
"""The 18 SWF fields in file order (field ``k`` of the format is ``FIELDS[k - 1]``)."""

N_FIELDS = len(FIELDS)
COL = {name: i for i, name in enumerate(FIELDS)}
"""Column index of each field name."""

PARTIAL_STATUSES: tuple[int, ...] = (2, 3, 4)
"""Status codes of partial-execution records, dropped by default (the job's summary line stays)."""

STATUSES: tuple[int, ...] = (-1, 0, 1, 2, 3, 4, 5)
"""The status codes (field 11) SWF 2.2 defines: 0 failed, 1 completed, 5 cancelled; 2, 3, 4 for
partial-execution records (to be continued, last and completed, last and failed); -1 unknown."""

_STATUS = COL["status"]
_JOB_ID = COL["job_id"]
_PRECEDING = COL["preceding_job"]
_STATUS_RULE = (
    "SWF 2.2 defines 0, 1, 5 (failed, completed, cancelled), 2, 3, 4 (partial executions) "
    "and -1 (unknown)"
)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """One bad data line: where it is and what is wrong with it."""

    line: int
    field: str | None
    message: str

    def describe(self, path: str) -> str:
        """Return ``path:line: field k (name): message``."""
        where = f"{path}:{self.line}"
        if self.field is not None:
            where += f": field {COL[self.field] + 1} ({self.field})"
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class ParseReport:
    """What reading a file did: lines seen, kept, skipped (with reasons) and filtered by status."""

    path: str
    data_lines: int
    kept: int
    skipped: tuple[LineProblem, ...] = ()
    filtered_status: tuple[tuple[int, int], ...] = ()
    """``(status, count)`` of records dropped by the status filter."""
    notes: tuple[str, ...] = ()
    """Remarks on the file as a whole (a header announcing more records than the file has)."""

    def summary(self) -> str:
        """One line for humans."""
        filtered = sum(c for _, c in self.filtered_status)
        return (
            f"{self.path}: {self.data_lines} data lines, {self.kept} kept, "
            f"{len(self.skipped)} bad lines skipped, {filtered} dropped by status filter"
        )


@dataclass(frozen=True, slots=True)
class SwfTrace:
    """The records of one SWF file.

    Attributes:
        header: The header comments.
        data: ``(n, 18)`` float64 array of records, in file order.
        lines: Source line number (1-based) of each record; 0 for records made in memory.
        path: Where the records came from (``"<memory>"`` when made in memory).
        report: What reading did, or ``None`` for records made in memory.
    """

    header: SwfHeader
    data: np.ndarray
    lines: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    path: str = "<memory>"
    report: ParseReport | None = None

    def __post_init__(self) -> None:
        data = np.asarray(self.data, dtype=np.float64).reshape(-1, N_FIELDS)
        object.__setattr__(self, "data", data)
        if len(self.lines) != len(data):
            object.__setattr__(self, "lines", np.zeros(len(data), dtype=np.int64))

    def __len__(self) -> int:
        return len(self.data)

    def column(self, name: str) -> np.ndarray:
        """The values of one field, by name (see :data:`FIELDS`)."""
        return self.data[:, COL[name]]

    def frame(self) -> pd.DataFrame:
        """The records as a DataFrame with one column per field."""
        return pd.DataFrame(self.data, columns=list(FIELDS))


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors put first; it is dropped."""

INT64_LIMIT = 2.0**63
"""Values must stay below this in magnitude: SWF fields are 64-bit integers (or times)."""

EXACT_ID_LIMIT = 2.0**53
"""Job ids (field 1) must stay below this: float64, the records' type, holds every whole number
below 2^53 exactly, and not 2^53 + 1 (it would become 2^53, and two jobs would share an id)."""

CHUNK_BYTES = 1 << 22
"""Bytes parsed at once. A chunk the vectorized pass refuses is split in ``SPLIT`` parts, and
so on down to ``SLOW_BYTES``: a bad line sends only a few hundred lines through the slow pass."""

SPLIT = 16
SLOW_BYTES = 1 << 14

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""An SWF number: decimal digits, optional fraction and exponent (no ``_``, hex or ``inf``)."""

_PLAIN = bytes(range(32, 127)) + b"\t\n"
"""Bytes a clean file holds: printable ASCII, tabs and newlines."""


def _normalize(raw: bytes) -> bytes:
    """Drop a UTF-8 BOM; CR-LF and CR-only line endings become LF (line numbers kept)."""
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


_BLANKS = re.compile(rb"[ \t\n]+")


def _header_lines(raw: bytes) -> tuple[list[str], list[int], int, int]:
    """The leading comment block: its comments (without ';') and their line numbers.

    Also the number of lines the block spans and its length in bytes.
    """
    out: list[str] = []
    numbers: list[int] = []
    n = offset = 0
    while offset < len(raw):
        blank = _BLANKS.match(raw, offset)  # a run of blank lines at once, not one by one
        if blank is not None:
            stop = blank.end()
            if stop == len(raw):  # blank to the end
                n += raw.count(b"\n", offset) + (not raw.endswith(b"\n"))
                offset = stop
                break
            line_start = raw.rfind(b"\n", offset, stop) + 1
            if line_start > offset:
                n += raw.count(b"\n", offset, line_start)
                offset = line_start
        end = raw.find(b"\n", offset)
        end = len(raw) if end < 0 else end + 1
        stripped = raw[offset:end].strip(b" \t\n")  # other control bytes are not blank
        if stripped and not stripped.startswith(b";"):
            break
        n += 1
        offset = end
        if stripped:
            out.append(stripped[1:].rstrip().decode("ascii", errors="replace"))
            numbers.append(n)
    return out, numbers, n, offset


def _data_line_numbers(raw: bytes, n_records: int) -> np.ndarray:
    """0-based numbers of the lines of ``raw`` that hold records (not blank, not a comment)."""
    newlines = raw.count(b"\n")
    body_lines = newlines + (0 if raw.endswith(b"\n") or not raw else 1)
    if body_lines == n_records and raw.find(b";") < 0:
        return np.arange(n_records, dtype=np.int64)
    b = np.frombuffer(raw, dtype=np.uint8)
    nl = np.flatnonzero(b == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(b)]))
    nonblank = np.flatnonzero(b > 32)
    if len(nonblank) == 0:  # only blank lines: legal, and no record
        return np.zeros(0, dtype=np.int64)
    k = np.searchsorted(nonblank, starts)
    first = np.where(k < len(nonblank), nonblank[np.minimum(k, len(nonblank) - 1)], len(b))
    has_text = first < ends
    is_data = has_text & (b[np.minimum(first, len(b) - 1)] != ord(";"))
    return np.flatnonzero(is_data).astype(np.int64)


def _check_values(values: list[float]) -> tuple[int, str] | None:
    """The first field whose value is invalid, with the reason, or ``None``."""
    for k, v in enumerate(values):
        if not math.isfinite(v):
            return k, f"value {v} is not a finite number"
        if k == _STATUS and v not in STATUSES:
            return k, f"status {v:g} is not defined: {_STATUS_RULE}"
        if v < 0 and v != -1:
            return k, f"negative value {v:g}; SWF uses -1 for 'missing' and nothing below 0"
        if v >= INT64_LIMIT:
            return k, f"value {v:g} is beyond the int64 range (SWF values stay below 2^63)"
    return None


def _parse_line(number: int, bline: bytes) -> list[float] | LineProblem | None:
    """The 18 values of one line, its problem, or ``None`` for a blank or comment line."""
    # A comment may hold any byte (names with accents in acknowledgements); data only ASCII.
    data = bline.split(b";", 1)[0]
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        return LineProblem(number, None, f"non-ASCII byte at column {e.start + 1}")
    odd = next((i for i, c in enumerate(text) if (c < " " and c != "\t") or c == "\x7f"), None)
    if odd is not None:
        return LineProblem(number, None, f"control character {text[odd]!r} at column {odd + 1}")
    tokens = text.split()
    if not tokens:
        return None
    if len(tokens) != N_FIELDS:
        return LineProblem(number, None, f"has {len(tokens)} fields; SWF records have 18")
    values: list[float] = []
    for k, tok in enumerate(tokens):
        if _NUMBER.fullmatch(tok) is None:
            if tok.lstrip("+-").lower() in ("nan", "inf", "infinity"):
                return LineProblem(number, FIELDS[k], f"value {tok} is not a finite number")
            return LineProblem(number, FIELDS[k], f"cannot read {tok!r} as a number")
        values.append(float(tok))
    found = _check_values(values)
    if found is not None:
        return LineProblem(number, FIELDS[found[0]], found[1])
    job_id = values[_JOB_ID]
    if job_id != -1 and (job_id >= EXACT_ID_LIMIT or job_id != math.floor(job_id)):
        why = "is not a whole number" if job_id < EXACT_ID_LIMIT else "is 2^53 or more"
        return LineProblem(
            number,
            "job_id",
            f"job id {tokens[_JOB_ID]} {why}; ids must be whole numbers below 2^53 "
            f"({int(EXACT_ID_LIMIT)}), which the reader holds exactly. Renumber the jobs",
        )
    if job_id != -1 and values[_PRECEDING] == job_id:
        return LineProblem(
            number,
            "preceding_job",
            f"job {tokens[_JOB_ID]} names itself as its preceding job; field 17 holds the id "
            "of an earlier job, or -1 for none",
        )
    return values


def _parse_slow(
    raw: bytes, first_line: int, stop_at_problem: bool
) -> tuple[list[list[float]], list[int], list[LineProblem]]:
    """Line-by-line parse that locates problems (``stop_at_problem``: only the first)."""
    rows: list[list[float]] = []
    lines: list[int] = []
    problems: list[LineProblem] = []
    for number, bline in enumerate(raw.split(b"\n"), start=first_line):
        parsed = _parse_line(number, bline)
        if parsed is None:
            continue
        if isinstance(parsed, LineProblem):
            problems.append(parsed)
            if stop_at_problem:
                break
            continue
        rows.append(parsed)
        lines.append(number)
    return rows, lines, problems


def _parse_fast(raw: bytes) -> np.ndarray | None:
    """Vectorized parse; ``None`` when the data is not clean (the slow pass then explains)."""
    if raw.translate(None, _PLAIN):
        return None
    try:
        with warnings.catch_warnings():
            # Lines with more than 18 fields: pandas warns (every line) or refuses (some lines);
            # it must never take the first column as an index and shift the rest.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.BytesIO(raw),
                sep=r"\s+",
                comment=";",
                header=None,
                names=range(N_FIELDS),
                index_col=False,
                quoting=csv.QUOTE_NONE,  # '"1"' is not an SWF number
                engine="c",
                na_filter=False,
                low_memory=False,
            )
    except pd.errors.EmptyDataError:
        return np.zeros((0, N_FIELDS))
    except (ValueError, TypeError, UnicodeDecodeError, pd.errors.ParserError, Warning):
        return None
    if len(frame) == 0:
        return np.zeros((0, N_FIELDS))
    # Only the tokenizer's own numbers count: a text column would go through float(), which
    # reads spellings SWF does not have ("1_000").
    if any(dtype.kind not in "iuf" for dtype in frame.dtypes):
        return None
    data = frame.to_numpy(dtype=np.float64)
    if (
        not np.isfinite(data).all()
        or ((data < 0) & (data != -1)).any()
        or (data >= INT64_LIMIT).any()
        or not np.isin(data[:, _STATUS], STATUSES).all()
    ):
        return None
    ids = data[:, _JOB_ID]
    if ((ids != -1) & ((ids >= EXACT_ID_LIMIT) | (ids != np.floor(ids)))).any():
        return None
    if ((ids != -1) & (data[:, _PRECEDING] == ids)).any():
        return None
    return data


def _chunk_ends(raw: bytes, start: int, stop: int, size: int) -> list[int]:
    """Offsets ending consecutive pieces of whole lines of ``raw[start:stop]``, ~``size`` each."""
    ends: list[int] = []
    pos = start
    while pos < stop:
        cut = raw.find(b"\n", min(pos + size, stop) - 1, stop)
        pos = stop if cut < 0 else cut + 1
        ends.append(pos)
    return ends


class _Body:
    """Records, line numbers and bad lines gathered piece by piece (see ``CHUNK_BYTES``)."""

    def __init__(self, raw: bytes, path: Path, strict: bool) -> None:
        self.raw, self.path, self.strict = raw, path, strict
        self.datas: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self.problems: list[LineProblem] = []

    def parse(self, start: int, stop: int, first_line: int, size: int) -> None:
        """Parse ``raw[start:stop]`` (whole lines, the first numbered ``first_line``)."""
        raw = self.raw
        pos = start
        for end in _chunk_ends(raw, start, stop, size):
            part = raw[pos:end]
            data = _parse_fast(part)
            if data is not None:
                lines = _data_line_numbers(part, len(data)) + first_line
                if len(lines) == len(data):
                    self.datas.append(data)
                    self.lines.append(lines)
                else:
                    data = None
            if data is None and end - pos > SLOW_BYTES and size > SLOW_BYTES:
                self.parse(pos, end, first_line, max(SLOW_BYTES, size // SPLIT))
            elif data is None:
                self._parse_slow(part, first_line)
            first_line += part.count(b"\n")
            pos = end

    def _parse_slow(self, part: bytes, first_line: int) -> None:
        rows, line_list, found = _parse_slow(part, first_line, self.strict)
        if found and self.strict:
            raise WorkloadError(
                found[0].describe(str(self.path))
                + ". Fix the line, or read with strict=False to skip bad lines and list "
                "them in the report."
            )
        self.problems.extend(found)
        self.datas.append(np.array(rows, dtype=np.float64).reshape(-1, N_FIELDS))
        self.lines.append(np.array(line_list, dtype=np.int64))

    def result(self) -> tuple[np.ndarray, np.ndarray, list[LineProblem]]:
        """The records, their line numbers and the bad lines, in file order."""
        if not self.datas:
            return np.zeros((0, N_FIELDS)), np.zeros(0, dtype=np.int64), self.problems
        return np.concatenate(self.datas), np.concatenate(self.lines), self.problems


def read_swf(
    path: str | os.PathLike[str],
    *,
    strict: bool = True,
    drop_status: Collection[int] = PARTIAL_STATUSES,
    max_bytes: int | None = None,
) -> SwfTrace:
    """Read an SWF file (plain or gzip-compressed, detected from its first bytes).

    A UTF-8 byte-order mark is dropped and CR-LF or CR-only line endings are read as newlines.
    The file is read as a stream (a pipe or a device works too), up to a limit.

    Args:
        path: The file.
        strict: Raise on the first bad data line (nothing after it is parsed); with ``False``
            bad lines are skipped and listed in ``trace.report.skipped``.
        drop_status: Records with these status codes (field 11) are dropped and counted in
            ``trace.report.filtered_status``; pass ``()`` to keep every record.
        max_bytes: The most bytes of SWF text (after decompression) to read; ``None``: the
            ``HPCGYM_SWF_MAX_BYTES`` environment variable, else 1 GiB
            (:data:`hpcgym.workloads.swf_input.DEFAULT_MAX_BYTES`).

    Returns:
        The trace, records in file order.

    Raises:
        WorkloadError: The file cannot be read or holds more than ``max_bytes``; a header
            ``MaxNodes``/``MaxProcs`` cannot size a machine; or (``strict``) a data line has a
            wrong field count, a token that is not an SWF number, a non-ASCII or control
            character, a non-finite value, a negative value other than ``-1``, a value of 2^63
            or more, or a status SWF does not define.
            The message names the file, line and field.
    """
    p = Path(path)
    raw = _normalize(read_limited(p, max_bytes))
    header_lines, header_numbers, head_lines, head_bytes = _header_lines(raw)
    check_machine_lines(header_lines, header_numbers, str(p))
    header = SwfHeader.from_lines(header_lines)
    body = _Body(raw, p, strict)
    body.parse(head_bytes, len(raw), head_lines + 1, CHUNK_BYTES)
    data, lines, problems = body.result()
    n_data = len(data) + len(problems)
    status = data[:, COL["status"]]
    drop = np.isin(status, np.asarray(list(drop_status), dtype=np.float64))
    filtered = Counter(int(s) for s in status[drop])
    notes = []
    if header.max_records is not None and header.max_records != n_data:
        notes.append(
            f"the header announces {header.max_records} records (MaxRecords) but the file holds "
            f"{n_data} data lines: an excerpt, or a damaged file"
        )
    report = ParseReport(
        path=str(p),
        data_lines=n_data,
        kept=int((~drop).sum()),
        skipped=tuple(problems),
        filtered_status=tuple(sorted(filtered.items())),
        notes=tuple(notes),
    )
    return SwfTrace(header, data[~drop], lines[~drop], str(p), report)


def _format_column(values: np.ndarray) -> np.ndarray:
    """Integers without a decimal point, other values in their shortest exact form."""
    integral = values == np.round(values)
    as_int = np.where(integral, values, 0).astype(np.int64).astype(str)
    return np.where(integral, as_int, values.astype(str))


def _check_writable(trace: SwfTrace) -> None:
    """Refuse values SWF cannot hold, or that the reader would refuse.

    Non-finite ones, magnitudes of 2^63 or more, status codes SWF does not define, job ids that
    are not whole numbers below 2^53, and a job naming itself as its preceding job.
    """
    bad = ~np.isfinite(trace.data) | (np.abs(trace.data) >= INT64_LIMIT)
    bad[:, _STATUS] |= ~np.isin(trace.data[:, _STATUS], STATUSES)
    ids = trace.data[:, _JOB_ID]
    with np.errstate(invalid="ignore"):
        bad[:, _JOB_ID] |= (ids != -1) & ((ids >= EXACT_ID_LIMIT) | (ids != np.floor(ids)))
        bad[:, _PRECEDING] |= (ids != -1) & (trace.data[:, _PRECEDING] == ids)
    if bad.any():
        i, k = (int(x[0]) for x in np.nonzero(bad))
        source = f" (line {trace.lines[i]} of {trace.path})" if trace.lines[i] else ""
        finite = bool(np.isfinite(trace.data[i, k])) and abs(trace.data[i, k]) < INT64_LIMIT
        rule = (
            _STATUS_RULE
            if k == _STATUS and finite
            else "job ids are whole numbers below 2^53, which readers hold exactly"
            if k == _JOB_ID and finite
            else "a job cannot be its own preceding job"
            if k == _PRECEDING and finite
            else "SWF holds finite values within the int64 range (magnitude below 2^63)"
        )
        raise WorkloadError(
            f"record {i + 1}{source}, job {trace.data[i, 0]:g}: field {k + 1} ({FIELDS[k]}) "
            f"is {float(trace.data[i, k])!r}; {rule}. Fix the value before writing."
        )


def format_swf(trace: SwfTrace) -> str:
    """The SWF text of a trace: header comments, then one line of 18 fields per record.

    Raises:
        WorkloadError: A value is not finite or not below 2^63 in magnitude.
    """
    _check_writable(trace)
    head = [";" + line for line in trace.header.lines]
    columns = [_format_column(trace.data[:, k]) for k in range(N_FIELDS)]
    body = [" ".join(row) for row in zip(*columns, strict=True)] if len(trace) else []
    return "\n".join(head + body) + "\n"


def write_swf(trace: SwfTrace, path: str | os.PathLike[str]) -> Path:
    """Write a trace as SWF; a path ending in ``.gz`` is gzip-compressed (reproducibly).

    Args:
        trace: The records and header to write.
        path: Destination file; its folder must exist.

    Returns:
        The path written.

    Raises:
        WorkloadError: The file cannot be written, or a value is not finite or not below 2^63
            in magnitude (nothing is written then).
    """
    p = Path(path)
    payload = format_swf(trace).encode("ascii", errors="replace")
    if p.suffix == ".gz":
        payload = gzip.compress(payload, mtime=0)
    try:
        write_bytes(p, payload)
    except OSError as e:
        raise WorkloadError(f"cannot write {p}: {e.strerror or e}. Check the folder.") from e
    return p
