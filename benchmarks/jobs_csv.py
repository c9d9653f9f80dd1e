"""Write a bench run's job table as CSV: pandas' writer against pyarrow's.

Run: ``python benchmarks/jobs_csv.py --writer arrow --rows 2000000`` (or ``--writer pandas``)
writes a job table of that many rows, built like a bench run's (``hpcgym.bench.runner``'s
columns, float times with fractions), to a temporary file and exits; time the two with
``farm-bench -- python benchmarks/jobs_csv.py --writer arrow --vs 'python
benchmarks/jobs_csv.py --writer pandas'``. ``--check`` reads the file back and compares it.
The figures are in ``benchmarks/RESULTS.md``, "Job tables as CSV".
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from hpcgym.bench.report import _write_csv


def table(rows: int) -> pd.DataFrame:
    """A job table of ``rows`` rows with a bench run's columns and value shapes (seeded)."""
    rng = np.random.default_rng(0)
    submit = np.round(np.cumsum(rng.exponential(600.0, rows)), 2)
    wait = np.where(rng.random(rows) < 0.4, 0.0, np.round(rng.exponential(9000.0, rows), 2))
    run = rng.integers(1, 100_000, rows).astype(np.float64)
    start = submit + wait
    return pd.DataFrame(
        {
            "scenario": pd.array(["rlsched-synlublin-bf-large-v0"] * rows, dtype="string"),
            "policy": pd.array(["f1-reserve-bf"] * rows, dtype="string"),
            "seed": np.arange(rows) // 1024 + 100_000,
            "id": np.arange(rows) % 1024 + 1,
            "kind": pd.array(["rigid"] * rows, dtype="string"),
            "state": pd.array(["completed"] * rows, dtype="string"),
            "submit": submit,
            "start": start,
            "end": start + run,
            "requested_nodes": rng.integers(1, 257, rows),
            "max_nodes_held": rng.integers(1, 257, rows),
            "wait": wait,
            "bsld": np.maximum(1.0, (wait + run) / np.maximum(run, 10.0)),
            "slowdown": (wait + run) / run,
            "reconfigurations": np.zeros(rows, dtype=np.int64),
            "preemptions": np.zeros(rows, dtype=np.int64),
            "train_seed": np.full(rows, np.nan),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writer", choices=("arrow", "pandas"), required=True)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--check", action="store_true", help="read the file back and compare")
    args = ap.parse_args()
    jobs = table(args.rows)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "jobs.csv"
        if args.writer == "arrow":
            _write_csv(jobs, path)
        else:
            jobs.to_csv(path, index=False)
        if args.check:
            back = pd.read_csv(path, dtype={c: "string" for c in ("scenario", "policy")})
            pd.testing.assert_frame_equal(back, jobs, check_dtype=False, check_exact=True)
            print(f"{args.rows} rows read back equal ({path.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
