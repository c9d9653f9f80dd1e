"""Batsim JSON workloads, read as SWF records and written from them.

A Batsim workload (https://batsim.readthedocs.io, "Workload") is one JSON object::

    {"nb_res": 128,
     "jobs": [{"id": 1, "subtime": 0, "walltime": 3600, "res": 4, "profile": "delay_1800"}],
     "profiles": {"delay_1800": {"type": "delay", "delay": 1800}}}

Two profile types are read and written: ``delay`` (the job runs ``delay`` seconds, whatever
its size) and ``parallel_homogeneous`` (each of the job's ``res`` hosts computes ``cpu``
flops, ``com`` bytes go between each pair; the run time is ``cpu / speed`` for hosts of
``speed`` flop/s, communication left out). Other profile types are refused, naming the job.

Written files hold one profile per distinct run time, jobs in submission order, and two
things Batsim ignores but hpcgym reads back so nothing is lost: each job's other SWF fields
(``"swf": {"user_id": 3, ...}``) and a top-level ``"hpcgym"`` object with the SWF header lines
and the speed used for ``parallel_homogeneous``. ``res`` is the job's size in the platform's
units (processors, or whole nodes when the workload was read that way) and ``nb_res`` the
platform's size. A walltime Batsim should not enforce is left out of the job.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.atomic import write_bytes
from hpcgym.errors import WorkloadError
from hpcgym.workloads.header import MAX_MACHINE_UNITS, SwfHeader
from hpcgym.workloads.swf import COL, FIELDS, N_FIELDS, ParseReport, SwfTrace
from hpcgym.workloads.swf_input import read_limited

PROFILES = ("delay", "parallel_homogeneous")
"""The Batsim profile types read and written."""

DEFAULT_SPEED = 1e9
"""Flop/s of one host when writing ``parallel_homogeneous`` without a speed given."""

HPCGYM_KEY = "hpcgym"
"""The top-level key of what hpcgym adds to a workload (Batsim ignores it)."""

_GIVEN_BY_JOB = ("job_id", "submit_time", "run_time", "req_time")
"""SWF fields a Batsim job says itself (id, subtime, profile, walltime): not repeated."""


def _number(value: float) -> int | float:
    """An integral float as an int (Batsim reads either; files stay readable)."""
    return int(value) if float(value).is_integer() else float(value)


def _profile_name(kind: str, run: float) -> str:
    return f"{'delay' if kind == 'delay' else 'ph'}_{_number(run)}"


def batsim_document(
    trace: SwfTrace,
    sizes: np.ndarray,
    nb_res: int,
    *,
    profile: str = "delay",
    speed: float | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """The Batsim workload of ``trace``'s records, as a JSON-ready dict.

    Args:
        trace: The records (submission order), their header kept in the ``hpcgym`` object.
        sizes: Each record's size in the platform's units (Batsim's ``res``).
        nb_res: The platform's size (Batsim's ``nb_res``).
        profile: ``"delay"`` or ``"parallel_homogeneous"``.
        speed: Flop/s of one host, for ``parallel_homogeneous`` (default 1e9); it must match
            the hosts of the Batsim platform the workload is run on.
        command: The command that made the file, recorded in the ``hpcgym`` object.

    Raises:
        WorkloadError: An unknown profile, a bad speed, a record without a run time or a size,
            or a job larger than ``nb_res``.
    """
    if profile not in PROFILES:
        raise WorkloadError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    if profile == "parallel_homogeneous":
        speed = DEFAULT_SPEED if speed is None else speed
        if not (isinstance(speed, (int, float)) and math.isfinite(speed) and speed > 0):
            raise WorkloadError(f"speed must be a positive number of flop/s, got {speed!r}")
    jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(trace.data):
        run, size = float(row[COL["run_time"]]), int(sizes[i])
        jid = _number(row[COL["job_id"]])
        if run < 0 or size < 1:
            raise WorkloadError(
                f"{trace.path}: record {i + 1} (job {jid}) has no run time or no size; only "
                "jobs that run can go to Batsim"
            )
        if size > nb_res:
            raise WorkloadError(
                f"{trace.path}: job {jid} needs {size} resources; the platform has {nb_res}"
            )
        name = _profile_name(profile, run)
        if name not in profiles:
            profiles[name] = (
                {"type": "delay", "delay": _number(run)}
                if profile == "delay"
                else {"type": profile, "cpu": _number(run * float(speed or 0)), "com": 0}
            )
        job: dict[str, Any] = {
            "id": jid,
            "subtime": _number(row[COL["submit_time"]]),
            "res": size,
            "profile": name,
        }
        if row[COL["req_time"]] > 0:
            job["walltime"] = _number(row[COL["req_time"]])
        extra = {
            name: _number(row[COL[name]])
            for name in FIELDS
            if name not in _GIVEN_BY_JOB and row[COL[name]] != -1
        }
        if profile == "parallel_homogeneous":
            extra["run_time"] = _number(run)  # exact, where cpu / speed may round
        if extra:
            job["swf"] = extra
        jobs.append(job)
    ours: dict[str, Any] = {"swf_header": list(trace.header.lines)}
    if command is not None:
        ours["command"] = command
    if profile == "parallel_homogeneous":
        ours["speed"] = _number(float(speed or 0))
    return {"nb_res": int(nb_res), "jobs": jobs, "profiles": profiles, HPCGYM_KEY: ours}


def format_batsim(document: dict[str, Any]) -> str:
    """The JSON text of a Batsim workload: one line per job and per profile."""

    def one(value: Any) -> str:
        return json.dumps(value, allow_nan=False, ensure_ascii=False)

    parts: list[str] = []
    for key, value in document.items():
        if key == "jobs" and value:
            inner = ",\n".join(f"  {one(job)}" for job in value)
            parts.append(f" {one(key)}: [\n{inner}\n ]")
        elif key == "profiles" and value:
            inner = ",\n".join(f"  {one(name)}: {one(p)}" for name, p in value.items())
            parts.append(f" {one(key)}: {{\n{inner}\n }}")
        else:
            parts.append(f" {one(key)}: {one(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_batsim(document: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write a Batsim workload (from :func:`batsim_document`) as JSON, atomically."""
    p = Path(path)
    text = format_batsim(document)
    try:
        write_bytes(p, text.encode("utf-8"))
    except OSError as e:
        raise WorkloadError(f"cannot write {p}: {e.strerror or e}. Check the folder.") from e
    return p


class _Bad(ValueError):
    """A job or profile that cannot be read."""


def _real(value: Any, what: str, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Bad(f"{what} is {value!r}, not a number")
    if value < minimum:
        raise _Bad(f"{what} is {value!r}; it must be >= {minimum:g}")
    return float(value)


def _run_time(name: str, profile: Any, speed: float | None, notes: set[str]) -> float:
    if not isinstance(profile, dict):
        raise _Bad(f"profile {name!r} is not an object")
    kind = profile.get("type")
    if kind == "delay":
        return _real(profile.get("delay"), f"profile {name!r}: delay")
    if kind == "parallel_homogeneous":
        cpu = _real(profile.get("cpu"), f"profile {name!r}: cpu")
        if _real(profile.get("com", 0), f"profile {name!r}: com") > 0:
            notes.add("parallel_homogeneous communication (com) is left out of the run times")
        if speed is None:
            raise _Bad(
                f"profile {name!r} is parallel_homogeneous: its run time is cpu / speed; give "
                "the platform's host speed (speed=FLOPS, --speed FLOPS)"
            )
        return cpu / speed
    raise _Bad(
        f"profile {name!r} has type {kind!r}; hpcgym reads {' and '.join(PROFILES)} profiles "
        "(other types depend on Batsim's platform model)"
    )


def _job_row(
    job: Any, profiles: dict[str, Any], speed: float | None, notes: set[str]
) -> tuple[np.ndarray, Any]:
    """The SWF record of one Batsim job, and its id as written."""
    if not isinstance(job, dict):
        raise _Bad("is not an object")
    row = np.full(N_FIELDS, -1.0)
    extra = job.get("swf", {})
    if not isinstance(extra, dict):
        raise _Bad("'swf' is not an object")
    for name, value in extra.items():
        if name not in COL or (name in _GIVEN_BY_JOB and name != "run_time"):
            raise _Bad(f"'swf' names {name!r}, not one of the SWF fields it may hold")
        row[COL[name]] = value if value == -1 else _real(value, f"swf.{name}")
    name = job.get("profile")
    if not isinstance(name, str) or name not in profiles:
        raise _Bad(f"names profile {name!r}, which the workload does not define")
    res = job.get("res")
    if isinstance(res, bool) or not isinstance(res, int) or res < 1:
        raise _Bad(f"res is {res!r}; it must be a whole number >= 1")
    row[COL["submit_time"]] = _real(job.get("subtime"), "subtime")
    run = _run_time(name, profiles[name], speed, notes)
    exact = row[COL["run_time"]]  # a parallel_homogeneous job written by hpcgym keeps it
    if not (exact >= 0 and math.isclose(exact, run, rel_tol=1e-9, abs_tol=1e-9)):
        row[COL["run_time"]] = run
    walltime = job.get("walltime", -1)
    if walltime != -1:
        row[COL["req_time"]] = _real(walltime, "walltime")
    if "alloc_procs" not in extra and "req_procs" not in extra:
        row[COL["alloc_procs"]] = row[COL["req_procs"]] = res
    if "status" not in extra:
        row[COL["status"]] = 1
    return row, job.get("id")


def _load(path: Path, max_bytes: int | None) -> dict[str, Any]:
    raw = read_limited(path, max_bytes)
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise WorkloadError(f"{path}: byte {e.start} is not UTF-8; JSON files are") from None
    except json.JSONDecodeError as e:
        raise WorkloadError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise WorkloadError(f"{path}: not a Batsim workload (no 'jobs' list at the top level)")
    if not isinstance(document.get("profiles"), dict):
        raise WorkloadError(f"{path}: not a Batsim workload (no 'profiles' object)")
    nb_res = document.get("nb_res")
    if (
        isinstance(nb_res, bool)
        or not isinstance(nb_res, int)
        or not 1 <= nb_res <= MAX_MACHINE_UNITS
    ):
        raise WorkloadError(
            f"{path}: nb_res is {nb_res!r}; it must be a whole number from 1 to "
            f"{MAX_MACHINE_UNITS:,} (the largest platform hpcgym simulates)"
        )
    return document


def _ids(raw_ids: list[Any]) -> tuple[list[float], bool]:
    """Job numbers: the ids when every one is a whole number (or its digits), else 1, 2, ..."""

    def whole(v: Any) -> int | None:
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
        if isinstance(v, str) and v.isdigit():
            return int(v)
        return None

    numbers = [whole(v) for v in raw_ids]
    if all(n is not None for n in numbers):
        return [float(n or 0) for n in numbers], False
    return [float(i + 1) for i in range(len(raw_ids))], True


def read_batsim(
    path: str | os.PathLike[str], *, speed: float | None = None, max_bytes: int | None = None
) -> SwfTrace:
    """Read a Batsim JSON workload as SWF records.

    Args:
        path: The JSON file (plain or gzip).
        speed: Flop/s of one host, for ``parallel_homogeneous`` profiles; default: the one a
            file written by hpcgym records.
        max_bytes: The most bytes to read (see :func:`hpcgym.workloads.swf.read_swf`).

    Returns:
        One record per job, in file order: submit time, run time (the profile's), requested
        time (``walltime``), size (``res``), and any other field the job's ``swf`` object holds.
        The header is the one the file records, else ``MaxProcs: nb_res``.

    Raises:
        WorkloadError: Not JSON, not a Batsim workload, or a job or profile that cannot be read
            (named by its position and id).
    """
    p = Path(path)
    document = _load(p, max_bytes)
    ours = document.get(HPCGYM_KEY)
    ours = ours if isinstance(ours, dict) else {}
    if speed is None and "speed" in ours:
        speed = _real(ours["speed"], "hpcgym.speed")
    if speed is not None and not (math.isfinite(speed) and speed > 0):
        raise WorkloadError(f"speed must be a positive number of flop/s, got {speed!r}")
    notes: set[str] = set()
    rows: list[np.ndarray] = []
    raw_ids: list[Any] = []
    for i, job in enumerate(document["jobs"]):
        try:
            row, jid = _job_row(job, document["profiles"], speed, notes)
        except _Bad as e:
            jid = job.get("id") if isinstance(job, dict) else None
            raise WorkloadError(f"{p}: job {i + 1} (id {jid!r}): {e}. Fix the job.") from None
        rows.append(row)
        raw_ids.append(jid)
    ids, renumbered = _ids(raw_ids)
    if renumbered:
        notes.add("job ids are not all whole numbers: jobs are numbered 1, 2, ... in file order")
    data = np.array(rows, dtype=np.float64).reshape(-1, N_FIELDS)
    data[:, COL["job_id"]] = ids
    lines = [str(line) for line in ours.get("swf_header", []) if isinstance(line, str)]
    header = SwfHeader(tuple(lines))
    if header.max_procs is None and header.max_nodes is None:
        header = header.with_entries([("MaxProcs", str(document["nb_res"]))])
    report = ParseReport(str(p), len(rows), len(rows), notes=tuple(sorted(notes)))
    return SwfTrace(header, data, np.zeros(len(rows), dtype=np.int64), str(p), report)
