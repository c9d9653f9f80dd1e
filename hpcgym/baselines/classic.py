"""The classic batch schedulers: FCFS, SJF, EASY and conservative backfilling.

All four have rigid semantics: a job starts at its requested size on whole idle nodes of a
single-cluster platform, and is never resized. They plan with the runtime estimate rule of
``hpcgym.baselines.base`` (walltime, else true work).

- ``FCFS``: jobs start in submission order; the first that does not fit blocks the rest.
- ``SJF``: the same with the shortest estimate first (ties by submission order).
- ``EasyBackfill``: FCFS, and when the head job does not fit it gets a reservation at the
  *shadow time* (when enough running jobs will have ended); any other job, in submission
  order, may start now if it fits and either ends by the shadow time or uses only the nodes
  the head job leaves spare then (the *extra* nodes).
- ``ConservativeBackfill``: every queued job holds a reservation in an availability profile;
  a job starts when its reservation is now. At each decision point the profile is rebuilt and
  the queued jobs are re-placed in the order of their previous reservations (new jobs last, in
  submission order), each at its earliest slot: no reservation ever moves later as long as
  estimates bound run times, because every job placed before one occupies, from that job's old
  start on, a subset of what it occupied before.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort

from hpcgym.baselines.base import (
    OVERRUN_GRACE,
    BaseScheduler,
    estimated_end,
    runtime_estimate,
)
from hpcgym.baselines.profile import Profile, shadow
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, Job, Simulator

_SUBMITTED = EventType.SUBMITTED
_COMPLETED = EventType.COMPLETED
_KILLED = EventType.KILLED


def _single_cluster(sim: Simulator, name: str) -> None:
    if len(sim.platform.clusters) != 1:
        raise SpecError(
            f"{name} schedules a single cluster; this platform has "
            f"{len(sim.platform.clusters)}. Use a multicluster scheduler (koala)."
        )


class FCFS(BaseScheduler):
    """First come, first served, without backfilling."""

    name = "fcfs"

    def schedule(self, sim: Simulator) -> None:
        """Start queued jobs in submission order until one does not fit."""
        free = sim.pool.free
        if len(free) != 1:
            _single_cluster(sim, self.name)
        head = sim.queue_head
        start = sim.start
        while (job := head()) is not None and job.spec.nodes <= free[0]:
            start(job.spec.id)


class SJF(BaseScheduler):
    """Shortest (estimated) job first, without backfilling."""

    name = "sjf"

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Job]] = []
        self._seq = 0

    def reset(self) -> None:
        """Forget the previous episode's queue."""
        self._heap = []
        self._seq = 0

    def schedule(self, sim: Simulator) -> None:
        """Start queued jobs, shortest estimate first, until one does not fit."""
        heap = self._heap
        for event, job in sim.happened:
            if event is _SUBMITTED and job is not None:
                self._seq += 1
                heapq.heappush(heap, (runtime_estimate(job.spec), self._seq, job))
        free = sim.pool.free
        if len(free) != 1:
            _single_cluster(sim, self.name)
        queue = sim.queue
        while heap:
            job = heap[0][2]
            jid = job.spec.id
            if jid not in queue:
                heapq.heappop(heap)
                continue
            if job.spec.nodes > free[0]:
                return
            heapq.heappop(heap)
            sim.start(jid)


class EasyBackfill(BaseScheduler):
    """EASY backfilling: one reservation, for the head of the queue.

    It keeps its own copy of the queue as ``(nodes, estimate, id)`` records in submission
    order, and the running jobs' estimated ends sorted, so that a pass reads no job attribute
    twice. A pass at which jobs were only submitted (nothing ended, the head did not change)
    checks only the new jobs: free nodes, shadow time and extra nodes are as the previous
    pass left them, and time moving on only makes "ends by the shadow time" harder, so no job
    refused then can fit now.

    Attributes:
        reservation: ``(job id, shadow time)`` of the blocked head job after the last pass,
            or ``None`` when the queue was empty or its head started.
    """

    name = "easy"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode."""
        self._queue: dict[int, tuple[int, float, int]] = {}
        self._ends: list[tuple[float, int, int]] = []
        self._key: dict[int, tuple[float, int, int]] = {}
        self._extra = 0
        self.reservation: tuple[int, float] | None = None

    def _sync(self, sim: Simulator, new: list[tuple[int, float, int]]) -> bool:
        """Follow what happened: new jobs into the queue copy, ended jobs out of the ends.

        Returns:
            Whether anything but submissions happened (then every queued job is checked).
        """
        queue, ends, key = self._queue, self._ends, self._key
        full = False
        for event, job in sim.happened:
            spec = job.spec  # type: ignore[union-attr]
            if event is _SUBMITTED:
                w = spec.walltime
                rec = (spec.nodes, spec.work if w is None else w, spec.id)
                queue[spec.id] = rec
                new.append(rec)
                continue
            full = True
            if event is _COMPLETED or event is _KILLED:
                k = key.pop(spec.id, None)
                if k is not None:
                    del ends[bisect_left(ends, k)]
        if len(key) != len(sim.running) or len(queue) != len(sim.queue):
            self._reload(sim)
            full = True
        return full

    def _reload(self, sim: Simulator) -> None:
        """Read queue and running jobs back from the simulator (something else changed them)."""
        self._queue = {
            jid: (j.spec.nodes, runtime_estimate(j.spec), jid) for jid, j in sim.queue.items()
        }
        self._key = {
            jid: (j.start_time + runtime_estimate(j.spec), jid, j.size)
            for jid, j in sim.running.items()
        }
        self._ends = sorted(self._key.values())

    def schedule(self, sim: Simulator) -> None:
        """Start the head jobs that fit, then backfill behind the head's reservation."""
        if len(sim.pool.free) != 1:
            _single_cluster(sim, self.name)
        new: list[tuple[int, float, int]] = []
        full = self._sync(sim, new)
        queue, ends, key = self._queue, self._ends, self._key
        now = sim.now
        free_list = sim.pool.free
        start = sim.start
        heads = []
        for need, est, hid in queue.values():
            if need > free_list[0]:
                break
            start(hid)
            k = (now + est, hid, need)
            key[hid] = k
            insort(ends, k)
            heads.append(hid)
        else:
            queue.clear()
            self.reservation = None
            return
        if heads:
            full = True
            for jid in heads:
                del queue[jid]
        free = free_list[0]
        res = self.reservation
        if full or res is None or res[0] != hid:
            t_shadow, extra = shadow(
                now, free, need, ((t if t > now else now + OVERRUN_GRACE, n) for t, _, n in ends)
            )
            self.reservation = (hid, t_shadow)
            candidates = queue.values()
        else:
            t_shadow, extra = res[1], self._extra
            candidates = new  # type: ignore[assignment]
        if free:
            started = []
            for n, est, jid in candidates:
                if n > free:
                    continue
                end = now + est
                if end > t_shadow:
                    if n > extra:
                        continue
                    extra -= n
                start(jid)
                k = (end, jid, n)
                key[jid] = k
                insort(ends, k)
                started.append(jid)
                free -= n
                if free == 0:
                    break
            for jid in started:
                del queue[jid]
        self._extra = extra


class ConservativeBackfill(BaseScheduler):
    """Conservative backfilling: a reservation for every queued job.

    Attributes:
        reservations: Planned start of every queued job after the last pass (jobs started in
            that pass are not in it).
    """

    name = "conservative"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode's reservations."""
        self.reservations: dict[int, float] = {}

    def schedule(self, sim: Simulator) -> None:
        """Re-place every queued job at its earliest slot and start those planned for now."""
        _single_cluster(sim, self.name)
        now = sim.now
        profile = Profile(
            now,
            sim.pool.free[0],
            ((estimated_end(sim, j), j.size) for j in sim.running.values()),
        )
        old = self.reservations
        order = sorted(
            ((old.get(jid, math.inf), i, job) for i, (jid, job) in enumerate(sim.queue.items())),
            key=lambda r: (r[0], r[1]),
        )
        new: dict[int, float] = {}
        for _, _, job in order:
            spec = job.spec
            est = runtime_estimate(spec)
            t = profile.earliest(spec.nodes, est)
            if t == now:
                sim.start(spec.id)
            else:
                new[spec.id] = t
            if t < math.inf:
                profile.reserve(t, est, spec.nodes)
        self.reservations = new
