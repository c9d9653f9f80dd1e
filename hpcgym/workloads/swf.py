"""Standard Workload Format (SWF 2.2): reading and writing traces with all 18 fields.

A trace is kept as it is in the file: an ``(n, 18)`` float64 array of the data lines, ``-1``
meaning "missing" in every field, plus the header comments and the source line of every row.
Turning rows into jobs is :mod:`hpcgym.workloads.convert`'s work.

Parsing is vectorized (pandas' C tokenizer) for well-formed files; only when something is wrong
does a line-by-line pass run, to name the file, line and field of every problem.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import zlib
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hpcgym.atomic import write_bytes
from hpcgym.errors import WorkloadError
from hpcgym.workloads.header import SwfHeader

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


def _read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise WorkloadError(
            f"cannot read workload file {path}: {e.strerror or e}. Check the path and its "
            "permissions (named sets look in $HPCGYM_WORKLOADS)."
        ) from e
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise WorkloadError(
                f"cannot decompress {path}: {e}. The gzip file is damaged; fetch it again."
            ) from e
    return raw


def _header_lines(raw: bytes) -> tuple[list[str], int, int]:
    """The leading comment block (without ';'), the lines it spans and its length in bytes."""
    out: list[str] = []
    n = offset = 0
    while offset < len(raw):
        end = raw.find(b"\n", offset)
        end = len(raw) if end < 0 else end + 1
        stripped = raw[offset:end].strip()
        if stripped and not stripped.startswith(b";"):
            break
        n += 1
        offset = end
        if stripped:
            out.append(stripped[1:].rstrip().decode("ascii", errors="replace"))
    return out, n, offset


def _data_line_numbers(raw: bytes, n_records: int, head_lines: int, head_bytes: int) -> np.ndarray:
    """1-based numbers of the lines that hold records (not blank, not a ';' comment)."""
    newlines = raw.count(b"\n", head_bytes)
    body_lines = newlines + (0 if raw.endswith(b"\n") or len(raw) == head_bytes else 1)
    if body_lines == n_records and raw.find(b";", head_bytes) < 0:
        return np.arange(head_lines + 1, head_lines + 1 + n_records, dtype=np.int64)
    b = np.frombuffer(raw, dtype=np.uint8)
    nl = np.flatnonzero(b == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(b)]))
    nonblank = np.flatnonzero(b > 32)
    k = np.searchsorted(nonblank, starts)
    first = np.where(k < len(nonblank), nonblank[np.minimum(k, len(nonblank) - 1)], len(b))
    has_text = first < ends
    is_data = has_text & (b[np.minimum(first, max(len(b) - 1, 0))] != ord(";"))
    return np.flatnonzero(is_data).astype(np.int64) + 1


def _check_values(values: list[float]) -> tuple[int, str] | None:
    """The first field whose value is invalid, with the reason, or ``None``."""
    for k, v in enumerate(values):
        if not math.isfinite(v):
            return k, f"value {v} is not a finite number"
        if v < 0 and v != -1:
            return k, f"negative value {v:g}; SWF uses -1 for 'missing' and nothing below 0"
    return None


def _parse_slow(raw: bytes) -> tuple[list[list[float]], list[int], list[LineProblem]]:
    """Line-by-line parse that locates every problem."""
    rows: list[list[float]] = []
    lines: list[int] = []
    problems: list[LineProblem] = []
    for number, bline in enumerate(raw.split(b"\n"), start=1):
        try:
            text = bline.decode("ascii")
        except UnicodeDecodeError as e:
            problems.append(LineProblem(number, None, f"non-ASCII byte at column {e.start + 1}"))
            continue
        text = text.split(";", 1)[0].strip()
        if not text:
            continue
        tokens = text.split()
        if len(tokens) != N_FIELDS:
            problems.append(
                LineProblem(number, None, f"has {len(tokens)} fields; SWF records have 18")
            )
            continue
        values: list[float] = []
        bad: LineProblem | None = None
        for k, tok in enumerate(tokens):
            try:
                values.append(float(tok))
            except ValueError:
                bad = LineProblem(number, FIELDS[k], f"cannot read {tok!r} as a number")
                break
        if bad is None:
            found = _check_values(values)
            if found is not None:
                bad = LineProblem(number, FIELDS[found[0]], found[1])
        if bad is not None:
            problems.append(bad)
            continue
        rows.append(values)
        lines.append(number)
    return rows, lines, problems


def _parse_fast(raw: bytes) -> np.ndarray | None:
    """Vectorized parse; ``None`` when the data is not clean (the slow pass then explains)."""
    try:
        frame = pd.read_csv(
            io.BytesIO(raw),
            sep=r"\s+",
            comment=";",
            header=None,
            names=range(N_FIELDS),
            engine="c",
            na_filter=False,
            low_memory=False,
        )
        data = frame.to_numpy(dtype=np.float64)
    except pd.errors.EmptyDataError:
        return np.zeros((0, N_FIELDS))
    except (ValueError, TypeError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    if not np.isfinite(data).all() or ((data < 0) & (data != -1)).any():
        return None
    return data


def read_swf(
    path: str | os.PathLike[str],
    *,
    strict: bool = True,
    drop_status: Collection[int] = PARTIAL_STATUSES,
) -> SwfTrace:
    """Read an SWF file (plain or gzip-compressed, detected from its first bytes).

    Args:
        path: The file.
        strict: Raise on the first bad data line; with ``False`` bad lines are skipped and
            listed in ``trace.report.skipped``.
        drop_status: Records with these status codes (field 11) are dropped and counted in
            ``trace.report.filtered_status``; pass ``()`` to keep every record.

    Returns:
        The trace, records in file order.

    Raises:
        WorkloadError: The file cannot be read, or (``strict``) a data line has a wrong field
            count, a token that is not a number, or a negative value other than ``-1``. The
            message names the file, line and field.
    """
    p = Path(path)
    raw = _read_bytes(p)
    header_lines, head_lines, head_bytes = _header_lines(raw)
    header = SwfHeader.from_lines(header_lines)
    data = _parse_fast(raw)
    problems: list[LineProblem] = []
    if data is not None:
        lines = _data_line_numbers(raw, len(data), head_lines, head_bytes)
        if len(lines) != len(data):
            data = None
    if data is None:
        rows, line_list, problems = _parse_slow(raw)
        if problems and strict:
            raise WorkloadError(
                problems[0].describe(str(p))
                + ". Fix the line, or read with strict=False to skip bad lines and list them in "
                "the report."
            )
        data = np.array(rows, dtype=np.float64).reshape(-1, N_FIELDS)
        lines = np.array(line_list, dtype=np.int64)
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


def format_swf(trace: SwfTrace) -> str:
    """The SWF text of a trace: header comments, then one line of 18 fields per record."""
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
        WorkloadError: The file cannot be written.
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
