"""Measure SWF parsing speed (lines per second) on the shared traces.

Run: ``python benchmarks/swf_speed.py``. Prints a table and rewrites the ``## SWF parsing``
section of ``benchmarks/RESULTS.md`` (other sections are left alone).
"""

from __future__ import annotations

import gzip
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from results_md import write_section

from hpcgym.workloads.catalog import bundled_dir
from hpcgym.workloads.convert import trace_to_workload
from hpcgym.workloads.swf import read_swf

HEADING = "## SWF parsing"
REPEATS = 9


def best_time(path: Path) -> tuple[float, float, int]:
    """Best wall and CPU time of ``read_swf`` over a few runs, and the file's line count.

    CPU time is reported too because the machine is shared: other processes stretch wall time.
    """
    walls, cpus = [], []
    read_swf(path, drop_status=())  # warm-up: first calls pay for imports and caches
    for _ in range(REPEATS):
        t0, c0 = time.perf_counter(), time.process_time()
        read_swf(path, drop_status=())
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return min(walls), min(cpus), raw.count(b"\n")


def main() -> int:
    folder = bundled_dir()
    rows = []
    for path in sorted(folder.glob("*.swf*")):
        wall, cpu, lines = best_time(path)
        trace = read_swf(path)
        t0 = time.perf_counter()
        trace_to_workload(trace)
        convert = time.perf_counter() - t0
        rows.append((path.name, lines, wall, lines / wall, lines / cpu, len(trace) / convert))
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "sdsc-x10.swf"
        src = folder / "SDSC-SP2-1998-4.2-cln.swf.gz"
        text = gzip.decompress(src.read_bytes())
        head, _, body = text.partition(b"\n   11 ")
        big.write_bytes(head + b"\n" + (b"   11 " + body) * 10)
        wall, cpu, lines = best_time(big)
        name = "SDSC-SP2 x10, uncompressed (temporary file)"
        rows.append((name, lines, wall, lines / wall, lines / cpu, np.nan))
    header = "| file | lines | best wall (s) | lines/s wall | lines/s CPU | jobs/s to JobSpec |"
    table = [header, "|---|---:|---:|---:|---:|---:|"]
    for name, lines, wall, rate, cpu_rate, jobs_rate in rows:
        jobs = "" if np.isnan(jobs_rate) else f"{jobs_rate:,.0f}"
        table.append(
            f"| {name} | {lines:,} | {wall:.3f} | {rate:,.0f} | {cpu_rate:,.0f} | {jobs} |"
        )
    section = "\n".join(
        [
            HEADING,
            "",
            "`python benchmarks/swf_speed.py`: `read_swf` on the shared traces, gzip",
            "decompression, header and line numbering included; all 18 fields, strict checks.",
            f"Machine: {platform.machine()}, Python {sys.version.split()[0]}, "
            f"numpy {np.__version__}, pandas {pd.__version__}; {os.cpu_count()} CPUs shared with "
            "other work. Target: at least 500,000 lines/s.",
            "",
            *table,
            "",
            "Turning records into `JobSpec`s (last column) is a per-job Python step, done once",
            "per load; named sets cache the parsed trace.",
            "",
        ]
    )
    print(section)
    write_section(HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
