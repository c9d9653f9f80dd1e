"""A plain-Python EASY loop whose pass does not scan the queue: the structure issue 20 asks for.

A prototype for the design, not used by hpcgym: it shows, on the shapes of ``scale.py``, what a
size-indexed queue buys in plain Python before any compiler. Same rules and start times as
``bare_loops.bare_easy`` (checked by ``python benchmarks/bare_indexed.py``).

The backfill pass of EASY starts, again and again, the *earliest-submitted* queued job that is
eligible now: size at most the free units, and either size at most the extra units or an
estimated end by the shadow time. Starting a job only lowers free and extra, so the eligible
set only shrinks during a pass, and "the earliest eligible job, repeatedly" is exactly the scan
in submission order. The queue is kept per size:

- per size, the queued jobs in submission order (a list with a moving head; started jobs are
  skipped lazily): the earliest job of a size that fits in the extra units is its head;
- per size, a min segment tree over that size's jobs ordered by estimate (ranks fixed when the
  loop starts, since every job of the trace is known), holding each queued job's submission
  index: the earliest job of a size that ends by the shadow time is a prefix minimum;
- the sizes present in the queue, sorted, so that a pass looks only at sizes that fit.

A pass then costs ``O((starts + 1) * sizes_that_fit * log(jobs of a size))`` instead of
``O(queue)``; nothing is copied or sorted per pass.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import defaultdict

from bare_loops import Spec

BIG = 1 << 62


class _SizeBucket:
    """The queued jobs of one size: a FIFO and a prefix-min tree by estimate."""

    __slots__ = ("ests", "fifo", "head", "rank", "tree", "width")

    def __init__(self, jobs: list[tuple[float, int]]) -> None:
        jobs.sort()
        self.ests = [e for e, _ in jobs]
        self.rank = {k: r for r, (_, k) in enumerate(jobs)}
        width = 1
        while width < len(jobs):
            width *= 2
        self.width = width
        self.tree = [BIG] * (2 * width)
        self.fifo: list[int] = []
        self.head = 0

    def set(self, k: int, value: int) -> None:
        tree = self.tree
        p = self.rank[k] + self.width
        tree[p] = value
        p >>= 1
        while p:
            a, b = tree[2 * p], tree[2 * p + 1]
            tree[p] = a if a < b else b
            p >>= 1

    def first_by(self, limit: float) -> int:
        """Earliest queued job with estimate <= ``limit`` (``BIG``: none)."""
        r = bisect.bisect_right(self.ests, limit)
        tree = self.tree
        best = BIG
        lo, hi = self.width, self.width + r
        while lo < hi:
            if lo & 1:
                if tree[lo] < best:
                    best = tree[lo]
                lo += 1
            if hi & 1:
                hi -= 1
                if tree[hi] < best:
                    best = tree[hi]
            lo >>= 1
            hi >>= 1
        return best


def bare_easy_indexed(specs: list[Spec], capacity: int) -> list[float]:
    """EASY start times, as ``bare_loops.bare_easy``, with a size-indexed queue."""
    n, inf = len(specs), math.inf
    starts = [math.nan] * n
    by_size: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for k, (_, _, est, size) in enumerate(specs):
        if size <= capacity:
            by_size[size].append((est, k))
    buckets = {s: _SizeBucket(jobs) for s, jobs in by_size.items()}
    present: list[int] = []  # sizes with queued jobs, sorted
    count: dict[int, int] = dict.fromkeys(buckets, 0)
    queued = [False] * n
    order: list[int] = []  # every queued job in submission order; started ones skipped lazily
    o_head = 0
    free = capacity
    heap: list[tuple[float, int, int]] = []
    ends: list[tuple[float, int, int]] = []
    key: dict[int, tuple[float, int, int]] = {}

    def start(k: int, t: float) -> None:
        nonlocal free
        _, run, est, size = specs[k]
        starts[k] = t
        free -= size
        queued[k] = False
        b = buckets[size]
        b.set(k, BIG)
        c = count[size] = count[size] - 1
        if not c:
            del present[bisect.bisect_left(present, size)]
        heapq.heappush(heap, (t + (run if run <= est else est), k, size))
        key[k] = e = (t + est, k, size)
        bisect.insort(ends, e)

    i = 0
    while i < n or heap:
        t = heap[0][0] if heap else inf
        if i < n and specs[i][0] < t:
            t = specs[i][0]
        while heap and heap[0][0] == t:
            _, k, size = heapq.heappop(heap)
            free += size
            del ends[bisect.bisect_left(ends, key.pop(k))]
        while i < n and specs[i][0] == t:
            size = specs[i][3]
            if size <= capacity:
                queued[i] = True
                order.append(i)
                b = buckets[size]
                b.fifo.append(i)
                b.set(i, i)
                c = count[size] = count[size] + 1
                if c == 1:
                    bisect.insort(present, size)
            i += 1
        while o_head < len(order) and not queued[order[o_head]]:
            o_head += 1
        while o_head < len(order) and specs[order[o_head]][3] <= free:
            start(order[o_head], t)
            while o_head < len(order) and not queued[order[o_head]]:
                o_head += 1
        if o_head > 4096 and o_head * 2 > len(order):
            del order[:o_head]
            o_head = 0
        if o_head == len(order) or not free:
            continue
        need = specs[order[o_head]][3]
        avail, shadow, extra = free, inf, 0
        for j, (end, _, size) in enumerate(ends):
            avail += size
            if avail >= need and (j + 1 == len(ends) or ends[j + 1][0] != end):
                shadow, extra = end, avail - need
                break
        # Every estimate that ends by the shadow time once added to t is <= limit (float
        # addition rounds by up to half an ulp of the sum); the found job is checked exactly.
        limit = shadow - t + 2 * math.ulp(shadow) if shadow < inf else inf
        while free:
            best = BIG
            for s in present[: bisect.bisect_right(present, free)]:
                b = buckets[s]
                if s <= extra:
                    fifo = b.fifo
                    h = b.head
                    while not queued[fifo[h]]:
                        h += 1
                    b.head = h
                    k = fifo[h]
                else:
                    k = b.first_by(limit)
                if k < best:
                    best = k
            if best == BIG:
                break
            _, _, est, size = specs[best]
            if t + est > shadow:
                if size > extra:
                    # Within the rounding slack but not by the shadow time: rare; fall back to
                    # the scan in submission order for the rest of this pass.
                    _scan_rest(specs, order, o_head, queued, t, shadow, extra, free, start)
                    break
                extra -= size
            start(best, t)
    return starts


def _scan_rest(specs, order, o_head, queued, t, shadow, extra, free, start) -> None:  # type: ignore[no-untyped-def]
    for k in order[o_head + 1 :]:
        if not queued[k]:
            continue
        _, _, est, size = specs[k]
        if size > free:
            continue
        if t + est > shadow:
            if size > extra:
                continue
            extra -= size
        start(k, t)
        free -= size
        if not free:
            break


def main() -> None:
    import argparse
    import sys
    import tempfile
    import time
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).parent))
    from bare_loops import bare_easy
    from scale import SHAPE, cached, specs_of

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=",".join(SHAPE))
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hpcgym-scale")
    args = ap.parse_args()
    print("| shape | jobs | bare EASY (scan) CPU s | indexed CPU s | scan / indexed |")
    print("|---|---:|---:|---:|---:|")
    for key in args.only.split(","):
        shape = SHAPE[key]
        n = shape.jobs if args.max_jobs is None else min(shape.jobs, args.max_jobs)
        with np.load(cached(shape, n, args.cache)) as f:
            d = {k: f[k] for k in f.files}
        specs, cap = specs_of(d), int(d["machine"][0])
        c0 = time.process_time()
        plain = bare_easy(specs, cap)
        c1 = time.process_time()
        fast = bare_easy_indexed(specs, cap)
        c2 = time.process_time()
        if not np.array_equal(np.array(plain), np.array(fast), equal_nan=True):
            raise SystemExit(f"{key}: the indexed loop and the scanning loop disagree")
        a, b = c1 - c0, c2 - c1
        print(f"| {key} | {len(specs):,} | {a:.3f} | {b:.3f} | {a / b:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
