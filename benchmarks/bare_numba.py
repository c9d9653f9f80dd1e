"""The bare EASY loop of ``bare_loops.py`` compiled with numba: the speed limit of this machine.

Same rules and the same data structures (a heap of real ends, the running jobs' estimated ends
kept sorted, a queue scanned in submission order at each pass), on numpy arrays; its start
times are checked against the plain-Python loop's. numba is not a dependency of hpcgym:

    pip install numba
    python benchmarks/bare_numba.py [--only KEY,...] [--max-jobs N] [--repeat 3]

Prints, per shape of ``scale.py``, the CPU seconds of the numba loop (compilation excluded),
of the plain-Python loop, and of ``sim.run(make("easy"))`` (the C batch core, the result
table included), measured in this process, best of ``--repeat`` (the plain loop: one run).
"""

from __future__ import annotations

import argparse
import heapq
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).parent))

from bare_loops import bare_easy
from scale import SHAPE, cached, run_engine, specs_of


@njit(cache=False)
def easy_numba(
    submit: np.ndarray, run: np.ndarray, est: np.ndarray, size: np.ndarray, capacity: int
) -> np.ndarray:  # pragma: no cover - compiled
    """EASY start times (``nan``: refused), as ``bare_loops.bare_easy``."""
    n = submit.shape[0]
    starts = np.full(n, np.nan)
    inf = np.inf
    free = capacity
    heap = [(0.0, np.int64(0))]
    heap.pop()
    ends_t = np.empty(n)
    ends_k = np.empty(n, np.int64)
    ends_s = np.empty(n, np.int64)
    m = 0
    est_end = np.empty(n)
    queue = np.empty(n, np.int64)
    qlen = 0
    i = 0
    while i < n or len(heap) > 0:
        t = heap[0][0] if len(heap) > 0 else inf
        if i < n and submit[i] < t:
            t = submit[i]
        while len(heap) > 0 and heap[0][0] == t:
            k = heapq.heappop(heap)[1]
            free += size[k]
            p = np.searchsorted(ends_t[:m], est_end[k])
            while ends_k[p] != k:
                p += 1
            ends_t[p : m - 1] = ends_t[p + 1 : m]
            ends_k[p : m - 1] = ends_k[p + 1 : m]
            ends_s[p : m - 1] = ends_s[p + 1 : m]
            m -= 1
        while i < n and submit[i] == t:
            if size[i] <= capacity:
                queue[qlen] = i
                qlen += 1
            i += 1
        h = 0
        while h < qlen and size[queue[h]] <= free:
            k = queue[h]
            starts[k] = t
            free -= size[k]
            heapq.heappush(heap, (t + min(run[k], est[k]), k))
            e = est_end[k] = t + est[k]
            p = np.searchsorted(ends_t[:m], e, side="right")
            ends_t[p + 1 : m + 1] = ends_t[p:m].copy()
            ends_k[p + 1 : m + 1] = ends_k[p:m].copy()
            ends_s[p + 1 : m + 1] = ends_s[p:m].copy()
            ends_t[p], ends_k[p], ends_s[p] = e, k, size[k]
            m += 1
            h += 1
        if h:
            queue[: qlen - h] = queue[h:qlen].copy()
            qlen -= h
        if qlen == 0 or free == 0:
            continue
        need = size[queue[0]]
        avail, shadow, extra = free, inf, 0
        for j in range(m):
            avail += ends_s[j]
            if avail >= need and (j + 1 == m or ends_t[j + 1] != ends_t[j]):
                shadow, extra = ends_t[j], avail - need
                break
        w = 1
        q = 1
        while q < qlen:
            k = queue[q]
            q += 1
            s = size[k]
            if s <= free:
                ok = True
                if t + est[k] > shadow:
                    if s > extra:
                        ok = False
                    else:
                        extra -= s
                if ok:
                    starts[k] = t
                    free -= s
                    heapq.heappush(heap, (t + min(run[k], est[k]), k))
                    e = est_end[k] = t + est[k]
                    p = np.searchsorted(ends_t[:m], e, side="right")
                    ends_t[p + 1 : m + 1] = ends_t[p:m].copy()
                    ends_k[p + 1 : m + 1] = ends_k[p:m].copy()
                    ends_s[p + 1 : m + 1] = ends_s[p:m].copy()
                    ends_t[p], ends_k[p], ends_s[p] = e, k, s
                    m += 1
                    if free == 0:
                        break
                    continue
            queue[w] = k
            w += 1
        rest = qlen - q
        queue[w : w + rest] = queue[q:qlen].copy()
        qlen = w + rest
    return starts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default="lublin256-swf,lublin-1m,fat64-nodes,overload-sdsc")
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hpcgym-scale")
    args = ap.parse_args()
    print(
        "| shape | jobs | numba EASY CPU s | jobs/s | plain-Python bare EASY CPU s "
        "| engine EASY CPU s | engine / numba |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in args.only.split(","):
        shape = SHAPE[key]
        n = shape.jobs if args.max_jobs is None else min(shape.jobs, args.max_jobs)
        with np.load(cached(shape, n, args.cache)) as f:
            d = {k: f[k] for k in f.files}
        submit, run, size = d["submit"], d["work"], d["size"]
        est = np.where(np.isnan(d["walltime"]), run, d["walltime"])
        cap = int(d["machine"][0])
        easy_numba(submit[:10], run[:10], est[:10], size[:10], cap)  # compile
        best = np.inf
        for _ in range(args.repeat):
            c0 = time.process_time()
            fast = easy_numba(submit, run, est, size, cap)
            best = min(best, time.process_time() - c0)
        c0 = time.process_time()
        plain = np.array(bare_easy(specs_of(d), cap))
        plain_cpu = time.process_time() - c0
        engine_cpu = np.inf
        for _ in range(args.repeat):
            engine, cpu, _ = run_engine(d, "easy")  # ``sim.run``: the batch core, the table
            engine_cpu = min(engine_cpu, cpu)
        for name, other in (("plain-Python bare loop", plain), ("engine", engine)):
            if not np.array_equal(fast, other, equal_nan=True):
                raise SystemExit(f"{key}: the numba loop and the {name} disagree")
        jobs = len(submit)
        print(
            f"| {key} | {jobs:,} | {best:.3f} | {jobs / best:,.0f} | {plain_cpu:.3f} "
            f"| {engine_cpu:.3f} | {engine_cpu / best:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
