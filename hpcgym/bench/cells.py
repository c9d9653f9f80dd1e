"""The finished (policy, episode) cells of a bench run, each stored as soon as it is done.

A run folder keeps one file per finished cell under ``cells/<scenario>/<policy>/<seed>.json``
(its results row, its per-job table, and the timeline of a detailed cell; the Gantt chart beside
it as ``<seed>.gantt.png``), written atomically. ``hpcgym bench --resume`` reads them back and
runs only the cells that are missing, so an interrupted run ends with the same tables as an
uninterrupted one. Values round-trip exactly (JSON keeps floats to the last bit; each column's
dtype is stored with it), and nothing is unpickled.

A cell whose policy raised is not stored as done: its error goes to ``failures/`` (the
traceback) and ``failures.csv``, and ``--resume`` runs it again.

A stored cell is read back only when it is one of this run's (:func:`load_cell`): it records the
run's configuration hash, and a cell of another configuration is refused (the folder would mix
two runs' results). A cell that is damaged (truncated, not JSON, wrong types, its chart missing)
or is not the episode its file name says (another policy, scenario or seed) is
:class:`DamagedCell`: ``--resume`` runs that episode again, with a warning.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import atomic_path, write_text
from hpcgym.bench.runner import JOB_COLUMNS, Task, TaskFailure, TaskOutcome
from hpcgym.errors import SpecError, first_line
from hpcgym.sim.metrics import SUMMARY_KEYS

CELLS = "cells"
FAILURES = "failures"


def _safe(name: str) -> str:
    """``name`` as one file-name component."""
    return re.sub(r"[^A-Za-z0-9._@+-]", "_", name) or "_"


def cell_path(folder: Path, scenario: str, policy: str, seed: int) -> Path:
    """Where the cell ``(scenario, policy label, seed)`` is stored in run folder ``folder``."""
    return folder / CELLS / _safe(scenario) / _safe(policy) / f"{seed}.json"


def task_cell(folder: Path, task: Task) -> Path:
    """The cell file of ``task``."""
    return cell_path(folder, task.scenario.name, task.cell_name, task.seed)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _table(df: pd.DataFrame) -> dict[str, Any]:
    return {
        "columns": [str(c) for c in df.columns],
        "dtypes": [str(t) for t in df.dtypes],
        "data": [[_plain(v) for v in df[c].tolist()] for c in df.columns],
    }


def _frame(table: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            c: pd.Series(values, dtype=dtype)
            for c, dtype, values in zip(
                table["columns"], table["dtypes"], table["data"], strict=True
            )
        }
    )


def save_png(path: Path, image: np.ndarray) -> Path:
    """Write an RGB array as a PNG, atomically."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="png")
    with atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getvalue())
    return path


def load_png(path: Path) -> np.ndarray:
    """The RGB array of a PNG written by :func:`save_png` (exactly)."""
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB")).copy()


def save_cell(path: Path, outcome: TaskOutcome, config_hash: str) -> None:
    """Store a finished cell of the run ``config_hash``.

    The Gantt chart is written first, so a cell file means a complete cell.
    """
    if outcome.gantt is not None:
        save_png(path.with_suffix(".gantt.png"), outcome.gantt)
    record = {
        "config_hash": config_hash,
        "row": {k: _plain(v) for k, v in outcome.row.items()},
        "jobs": _table(outcome.jobs),
        "timeline": None if outcome.timeline is None else _table(outcome.timeline),
        "gantt": outcome.gantt is not None,
        "cpu_seconds": outcome.cpu_seconds,
    }
    write_text(path, json.dumps(record))


class DamagedCell(Exception):
    """A stored cell that cannot be used as it is; the message says why (run it again)."""


_TEXT = ("scenario", "env_id", "policy", "path")
_FLAGS = ("truncated", "kill_on_walltime")
_COUNTS = ("seed", "train_seed", "steps", "invalid_actions")
_ROW = (*_TEXT, *_FLAGS, *_COUNTS, *SUMMARY_KEYS, "unfinished", "unstarted", "episode_end")
"""The keys of a cell's row (``train_seed`` only for a sweep member's)."""
DTYPES = frozenset({"str", "string", "object", "bool", "int64", "int32", "float64", "float32"})
"""The column types a stored table may name (any other is a damaged cell)."""
TIMELINE_COLUMNS = ("time", "busy_nodes", "utilization", "queued")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_row(row: Any, task: Task) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DamagedCell(f"its row is {type(row).__name__}, not an object")
    want = {k for k in _ROW if k != "train_seed" or task.train_seed is not None}
    if set(row) != want:
        odd = sorted(set(row) ^ want)[:3]
        raise DamagedCell(f"its row has other keys than a cell's ({', '.join(map(str, odd))})")
    for key, value in row.items():
        if key in _TEXT:
            ok = isinstance(value, str)
        elif key in _FLAGS:
            ok = isinstance(value, bool)
        elif key in _COUNTS:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = _number(value)
        if not ok:
            raise DamagedCell(f"its {key} is {value!r}, of the wrong type")
    sc = task.scenario
    says = (row["scenario"], row["env_id"], row["policy"], row["seed"], row.get("train_seed"))
    if says != (sc.name, sc.env_id, task.name, task.seed, task.train_seed):
        raise DamagedCell(
            f"it holds policy {row['policy']} on {row['scenario']} ({row['env_id']}), episode "
            f"seed {row['seed']}, not the episode its file name says"
        )
    return row


def _checked_frame(table: Any, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """A stored table as a frame, checked to have exactly ``columns``, of known types."""
    if not (isinstance(table, dict) and set(table) == {"columns", "dtypes", "data"}):
        raise DamagedCell(f"its {what} table is not a stored table")
    names, dtypes, data = table["columns"], table["dtypes"], table["data"]
    if names != list(columns):
        raise DamagedCell(f"its {what} table has other columns than a cell's")
    if not (
        isinstance(dtypes, list)
        and len(dtypes) == len(names)
        and all(isinstance(t, str) and t in DTYPES for t in dtypes)
    ):
        raise DamagedCell(f"its {what} table names column types other than {sorted(DTYPES)}")
    scalar = (str, int, float, bool, type(None))
    if not (
        isinstance(data, list)
        and len(data) == len(names)
        and all(isinstance(col, list) for col in data)
        and len({len(col) for col in data}) <= 1
        and all(isinstance(v, scalar) for col in data for v in col)
    ):
        raise DamagedCell(f"its {what} table's data is not one list of values per column")
    try:
        return _frame(table)
    except (TypeError, ValueError, OverflowError) as e:
        raise DamagedCell(
            f"its {what} table does not fit its column types ({first_line(e)})"
        ) from None


def load_cell(
    path: Path, task: Task, config_hash: str, earlier: frozenset[str] = frozenset()
) -> TaskOutcome:
    """The cell of ``task`` stored at ``path`` by the run ``config_hash`` (:func:`save_cell`).

    ``earlier`` holds the hashes of configurations this run extends (a sweep that gained
    members, :mod:`hpcgym.bench.gained`): their cells are this run's too.

    Raises:
        DamagedCell: It cannot be read, is not a cell, does not hold ``task``'s episode, or was
            stored without a configuration hash (by an older hpcgym): run it again.
        SpecError: It was stored by a run of another configuration (the message says what to do).
    """
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as e:
        raise DamagedCell(f"it cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise DamagedCell(f"it is not JSON ({e})") from None
    if not isinstance(record, dict):
        raise DamagedCell(f"it is a JSON {type(record).__name__}, not a cell")
    stored = record.get("config_hash")
    if stored is None:
        raise DamagedCell("it records no configuration hash (stored by an older hpcgym)")
    if stored != config_hash and stored not in earlier:
        raise SpecError(
            f"{path} was stored by a run of another configuration (hash {stored!r}; this run's "
            f"is {config_hash}): resuming would mix two runs' results. Resume it with the "
            "configuration that stored it (the run.json it was made with), or delete the "
            f"folder's {CELLS} (or this file) to run them again under this configuration"
        )
    if set(record) != {"config_hash", "row", "jobs", "timeline", "gantt", "cpu_seconds"}:
        raise DamagedCell("it has other fields than a cell's")
    row = _check_row(record["row"], task)
    prefix = ("scenario", "policy", *(("train_seed",) if task.train_seed is not None else ()))
    jobs = _checked_frame(record["jobs"], (*prefix, "seed", *JOB_COLUMNS), "jobs")
    for key in ("scenario", "policy", "seed", "train_seed"):
        if key in jobs and not (jobs[key] == row[key]).all():
            raise DamagedCell(f"its jobs table holds another {key} than its row")
    if (record["timeline"] is None) == task.detail or record["gantt"] is not task.detail:
        raise DamagedCell(
            "its timeline or Gantt chart is missing" if task.detail else "it has a Gantt chart"
        )
    timeline = None
    if record["timeline"] is not None:
        timeline = _checked_frame(record["timeline"], TIMELINE_COLUMNS, "timeline")
    cpu = record["cpu_seconds"]
    if not (_number(cpu) and math.isfinite(cpu) and cpu >= 0):
        raise DamagedCell(f"its cpu_seconds is {cpu!r}, not a number of seconds")
    gantt = None
    if task.detail:
        chart = path.with_suffix(".gantt.png")
        try:
            gantt = load_png(chart)
        except Exception as e:  # PIL raises many kinds for a damaged file
            raise DamagedCell(
                f"its Gantt chart {chart.name} cannot be read ({first_line(e)})"
            ) from None
    return TaskOutcome(dict(row), jobs, timeline, gantt, float(cpu))


def failure_path(folder: Path, failure: TaskFailure) -> Path:
    """Where the traceback of a failed cell is written, under ``failures/``."""
    name = f"{_safe(failure.scenario)}_{_safe(failure.policy)}_{failure.seed}.txt"
    return folder / FAILURES / name


def save_failure(folder: Path, failure: TaskFailure) -> Path:
    """Write a failed cell's traceback under ``failures/``; return its path."""
    path = failure_path(folder, failure)
    head = (
        f"policy {failure.policy}, scenario {failure.scenario}, episode seed {failure.seed}\n"
        f"{failure.error}\n\n"
    )
    write_text(path, head + failure.traceback)
    return path


def failures_table(folder: Path, failures: list[TaskFailure]) -> pd.DataFrame:
    """One row per failed cell: scenario, policy, seed, error and its traceback file."""
    rows = [
        {
            "scenario": f.scenario,
            "policy": f.policy,
            "seed": f.seed,
            "error": f.error,
            "traceback_file": str(failure_path(folder, f).relative_to(folder)),
        }
        for f in failures
    ]
    return pd.DataFrame(rows, columns=["scenario", "policy", "seed", "error", "traceback_file"])
