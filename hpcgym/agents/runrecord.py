"""``run.json`` of a training run: what produced it, one segment per invocation.

``hpcgym train`` writes it into the run folder before the first step and rewrites it (whole,
atomically) when the invocation ends. A run resumed from a checkpoint keeps its record and
appends a segment, so a run whose parts come from different commits or machines says so. ::

    {"format": "hpcgym-train-run/1",
     "segments": [{"command": [...], "git_commit": "...", "hpcgym_version": "...",
                   "machine": {...}, "versions": {...}, "started": "...Z",
                   "resumed_from": null, "finished": "...Z", "status": "finished",
                   "timesteps": 65536}, ...]}

Each segment names its process (``host``, ``pid``). ``status`` is ``running`` while the
invocation runs, then ``finished``, ``interrupted`` (Ctrl-C) or ``failed`` (with ``error``, the
error's line). A process killed outright leaves ``running``; it held the folder's lock
(:func:`lock_run_folder`), which went with it, so the next invocation knows the segment's
process is gone, refuses to start over it unless told (``--resume``, ``--overwrite``) and, when
resuming, marks it ``crashed``. The agent card keeps the commit and command of the invocation
that saved it (``training.produced_by``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hpcgym import atomic
from hpcgym._version import __version__
from hpcgym.errors import SpecError
from hpcgym.folder_lock import exclusive
from hpcgym.provenance import git_commit, machine, now_utc, versions

RUN_JSON = "run.json"
FORMAT = "hpcgym-train-run/1"
CRASHED = "crashed"
"""The status of a segment left ``running`` by a process that is gone (found by the next run)."""
CRASHED_ERROR = (
    "the invocation ended without closing its record: killed (SIGKILL, out of memory), or the "
    "machine stopped"
)


@contextlib.contextmanager
def lock_run_folder(run_dir: Path) -> Iterator[None]:
    """Hold the run folder's exclusive lock in the block; never wait for it.

    ``flock`` on the folder itself (nothing is added to it). The lock goes with the process:
    a training killed outright leaves none behind, so a segment still ``running`` in the
    folder's ``run.json`` while the lock is free is one whose process is gone. Without
    ``fcntl`` (not a POSIX system) there is no lock.

    Raises:
        SpecError: Another process (or another block of this one) holds the lock.
    """
    with exclusive(
        run_dir,
        lambda: (
            f"{run_dir} is in use by another hpcgym train{_holder(run_dir)}: wait until "
            "it ends, or choose another --out"
        ),
    ):
        yield


def _holder(run_dir: Path) -> str:
    """Who runs in ``run_dir``, as its record says (``""``: it has not written it yet)."""
    segment = last_segment(run_dir)
    if segment is None or segment.get("status") != "running" or "pid" not in segment:
        return ""
    return f" (process {segment['pid']} on {segment.get('host', '?')}, since {segment['started']})"


class RunRecord:
    """The ``run.json`` of one run folder; :meth:`open` starts this invocation's segment."""

    def __init__(self, path: Path, record: dict[str, Any]) -> None:
        self.path = path
        self.record = record

    @classmethod
    def open(
        cls,
        run_dir: Path,
        command: Sequence[str],
        resumed_from: int | None,
        resume: bool,
        facts: dict[str, Any] | None = None,
    ) -> RunRecord:
        """Start a segment: a new record, or the folder's own when ``resume`` is asked.

        ``facts`` are stored in the segment as given (``dropped_jobs``: what ``drop_oversized``
        left out of the training workload).

        A resumed run that found no checkpoint starts from step 0 (``resumed_from`` is
        ``None``) but keeps the earlier segments, which say what ran before. Called under the
        folder's lock (:func:`lock_run_folder`): a last segment still ``running`` is then one
        whose process ended without closing it, and becomes ``crashed``.

        Raises:
            SpecError: Resuming, and the folder's ``run.json`` is not a training record.
        """
        path = run_dir / RUN_JSON
        record: dict[str, Any] = {"format": FORMAT, "segments": []}
        if resume and path.exists():
            record = read_run_record(path)
            last = record["segments"][-1] if record["segments"] else None
            if isinstance(last, dict) and last.get("status") == "running":
                # Opened under the folder's lock: the process that wrote it is gone.
                last.update(status=CRASHED, error=CRASHED_ERROR)
        record["segments"].append(
            {
                "command": list(command),
                "git_commit": git_commit(),
                "hpcgym_version": __version__,
                "machine": machine(),
                "versions": versions(),
                "host": platform.node(),
                "pid": os.getpid(),
                "started": now_utc(),
                "resumed_from": resumed_from,
                "status": "running",
                **(facts or {}),
            }
        )
        out = cls(path, record)
        out._write()
        return out

    def close(self, status: str, timesteps: int | None, error: str | None = None) -> None:
        """End this invocation's segment with ``status`` (and the steps reached, or the error)."""
        segment = self.record["segments"][-1]
        segment.update(finished=now_utc(), status=status)
        if timesteps is not None:
            segment["timesteps"] = timesteps
        if error is not None:
            segment["error"] = error
        self._write()

    def fail(self, error: BaseException) -> None:
        """End the segment as ``interrupted`` (Ctrl-C) or ``failed``, with the error's line.

        A disk too full to take the record leaves the segment ``running``; the next invocation
        then finds it ended without closing it.
        """
        if isinstance(error, KeyboardInterrupt):
            status, line = "interrupted", "KeyboardInterrupt"
        else:
            status, line = "failed", f"{type(error).__name__}: {error_line(error)}"
        with contextlib.suppress(OSError):
            self.close(status, None, line)

    def _write(self) -> None:
        atomic.write_text(self.path, json.dumps(self.record, indent=2) + "\n")


def read_run_record(path: Path) -> dict[str, Any]:
    """A training run's ``run.json``.

    Raises:
        SpecError: The file is not JSON or not a training record.
    """
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SpecError(f"{path}: cannot read the training record ({e})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise SpecError(
            f"{path}: not a training record (format {FORMAT!r}); move it away or use --overwrite"
        )
    if not isinstance(record.get("segments"), list):
        raise SpecError(f"{path}: a training record without a segments list")
    return record


def error_line(error: BaseException, limit: int = 400) -> str:
    """``error``'s message on one line (whitespace runs joined), at most ``limit`` characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def last_segment(run_dir: Path) -> dict[str, Any] | None:
    """The last segment of ``run_dir``'s ``run.json`` (``None``: none, or not a record)."""
    try:
        segments = read_run_record(run_dir / RUN_JSON)["segments"]
    except SpecError:
        return None
    last = segments[-1] if segments else None
    return last if isinstance(last, dict) else None
