r"""Slurm accounting dumps (``sacct --parsable2``) read as SWF records.

Make the dump with (a dump may hold more columns, in any order; the ones read are
:data:`SACCT_FORMAT`)::

    F=JobID,JobIDRaw,User,Group,Partition,State,Submit,Start,End,Elapsed,Timelimit
    F=$F,NNodes,NCPUS,ReqCPUS,ReqNodes,TotalCPU
    TZ=UTC sacct --allusers --duplicates --parsable2 --format=$F \
        --starttime=2024-01-01 --endtime=2024-02-01 > jobs.sacct

Required: ``JobID``, ``State``, ``Submit``, ``Start``, ``End`` (or ``Elapsed``), and the size
in the unit read: ``NCPUS`` (or ``AllocCPUS``) for CPUs, ``NNodes`` (or ``AllocNodes``) for
nodes. The first line must be sacct's header; a dump made with ``--noheader`` is read when its
columns are named (``fields=``). ``--parsable`` (a delimiter after the last field too) and
``--delimiter`` are read as well.

The choices, where Slurm leaves room (``docs/workloads.md`` has the same list):

- **Jobs, steps, arrays**: a line whose JobID has a ``.`` (``123.batch``, ``123.extern``,
  ``123.0``) is a step, part of its job, and not a job; steps are counted in the notes. Every
  array task (``123_4``) and every heterogeneous component (``123+1``) is a job. A pending
  array's line (``123_[5-9]``) stands for tasks that had not started: one record, counted as
  not finished.
- **Job numbers**: ``JobIDRaw`` when the dump has it (Slurm's own number, unique per array
  task); else the JobID when every job's is a plain number; else the jobs are numbered 1, 2,
  ... in file order (the header says so).
- **States** (:data:`~hpcgym.workloads.slurm_values.FINAL_STATES`): COMPLETED is status 1,
  CANCELLED 5, TIMEOUT, FAILED, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE and PREEMPTED 0.
  A job in one of them with a start time ran: its run time is kept. One without (or with no
  CPU allocated, ``NCPUS`` 0, which older Slurm versions print with a start time) never ran
  (cancelled while it waited, mostly): it stays in the SWF with run time -1, so a simulation
  skips it and counts it; the notes count these jobs by state. A job still PENDING, RUNNING or
  SUSPENDED when the dump was taken has status -1 and run time -1 too. A REQUEUED or REVOKED
  line is an earlier record of a job whose last record is another line: not a record; counted.
- **Run time**: ``Elapsed`` when the dump has it (Slurm's wall-clock run time, less any time
  the job spent suspended), else ``End - Start``.
- **Size**: ``unit="cpu"`` (default) makes SWF's processors the job's CPUs (``NCPUS``);
  ``unit="node"`` makes them its nodes (``NNodes``), for a machine scheduled by whole nodes.
  The requested size (field 8) is ``ReqCPUS`` or ``ReqNodes`` when given.
- **Machine**: sacct does not say how large the machine is. ``machine=N`` gives it (in the
  unit read); by default ``MaxProcs`` is the most CPUs (or nodes) the dump's jobs held at once,
  at least the largest job: a lower bound the header marks as such.
- **Requested time**: ``Timelimit`` (or ``TimelimitRaw``, minutes) in any form Slurm writes a
  limit in (``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``). ``UNLIMITED`` and
  ``Partition_Limit`` (the partition's limit, which the dump does not hold) are -1 and counted.
- **Time zones**: sacct prints local times without a zone. They are read in ``timezone``
  (default UTC: dump with ``TZ=UTC sacct ...``, or name the zone sacct ran in, e.g.
  ``Europe/Amsterdam``, so daylight-saving changes are right). A time with an offset is read
  with its offset. Submit times count from the first submission; the header gives
  ``UnixStartTime`` and ``TimeZoneString``.
- **Users, groups, partitions**: ``UID``/``GID`` when given, else ``User``/``Group`` names
  numbered 1, 2, ... in order of first appearance; partitions likewise (listed in the header).
  CPU time (field 6) is ``TotalCPU`` per CPU; memory fields are -1.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.workloads import slurm_values as sv
from hpcgym.workloads.header import MAX_MACHINE_UNITS, SwfHeader
from hpcgym.workloads.swf import COL, N_FIELDS, LineProblem, ParseReport, SwfTrace
from hpcgym.workloads.swf_input import read_limited

SACCT_FORMAT = (
    "JobID,JobIDRaw,User,Group,Partition,State,Submit,Start,End,Elapsed,Timelimit,"
    "NNodes,NCPUS,ReqCPUS,ReqNodes,TotalCPU"
)
"""The ``sacct --format`` fields hpcgym reads (a dump may hold more; they are ignored)."""

SACCT_COMMAND = (
    f"TZ=UTC sacct --allusers --duplicates --parsable2 --format={SACCT_FORMAT} "
    "--starttime=2024-01-01 --endtime=2024-02-01 > jobs.sacct"
)
"""A command that makes a dump (change the dates)."""

UNITS = ("cpu", "node")

_ALIASES: dict[str, tuple[str, ...]] = {
    "jobid": ("jobid",),
    "jobidraw": ("jobidraw",),
    "state": ("state",),
    "submit": ("submit",),
    "start": ("start",),
    "end": ("end",),
    "elapsed": ("elapsed",),
    "elapsedraw": ("elapsedraw",),
    "timelimit": ("timelimit",),
    "timelimitraw": ("timelimitraw",),
    "cpus": ("ncpus", "alloccpus"),
    "nodes": ("nnodes", "allocnodes"),
    "reqcpus": ("reqcpus",),
    "reqnodes": ("reqnodes",),
    "uid": ("uid",),
    "user": ("user",),
    "gid": ("gid",),
    "group": ("group",),
    "partition": ("partition",),
    "totalcpu": ("totalcpu",),
}
"""Each column read, by the header names sacct gives it (matched case-insensitively)."""

NOT_A_RECORD = ("REQUEUED", "REVOKED")
"""States of a line that is not a job's last record (the job's last record is another line)."""


@dataclass(frozen=True, slots=True)
class _Job:
    """One job line of the dump, read."""

    line: int
    job_id: str
    raw_id: str | None
    state: str
    submit: float
    start: float | None
    run: float | None
    limit: float | None
    limit_word: str
    size: float | None
    requested: float | None
    total_cpu: float | None
    user: str
    group: str
    partition: str


def _columns(names: Sequence[str], where: str, unit: str) -> dict[str, int]:
    """Column index of each column read, from the header names; an error if some are missing.

    ``where`` names the header line (``path:1``), or the columns given (``path: --fields``).
    """
    lower = [n.strip().lower() for n in names]
    cols: dict[str, int] = {}
    for key, aliases in _ALIASES.items():
        found = next((lower.index(a) for a in aliases if a in lower), None)
        if found is not None:
            cols[key] = found
    size = "cpus" if unit == "cpu" else "nodes"
    needed = ["jobid", "state", "submit", "start", size]
    missing = [k for k in needed if k not in cols]
    if "end" not in cols and "elapsed" not in cols and "elapsedraw" not in cols:
        missing.append("end")
    if missing:
        spell = {"jobid": "JobID", "cpus": "NCPUS", "nodes": "NNodes"}
        names_missing = ", ".join(spell.get(k, k.capitalize()) for k in missing)
        raise WorkloadError(
            f"{where}: the dump has no {names_missing} column (it has "
            f"{', '.join(n.strip() for n in names) or 'none'}); dump with "
            f"sacct --parsable2 --format={SACCT_FORMAT}"
        )
    return cols


class _LineError(ValueError):
    """A bad value in one column of one line."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(f"column {column}: {message}")


def _value(fields: list[str], cols: dict[str, int], key: str) -> str:
    k = cols.get(key)
    return fields[k] if k is not None else ""


def _job(number: int, fields: list[str], cols: dict[str, int], tz: tzinfo, unit: str) -> _Job:
    """The job on one (non-step) line, or a :class:`_LineError`."""

    def when(key: str, name: str) -> float | None:
        try:
            return sv.timestamp(_value(fields, cols, key), tz)
        except ValueError as e:
            raise _LineError(name, str(e)) from None

    def dur(key: str, name: str, parse_limit: bool = False, minutes: bool = False) -> float | None:
        text = _value(fields, cols, key)
        try:
            return sv.time_limit(text, minutes) if parse_limit else sv.duration(text)
        except ValueError as e:
            raise _LineError(name, str(e)) from None

    def num(key: str, name: str) -> float | None:
        try:
            value = sv.count(_value(fields, cols, key))
        except ValueError as e:
            raise _LineError(name, str(e)) from None
        if value is not None and value > MAX_MACHINE_UNITS:
            raise _LineError(
                name,
                f"{value:.0f} is more than the {MAX_MACHINE_UNITS:,} CPUs or nodes hpcgym "
                "simulates",
            )
        return value

    try:
        state = sv.state_word(_value(fields, cols, "state"))
    except ValueError as e:
        raise _LineError("State", str(e)) from None
    submit = when("submit", "Submit")
    if submit is None:
        raise _LineError("Submit", "the submission time is missing; every job has one")
    start = when("start", "Start")
    end = when("end", "End") if "end" in cols else None
    if "elapsedraw" in cols:
        elapsed = dur("elapsedraw", "ElapsedRaw")
    elif "elapsed" in cols:
        elapsed = dur("elapsed", "Elapsed")
    else:
        elapsed = None
    if start is not None and start < submit:
        raise _LineError("Start", "the job starts before it was submitted")
    if start is not None and end is not None and end < start:
        raise _LineError("End", "the job ends before it starts")
    if start is not None and "cpus" in cols and num("cpus", "NCPUS") == 0:
        start = None  # no CPU allocated: it never ran (older Slurm gives such jobs a Start)
    run: float | None = None
    if state in sv.FINAL_STATES and start is not None:
        run = elapsed if elapsed is not None else (end - start if end is not None else None)
        if run is None:
            raise _LineError("End", f"a {state} job that started has no end time nor Elapsed")
    if "timelimitraw" in cols:
        limit_word = _value(fields, cols, "timelimitraw").strip()
        limit = dur("timelimitraw", "TimelimitRaw", parse_limit=True, minutes=True)
    else:
        limit_word = _value(fields, cols, "timelimit").strip()
        limit = dur("timelimit", "Timelimit", parse_limit=True)
    size_key, req_key = ("cpus", "reqcpus") if unit == "cpu" else ("nodes", "reqnodes")
    size_name = "NCPUS" if unit == "cpu" else "NNodes"
    return _Job(
        line=number,
        job_id=_value(fields, cols, "jobid").strip(),
        raw_id=_value(fields, cols, "jobidraw").strip() if "jobidraw" in cols else None,
        state=state,
        submit=submit,
        start=start,
        run=run,
        limit=limit,
        limit_word=limit_word,
        size=num(size_key, size_name),
        requested=num(req_key, "ReqCPUS" if unit == "cpu" else "ReqNodes"),
        total_cpu=dur("totalcpu", "TotalCPU") if "totalcpu" in cols else None,
        user=_value(fields, cols, "uid" if "uid" in cols else "user").strip(),
        group=_value(fields, cols, "gid" if "gid" in cols else "group").strip(),
        partition=_value(fields, cols, "partition").strip(),
    )


def _is_step(job_id: str) -> bool:
    return "." in job_id


def _split(text: str, delimiter: str, n: int, trailing: bool) -> list[str] | None:
    """The fields of one line, or ``None`` if it does not have ``n`` of them."""
    fields = text.split(delimiter)
    if trailing and len(fields) == n + 1 and fields[-1] == "":
        fields.pop()
    return fields if len(fields) == n else None


def _numbering(values: list[str]) -> tuple[list[float], list[str]]:
    """Numbers for names (1, 2, ... by first appearance; -1 for empty) and the names in order."""
    order: dict[str, int] = {}
    out: list[float] = []
    for v in values:
        if not v:
            out.append(-1.0)
            continue
        out.append(float(order.setdefault(v, len(order) + 1)))
    return out, list(order)


def _ids(jobs: list[_Job]) -> tuple[list[float], str]:
    """Job numbers (see the module doc) and how they were chosen."""
    if jobs and all(j.raw_id is not None and j.raw_id.isdigit() for j in jobs):
        return [float(str(j.raw_id)) for j in jobs], "JobIDRaw"
    if all(j.job_id.isdigit() for j in jobs):
        return [float(j.job_id) for j in jobs], "JobID"
    return [float(i + 1) for i in range(len(jobs))], "file order"


def _peak(jobs: list[_Job], sizes: np.ndarray) -> int:
    """The most units the jobs that ran held at once (at least the largest job)."""
    events: list[tuple[float, int, float]] = []
    for j, size in zip(jobs, sizes, strict=True):
        if j.start is not None and j.run is not None and size > 0:
            events.append((j.start, 1, float(size)))
            events.append((j.start + j.run, 0, -float(size)))  # ends before starts at a tie
    events.sort()
    held = peak = 0.0
    for _, _, delta in events:
        held += delta
        peak = max(peak, held)
    largest = float(sizes.max()) if len(sizes) else 0.0
    return int(max(peak, largest, 1.0))


def _notes(jobs: list[_Job], steps: int, requeued: Counter[str], id_rule: str) -> list[str]:
    notes: list[str] = []
    if steps:
        notes.append(f"{steps} step lines (JobID with a '.') are parts of their jobs, not jobs")
    never = Counter(j.state for j in jobs if j.state in sv.FINAL_STATES and j.start is None)
    if never:
        by = ", ".join(f"{s} {c}" for s, c in sorted(never.items()))
        notes.append(
            f"{sum(never.values())} jobs ended before they started ({by}); kept with run time "
            "-1, so simulations skip them"
        )
    waiting = Counter(j.state for j in jobs if j.state in sv.UNFINISHED_STATES)
    if waiting:
        by = ", ".join(f"{s} {c}" for s, c in sorted(waiting.items()))
        notes.append(
            f"{sum(waiting.values())} jobs had not ended when the dump was taken ({by}); kept "
            "with status -1 and run time -1, so simulations skip them"
        )
    if requeued:
        by = ", ".join(f"{s} {c}" for s, c in sorted(requeued.items()))
        notes.append(
            f"{sum(requeued.values())} lines are earlier records of requeued jobs ({by}); not "
            "records, the job's last line is"
        )
    limits = Counter(j.limit_word for j in jobs if j.limit is None and j.limit_word)
    for word, c in sorted(limits.items()):
        notes.append(f"{c} jobs have Timelimit {word}; requested time -1 (unknown)")
    if id_rule == "file order":
        notes.append(
            "job numbers count the jobs in file order (the dump has array tasks or other "
            "non-numeric JobIDs and no JobIDRaw column)"
        )
    return notes


def _records(jobs: list[_Job], ids: list[float], unit: str) -> tuple[np.ndarray, float]:
    """The SWF records of the jobs, and the epoch of time 0 (the first submission)."""
    data = np.full((len(jobs), N_FIELDS), -1.0)
    t0 = min((j.submit for j in jobs), default=0.0)
    users, _ = _numbering([j.user for j in jobs])
    groups, _ = _numbering([j.group for j in jobs])
    parts, _ = _numbering([j.partition for j in jobs])
    for i, j in enumerate(jobs):
        row = data[i]
        row[COL["job_id"]] = ids[i]
        row[COL["submit_time"]] = j.submit - t0
        ran = j.start is not None and j.run is not None
        if j.start is not None and j.run is not None:
            row[COL["wait_time"]] = j.start - j.submit
            row[COL["run_time"]] = j.run
        size = j.size if j.size is not None and j.size > 0 else None
        if ran and size is not None:
            row[COL["alloc_procs"]] = size
            if j.total_cpu is not None:
                row[COL["avg_cpu_time"]] = j.total_cpu / size
        requested = j.requested if j.requested is not None and j.requested > 0 else size
        if requested is not None:
            row[COL["req_procs"]] = requested
        if j.limit is not None:
            row[COL["req_time"]] = j.limit
        row[COL["status"]] = sv.FINAL_STATES.get(j.state, -1)
        row[COL["user_id"]] = float(j.user) if j.user.isdigit() else users[i]
        row[COL["group_id"]] = float(j.group) if j.group.isdigit() else groups[i]
        row[COL["partition"]] = parts[i]
    return data, t0


def _header(
    path: Path,
    jobs: list[_Job],
    machine: int,
    machine_given: bool,
    unit: str,
    t0: float,
    tz_name: str,
    notes: list[str],
) -> SwfHeader:
    def utc(t: float) -> str:
        return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    what = "CPUs" if unit == "cpu" else "whole nodes"
    how = "given" if machine_given else "the most the dump's jobs held at once, a lower bound"
    _, partitions = _numbering([j.partition for j in jobs])
    lines = [
        " Version: 2.2",
        " Computer: a Slurm cluster",
        f" Installation: sacct dump {path.name}",
        f" Conversion: hpcgym, from sacct --parsable2 output; processors are {what}",
        f" MaxJobs: {len(jobs)}",
        f" MaxRecords: {len(jobs)}",
        f" UnixStartTime: {int(t0)}",
        f" TimeZoneString: {tz_name}",
        f" StartTime: {utc(t0)}",
        f" MaxProcs: {machine} ({what}; {how})",
    ]
    if unit == "node":
        lines.append(f" MaxNodes: {machine}")
    lines += [f" Partition: {k} {name}" for k, name in enumerate(partitions, start=1)]
    lines += [f" Note: {n}" for n in notes]
    return SwfHeader(tuple(lines))


def _decode(raw: bytes, path: Path) -> list[str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise WorkloadError(
            f"{path}:{line}: byte {raw[e.start]:#x} is not UTF-8; sacct writes UTF-8 "
            "(or ASCII). Re-run sacct, or fix the line."
        ) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _header_line(
    lines: list[str], delimiter: str, fields: Sequence[str] | None, path: Path
) -> tuple[list[str], int, bool]:
    """Column names, the number of the first data line's predecessor, and the trailing flag."""
    first = next((i for i, t in enumerate(lines) if t.strip()), None)
    if first is None:
        raise WorkloadError(f"{path}: the dump is empty; dump with {SACCT_COMMAND}")
    head = lines[first]
    names = head.split(delimiter)
    looks_like_header = any(n.strip().lower() in ("jobid", "jobidraw") for n in names)
    if first + 1 < len(lines) and lines[first + 1].lstrip().startswith("-----"):
        raise WorkloadError(
            f"{path}:{first + 2}: this is sacct's table output, not --parsable2 output; dump "
            f"with {SACCT_COMMAND}"
        )
    if fields is not None:
        given = list(fields)
        if looks_like_header:
            raise WorkloadError(
                f"{path}:{first + 1}: the dump has a header line; leave the column names out "
                "(they are read from it)"
            )
        return given, first, _trailing(lines[first:], delimiter, len(given))
    if not looks_like_header:
        raise WorkloadError(
            f"{path}:{first + 1}: the first line is not sacct's header (no JobID column; "
            f"delimiter {delimiter!r}); dump without --noheader, or name the columns "
            "(fields=..., --fields JobID,State,...)"
        )
    trailing = len(names) > 1 and names[-1] == ""
    if trailing:
        names.pop()
    return names, first + 1, trailing


def _trailing(lines: list[str], delimiter: str, n: int) -> bool:
    """Whether the data lines end with a delimiter (``sacct --parsable``)."""
    first = next((t for t in lines if t.strip()), "")
    return len(first.split(delimiter)) == n + 1 and first.endswith(delimiter)


def read_sacct(
    path: str | os.PathLike[str],
    *,
    strict: bool = True,
    unit: str = "cpu",
    machine: int | None = None,
    timezone_name: str = "UTC",
    delimiter: str = "|",
    fields: Sequence[str] | None = None,
    max_bytes: int | None = None,
) -> SwfTrace:
    """Read a ``sacct --parsable2`` dump as SWF records (the module doc lists every choice).

    Args:
        path: The dump (plain or gzip).
        strict: Raise on the first bad line; with ``False`` bad lines are skipped and listed in
            ``trace.report.skipped``.
        unit: ``"cpu"``: SWF processors are CPUs (``NCPUS``); ``"node"``: whole nodes.
        machine: The machine's size in that unit; default: the most the jobs held at once.
        timezone_name: The zone sacct's local times are in (default ``"UTC"``).
        delimiter: sacct's ``--delimiter`` (default ``|``).
        fields: The column names of a dump made with ``--noheader`` (sacct's ``--format``).
        max_bytes: The most bytes to read (see :func:`hpcgym.workloads.swf.read_swf`).

    Returns:
        One record per job (not per step), in file order; ``trace.report.notes`` counts the
        steps, the jobs that never ran or had not ended, and the limits without a number; the
        header holds the same notes, the machine size, ``UnixStartTime`` and the time zone.

    Raises:
        WorkloadError: A missing column, or (``strict``) a bad line, named by file and line.
    """
    if unit not in UNITS:
        raise WorkloadError(f"unit must be 'cpu' or 'node', got {unit!r}")
    if machine is not None and (
        isinstance(machine, bool) or machine < 1 or machine > MAX_MACHINE_UNITS
    ):
        raise WorkloadError(
            f"the machine size must be a whole number from 1 to {MAX_MACHINE_UNITS:,} (the "
            f"largest hpcgym simulates), got {machine!r}"
        )
    if not delimiter:
        raise WorkloadError("the delimiter must not be empty (sacct's default is '|')")
    tz = sv.zone(timezone_name)
    p = Path(path)
    lines = _decode(read_limited(p, max_bytes), p)
    names, body_start, trailing = _header_line(lines, delimiter, fields, p)
    where = f"{p}: the columns given (--fields)" if fields is not None else f"{p}:{body_start}"
    cols = _columns(names, where, unit)
    jobs: list[_Job] = []
    problems: list[LineProblem] = []
    steps = data_lines = 0
    requeued: Counter[str] = Counter()
    for number, text in enumerate(lines[body_start:], start=body_start + 1):
        if not text.strip():
            continue
        data_lines += 1
        values = _split(text, delimiter, len(names), trailing)
        problem: LineProblem | None = None
        if values is None:
            n = len(text.split(delimiter))
            problem = LineProblem(
                number,
                None,
                f"has {n} fields; the header names {len(names)} (delimiter {delimiter!r}: a "
                "field holding it, or a cut line?)",
            )
        elif _is_step(_value(values, cols, "jobid")):
            steps += 1
            continue
        else:
            try:
                job = _job(number, values, cols, tz, unit)
            except _LineError as e:
                problem = LineProblem(number, None, str(e))
            else:
                if job.state in NOT_A_RECORD:
                    requeued[job.state] += 1
                else:
                    jobs.append(job)
                continue
        if strict:
            raise WorkloadError(
                f"{problem.describe(str(p))}. Fix the line, or read leniently (strict=False, "
                "--lenient) to skip bad lines and list them."
            )
        problems.append(problem)
    ids, id_rule = _ids(jobs)
    data, t0 = _records(jobs, ids, unit)
    sizes = np.where(data[:, COL["alloc_procs"]] > 0, data[:, COL["alloc_procs"]], 0.0)
    sizes = np.maximum(sizes, np.maximum(data[:, COL["req_procs"]], 0.0))
    size = machine if machine is not None else _peak(jobs, sizes)
    if size > MAX_MACHINE_UNITS:
        raise WorkloadError(
            f"{p}: the dump's jobs held {size:,} {'CPUs' if unit == 'cpu' else 'nodes'} at once, "
            f"more than the {MAX_MACHINE_UNITS:,} hpcgym simulates; read a shorter period, or "
            "in whole nodes (--unit node)"
        )
    notes = _notes(jobs, steps, requeued, id_rule)
    header = _header(p, jobs, size, machine is not None, unit, t0, timezone_name, notes)
    report = ParseReport(
        path=str(p),
        data_lines=data_lines,
        kept=len(jobs),
        skipped=tuple(problems),
        notes=tuple(notes),
    )
    lines_arr = np.array([j.line for j in jobs], dtype=np.int64)
    return SwfTrace(header, data, lines_arr, str(p), report)
