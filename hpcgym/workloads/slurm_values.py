"""The values of a ``sacct`` dump: job states, durations and timestamps, read one field at a time.

Every reader returns a number, ``None`` for a value sacct uses to say "not known", or raises
:class:`ValueError` with a message that says what forms are accepted (the dump reader adds the
file, line and column).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hpcgym.errors import WorkloadError

FINAL_STATES: dict[str, int] = {
    "COMPLETED": 1,
    "CANCELLED": 5,
    "TIMEOUT": 0,
    "FAILED": 0,
    "NODE_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "BOOT_FAIL": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
}
"""Slurm states a job ends in, and the SWF status (field 11) each becomes.

COMPLETED is 1 (completed). CANCELLED is 5 (cancelled), whether it ran or not. The others
ended the job before it finished its work (the time limit, an error, a node, memory, a boot
failure, a deadline, preemption): 0 (failed). A job in any of them that has a start time ran
until its end time; one without never ran."""

UNFINISHED_STATES: frozenset[str] = frozenset(
    {
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "REVOKED",
        "SPECIAL_EXIT",
        "STOPPED",
        "SIGNALING",
        "STAGE_OUT",
        "CONFIGURING",
        "COMPLETING",
    }
)
"""States of a job that had not ended when the dump was taken (or, REQUEUED and REVOKED, whose
record is not the job's last one): the job has no run time to replay."""

MISSING = frozenset({"", "UNKNOWN", "NONE", "N/A"})
"""What sacct prints for a time it does not know (a job that never started has Start None)."""

NO_LIMIT = frozenset({"UNLIMITED", "PARTITION_LIMIT", "INFINITE", "NONE"})
"""Timelimit values that give no number: no limit, or the partition's (which the dump lacks)."""

_WHOLE = re.compile(r"[0-9]+")
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def state_word(raw: str) -> str:
    """The state's name: ``"CANCELLED by 1000"`` is CANCELLED, a truncated ``"CANCELLED+"`` too.

    Raises:
        ValueError: Not a Slurm job state.
    """
    word = raw.strip().split(" ", 1)[0].rstrip("+").upper()
    if word not in FINAL_STATES and word not in UNFINISHED_STATES:
        known = ", ".join(sorted((*FINAL_STATES, *UNFINISHED_STATES)))
        raise ValueError(f"state {raw.strip()!r} is not a Slurm job state ({known})")
    return word


def _clock(parts: list[str], raw: str) -> float:
    """Seconds of ``[[H:]M:]S`` parts (seconds may have a fraction), or a ValueError."""
    total = 0.0
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if not (_SECONDS if last else _WHOLE).fullmatch(part):
            raise ValueError(f"cannot read {raw!r} as a duration")
        total = total * 60 + float(part)
    return total


def duration(raw: str) -> float | None:
    """Seconds of a sacct duration: ``[D-]HH:MM:SS``, ``MM:SS[.fff]``, or a bare number of seconds.

    The forms of ``Elapsed``, ``TotalCPU`` and ``ElapsedRaw``. ``None`` for a missing value.

    Raises:
        ValueError: Another form.
    """
    text = raw.strip()
    if text.upper() in MISSING:
        return None
    days = 0.0
    if "-" in text:
        head, _, text = text.partition("-")
        if not _WHOLE.fullmatch(head):
            raise ValueError(f"cannot read {raw.strip()!r} as a duration ([D-]HH:MM:SS)")
        days = float(head)
    parts = text.split(":")
    if len(parts) > 3:
        raise ValueError(f"cannot read {raw.strip()!r} as a duration ([D-]HH:MM:SS)")
    try:
        return days * 86400 + _clock(parts, raw.strip())
    except ValueError:
        raise ValueError(f"cannot read {raw.strip()!r} as a duration ([D-]HH:MM:SS)") from None


def time_limit(raw: str, raw_minutes: bool = False) -> float | None:
    """Seconds of a ``Timelimit``, or ``None`` for ``UNLIMITED``, ``Partition_Limit`` or missing.

    The forms Slurm accepts for a time limit: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M`` and
    ``D-H:M:S`` (sacct prints ``[D-]HH:MM:SS``). ``raw_minutes``: the value is
    ``TimelimitRaw``, a whole number of minutes.

    Raises:
        ValueError: Another form.
    """
    text = raw.strip()
    if text.upper() in MISSING or text.upper() in NO_LIMIT:
        return None
    forms = "M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, UNLIMITED or Partition_Limit"
    if raw_minutes:
        if not _WHOLE.fullmatch(text):
            raise ValueError(f"TimelimitRaw {text!r} is not a whole number of minutes")
        return float(text) * 60
    if "-" in text:
        head, _, rest = text.partition("-")
        parts = rest.split(":")
        if not _WHOLE.fullmatch(head) or len(parts) > 3 or not all(map(_WHOLE.fullmatch, parts)):
            raise ValueError(f"cannot read time limit {text!r} (forms: {forms})")
        seconds = [3600, 60, 1][: len(parts)]
        return float(head) * 86400 + sum(float(p) * s for p, s in zip(parts, seconds, strict=True))
    parts = text.split(":")
    if len(parts) > 3 or not all(map(_WHOLE.fullmatch, parts)):
        raise ValueError(f"cannot read time limit {text!r} (forms: {forms})")
    if len(parts) == 1:
        return float(parts[0]) * 60  # a bare number is minutes, as in sbatch --time
    return _clock(parts, text)


def zone(name: str) -> tzinfo:
    """The time zone called ``name`` (``"UTC"``, ``"Europe/Amsterdam"``).

    Raises:
        WorkloadError: An unknown zone name.
    """
    if name.upper() == "UTC":
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise WorkloadError(
            f"unknown time zone {name!r}; give an IANA name such as UTC or Europe/Amsterdam "
            "(the zone of the machine sacct ran on, or the TZ it ran with)"
        ) from None


def timestamp(raw: str, tz: tzinfo) -> float | None:
    """Epoch seconds of a sacct time ``YYYY-MM-DDTHH:MM:SS``, read in ``tz``; ``None`` if missing.

    sacct prints local times without a zone; a time that carries an offset (``...+02:00``,
    ``...Z``) is read with it instead. A local time that does not exist (skipped by a
    daylight-saving change) or exists twice is read as the zone's rules say (``fold=0``).

    Raises:
        ValueError: Another form (``SLURM_TIME_FORMAT`` other than ``standard``).
    """
    text = raw.strip()
    if text.upper() in MISSING:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"cannot read time {text!r}: sacct's times look like 2024-03-01T13:45:00 "
            "(run sacct with SLURM_TIME_FORMAT=standard)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    value = moment.timestamp()
    if not math.isfinite(value):  # pragma: no cover (datetime bounds years to 1..9999)
        raise ValueError(f"time {text!r} is out of range")
    return value


def count(raw: str) -> float | None:
    """A whole count (nodes, CPUs); ``None`` when missing.

    Raises:
        ValueError: Not a whole number.
    """
    text = raw.strip()
    if text.upper() in MISSING:
        return None
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"{text!r} is not a whole number")
    return float(text)
