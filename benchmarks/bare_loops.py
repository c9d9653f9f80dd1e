"""Plain-Python FCFS and EASY loops over tuples: the reference the engine is measured against.

No engine, no job objects, no metrics: a heap of real ends, a free-unit counter and a list
queue, as a user would write in an afternoon. The unit is whatever the caller's sizes count
(nodes when a trace is rounded up to whole nodes, processors when it is not): the loops only
compare sizes with ``capacity``, as the engine's whole-node fast path does with its idle nodes.

Both follow the rules of ``hpcgym.baselines.make("fcfs")`` and ``make("easy")`` on the bare
``Simulator``, so their start times must equal the engine's job for job:

- a job runs ``min(run, estimate)`` (it is killed at its walltime); the estimate is the walltime,
  else the true run time;
- every completion and every submission at one instant is seen before a pass;
- a job larger than the machine is refused at submission (start ``nan``), as the engine
  rejects it;
- FCFS starts the queue head while it fits; EASY does the same, then gives the blocked head a
  reservation at its *shadow time* (the earliest estimated end at which enough units are free,
  with every job ending at that instant counted) and starts, in submission order, every other
  job that fits now and either ends by the shadow time or fits in the *extra* units the head
  leaves spare then.

``specs`` is a list of ``(submit, run, estimate, size)`` in submission order (ties in the
engine's order); the loops return each job's start time in the same order.
"""

from __future__ import annotations

import bisect
import heapq
import math

Spec = tuple[float, float, float, int]
"""One job: submit time, run time, runtime estimate (walltime, else run time), size in units."""


def bare_fcfs(specs: list[Spec], capacity: int) -> list[float]:
    """First come, first served without backfilling: start times (``nan``: refused)."""
    n, inf = len(specs), math.inf
    starts = [math.nan] * n
    free = capacity
    heap: list[tuple[float, int]] = []  # (real end, size)
    queue: list[int] = []
    head = 0  # queue[head:] waits; the prefix is dropped now and then
    i = 0
    while i < n or heap:
        t = heap[0][0] if heap else inf
        if i < n and specs[i][0] < t:
            t = specs[i][0]
        while heap and heap[0][0] == t:
            free += heapq.heappop(heap)[1]
        while i < n and specs[i][0] == t:
            if specs[i][3] <= capacity:
                queue.append(i)
            i += 1
        while head < len(queue):
            k = queue[head]
            _, run, est, size = specs[k]
            if size > free:
                break
            starts[k] = t
            free -= size
            heapq.heappush(heap, (t + (run if run <= est else est), size))
            head += 1
        if head > 4096 and head * 2 > len(queue):
            del queue[:head]
            head = 0
    return starts


def bare_easy(specs: list[Spec], capacity: int) -> list[float]:
    """EASY backfilling (one reservation, for the queue head): start times (``nan``: refused).

    Each pass scans the whole queue behind the head, in submission order, whenever a unit is
    free: the plain loop the issue compares with, not an indexed one.
    """
    n, inf = len(specs), math.inf
    starts = [math.nan] * n
    free = capacity
    heap: list[tuple[float, int, int]] = []  # (real end, job, size)
    ends: list[tuple[float, int, int]] = []  # (estimated end, job, size), sorted
    key: dict[int, tuple[float, int, int]] = {}
    queue: list[int] = []
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
            if specs[i][3] <= capacity:
                queue.append(i)
            i += 1
        head = 0
        while head < len(queue) and specs[queue[head]][3] <= free:
            k = queue[head]
            _, run, est, size = specs[k]
            starts[k] = t
            free -= size
            heapq.heappush(heap, (t + (run if run <= est else est), k, size))
            key[k] = e = (t + est, k, size)
            bisect.insort(ends, e)
            head += 1
        if head:
            del queue[:head]
        if not queue or not free:
            continue
        need = specs[queue[0]][3]
        avail, shadow, extra = free, inf, 0
        for j, (end, _, size) in enumerate(ends):
            avail += size
            if avail >= need and (j + 1 == len(ends) or ends[j + 1][0] != end):
                shadow, extra = end, avail - need
                break
        started = []
        for q in range(1, len(queue)):
            k = queue[q]
            _, run, est, size = specs[k]
            if size > free:
                continue
            if t + est > shadow:
                if size > extra:
                    continue
                extra -= size
            starts[k] = t
            free -= size
            heapq.heappush(heap, (t + (run if run <= est else est), k, size))
            key[k] = e = (t + est, k, size)
            bisect.insort(ends, e)
            started.append(q)
            if not free:
                break
        for q in reversed(started):
            del queue[q]
    return starts


BARE = {"fcfs": bare_fcfs, "easy": bare_easy}
"""The bare loop of each baseline name."""
