"""The finished (policy, episode) cells of a bench run, each stored as soon as it is done.

A run folder keeps one file per finished cell under ``cells/<scenario>/<policy>/<seed>.json``
(its results row, its per-job table, and the timeline of a detailed cell; the Gantt chart beside
it as ``<seed>.gantt.png``), written atomically. ``hpcgym bench --resume`` reads them back and
runs only the cells that are missing, so an interrupted run ends with the same tables as an
uninterrupted one. Values round-trip exactly (JSON keeps floats to the last bit; each column's
dtype is stored with it), and nothing is unpickled.

A cell whose policy raised is not stored as done: its error goes to ``failures/`` (the
traceback) and ``failures.csv``, and ``--resume`` runs it again.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import atomic_path, write_text
from hpcgym.bench.runner import Task, TaskFailure, TaskOutcome

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


def save_cell(path: Path, outcome: TaskOutcome) -> None:
    """Store a finished cell (the Gantt chart first, so a cell file means a complete cell)."""
    if outcome.gantt is not None:
        save_png(path.with_suffix(".gantt.png"), outcome.gantt)
    record = {
        "row": {k: _plain(v) for k, v in outcome.row.items()},
        "jobs": _table(outcome.jobs),
        "timeline": None if outcome.timeline is None else _table(outcome.timeline),
        "gantt": outcome.gantt is not None,
        "cpu_seconds": outcome.cpu_seconds,
    }
    write_text(path, json.dumps(record))


def load_cell(path: Path) -> TaskOutcome:
    """A cell stored by :func:`save_cell`."""
    record = json.loads(path.read_text())
    gantt = load_png(path.with_suffix(".gantt.png")) if record["gantt"] else None
    timeline = None if record["timeline"] is None else _frame(record["timeline"])
    row = dict(record["row"])
    return TaskOutcome(row, _frame(record["jobs"]), timeline, gantt, record["cpu_seconds"])


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
