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
  start on, a subset of what it occupied before. ``replan`` is that pass (the tests keep a
  scheduler doing exactly that as their oracle, ``tests/baselines/conservative_replan.py``);
  ``ConservativeBackfill`` (registered as ``conservative``) gives the same schedule while
  re-placing only the jobs whose reservation can change.
"""

from __future__ import annotations

import bisect
import heapq
import math
from typing import Any, ClassVar, Final, cast, final

from mypy_extensions import mypyc_attr

from hpcgym.baselines.availability import Profile, shadow
from hpcgym.baselines.base import (
    OVERRUN_GRACE,
    BaseScheduler,
    estimated_end,
    runtime_estimate,
    single_cluster,
)
from hpcgym.sim import EventType, Job, JobState, Simulator
from hpcgym.sim.batch import EASY as BATCH_EASY
from hpcgym.sim.batch import FCFS as BATCH_FCFS

# Module functions as finals: a compiled module reads a final from a C static, any other
# global from its namespace dict, by name, at every use.
_bisect_left: Final = bisect.bisect_left
_insort: Final = bisect.insort
_SUBMITTED: Final = EventType.SUBMITTED
_QUEUED: Final = JobState.QUEUED
SCAN_STEPS = 64
"""Queued jobs EASY's pass scans in submission order for jobs ending by the shadow time before
it takes the rest of them from the estimate-sorted records (both give the same starts; chosen
on ``benchmarks/scale.py``'s shapes: the scan usually fills the free nodes within a few dozen
jobs)."""
SCAN_FROM = 256
"""Short jobs (ending by the shadow time) above which EASY scans for them at all."""
_COMPLETED: Final = EventType.COMPLETED
_KILLED: Final = EventType.KILLED
_REJECTED: Final = EventType.REJECTED
_TICK: Final = EventType.TICK
_WAKEUP: Final = EventType.WAKEUP


class FCFS(BaseScheduler):
    """First come, first served, without backfilling."""

    name = "fcfs"
    batch_policy: ClassVar[int] = BATCH_FCFS
    """Runs of rigid jobs go to the C batch core (``hpcgym.sim.batch``)."""

    def schedule(self, sim: Simulator) -> None:
        """Start queued jobs in submission order until one does not fit."""
        free = sim.pool.free
        if len(free) != 1:
            single_cluster(sim, self.name)
        # Method calls, not bound methods kept in locals: compiled, these are native calls.
        # ``_want`` and ``_id``: ``spec.nodes`` and ``id`` kept by the job as native fields.
        # A subclass (``ShadowSimulator``, say) may override ``start``: only a plain
        # ``Simulator`` is given the head directly (``start`` without the id's lookup).
        plain = type(sim) is Simulator
        while (job := sim.queue_head()) is not None and job._want <= free[0]:
            if plain:
                sim._start_job(job, job._want, None, None, None)
            else:
                # ``_key``: the id as the spec's own ``int`` object (``_id`` passed would be
                # boxed anew); ``Any`` so that nothing converts it on the way.
                sim.start(cast(Any, job._key))


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
            single_cluster(sim, self.name)
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

    Bookkeeping, so that a pass reads no job attribute twice and looks at few jobs: a copy of
    the queue as records (``_Rec``: nodes, estimate, id, submission sequence number) in
    submission order, the same records sorted by estimate, and the running jobs' records sorted
    by estimated end.

    - A pass at which jobs were only submitted (nothing ended, the head did not change)
      checks only the new jobs: free nodes, shadow time and extra nodes are as the previous
      pass left them, and time moving on only makes "ends by the shadow time" harder, so no
      job refused then can start now.
    - When the head leaves no extra node, only jobs that end by the shadow time can start:
      a bisection of the estimate-sorted records counts them, and the pass finds them in
      submission order: a short scan of the queue, which usually fills the free nodes, then
      the remaining short jobs that fit, from the estimate-sorted records
      (``_backfill_short``). Otherwise it checks the whole queue, in order, until no node is
      left.

    Attributes:
        reservation: ``(job id, shadow time)`` of the blocked head job after the last pass,
            or ``None`` when the queue was empty or its head started.
    """

    name = "easy"
    batch_policy: ClassVar[int] = BATCH_EASY
    """Runs of rigid jobs go to the C batch core (``hpcgym.sim.batch``)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode."""
        # Keyed by the ids as the specs' own ``int`` objects (``Job._key``): nothing is boxed.
        self._queue: dict[object, _Rec] = {}
        self._by_est: list[_Rec] = []
        """The queued records by ``(est, seq)``."""
        self._ends: list[_Rec] = []
        """The running jobs' records by ``(end, id)``."""
        self._key: dict[object, _Rec] = {}
        """The running jobs' records by id."""
        self._seq = 0
        self._extra = 0
        self._dead = 0
        """Records deleted from ``_queue`` since it was last rebuilt."""
        self.reservation: tuple[int, float] | None = None
        self._plain = False
        """The simulator of this decision point is a plain ``Simulator`` (see ``_start``)."""

    def _sync(self, sim: Simulator, new: list[_Rec]) -> bool:
        """Follow what happened: new jobs into the queue copy, ended jobs out of the ends.

        Returns:
            Whether anything but submissions happened (then every queued job is checked).
        """
        queue, by_est, ends, key = self._queue, self._by_est, self._ends, self._key
        full = False
        # ``sim.happened`` read from the engine's own record (kind, job, kind, job...): the
        # same events, without building the list of pairs at every decision point.
        events = sim._events
        for i in range(0, 2 * sim._n_events, 2):
            event = events[i]
            job = cast("Job | None", events[i + 1])
            if job is None:
                # A tick or a wake-up: nothing to follow, but time moved; check every job.
                full = True
                continue
            if event is _SUBMITTED:
                # ``JobSpec`` attributes are Python-level lookups: the job's native fields
                # instead, but for the walltime (``Job._walltime`` is the current limit, which
                # ``set_walltime`` may have changed; the estimate is the spec's).
                spec = job.spec
                w = spec.walltime
                seq = self._seq = self._seq + 1
                rec = _Rec(spec.work if w is None else w, seq, job._want, job._id, job._key, job)
                queue[job._key] = rec
                _insort_est(by_est, rec)
                new.append(rec)
                continue
            full = True
            if event is _COMPLETED or event is _KILLED:
                k = key.pop(job._key, None)
                if k is not None:
                    del ends[_find_end(ends, k)]
        # The engine's own lists (``sim.running``, ``sim.queue`` are read-only views of them).
        if len(key) != len(sim._running) or len(queue) != len(sim._queue):
            self._reload(sim)
            full = True
        return full

    def _reload(self, sim: Simulator) -> None:
        """Read queue and running jobs back from the simulator (something else changed them)."""
        self._queue = {
            jid: _Rec(runtime_estimate(j.spec), seq, j.spec.nodes, j.spec.id, jid, j)
            for seq, (jid, j) in enumerate(sim.queue.items(), self._seq + 1)
        }
        self._seq += len(self._queue)
        self._dead = 0
        self._by_est = sorted(self._queue.values(), key=_est_order)
        key: dict[object, _Rec] = {}
        for jid, j in sim.running.items():
            rec = _Rec(runtime_estimate(j.spec), 0, j.size, j.spec.id, jid, j)
            rec.end = j.start_time + rec.est
            key[jid] = rec
        self._key = key
        self._ends = sorted(key.values(), key=_end_order)

    def _start(self, sim: Simulator, rec: _Rec) -> None:
        """Start a queued record's job at its requested size.

        On a plain ``Simulator``, the job the record holds goes straight to ``_start_job``
        (``start`` without the id's lookup and the argument checks; ``rec.n``, its size, was
        checked against the free nodes by the caller), as FCFS does. A subclass may override
        ``start`` (``ShadowSimulator`` records the commands), and a job no longer queued
        takes ``start``'s refusal: both go through ``start``.
        """
        job = rec.job
        if self._plain and job._state is _QUEUED:
            sim._start_job(job, job._want, None, None, None)
        else:
            sim.start(cast(Any, rec.key))

    def _started(self, rec: _Rec, end: float) -> None:
        """Move a record that just started from the queue copies to the running ends."""
        del self._queue[rec.key]
        self._dead += 1
        by_est = self._by_est
        del by_est[_find_est(by_est, rec)]
        rec.end = end
        self._key[rec.key] = rec
        _insort_end(self._ends, rec)

    def _shadow(self, now: float, free: int, need: int) -> tuple[float, int]:
        """``profile.shadow`` over the running jobs' estimated ends, inlined (a hot path)."""
        ends = self._ends
        if ends and ends[0].end <= now:
            # A job outlived its estimate: take the general path.
            return shadow(
                now,
                free,
                need,
                ((r.end if r.end > now else now + OVERRUN_GRACE, r.n) for r in ends),
            )
        avail = free
        i, m = 0, len(ends)
        while i < m:
            r = ends[i]
            t = r.end
            avail += r.n
            i += 1
            if avail >= need:
                while i < m and ends[i].end == t:
                    avail += ends[i].n
                    i += 1
                return t, avail - need
        return math.inf, 0

    def schedule(self, sim: Simulator) -> None:
        """Start the head jobs that fit, then backfill behind the head's reservation."""
        if len(sim.pool.free) != 1:
            single_cluster(sim, self.name)
        self._plain = type(sim) is Simulator
        new: list[_Rec] = []
        full = self._sync(sim, new)
        if self._dead > 64 + (len(self._queue) >> 2):
            # A dict keeps a deleted entry's slot until it grows: the queue's front, where
            # each pass starts, fills with them (iterations step over them).
            self._queue = dict(self._queue)
            self._dead = 0
        queue = self._queue
        now = sim.now
        free_list = sim.pool.free
        heads: list[_Rec] = []
        head: _Rec | None = None
        for rec in queue.values():
            if rec.n > free_list[0]:
                head = rec
                break
            self._start(sim, rec)
            heads.append(rec)
        if head is None:
            for rec in heads:
                self._started(rec, now + rec.est)
            self.reservation = None
            return
        if heads:
            full = True
            for h in heads:
                self._started(h, now + h.est)
        need = head.n
        free = free_list[0]
        res = self.reservation
        if full or res is None or res[0] != head.jid:
            t_shadow, extra = self._shadow(now, free, need)
            self.reservation = (cast(Any, head.key), t_shadow)
            if extra or not free:
                self._extra = self._backfill(sim, now, free, t_shadow, extra) if free else extra
                return
            # Only jobs that end by the shadow time can start (a little slack: the loop
            # checks); they are a prefix of the estimate-sorted records.
            limit = (t_shadow - now) * (1 + 1e-12) + 1e-9
            short = _count_within(self._by_est, limit)
            if short:
                self._backfill_short(sim, now, free, t_shadow, limit, short)
            self._extra = 0
            return
        t_shadow, extra = res[1], self._extra
        if free:
            started: list[_Rec] = []
            for rec in new:
                n = rec.n
                if n > free:
                    continue
                end = now + rec.est
                if end > t_shadow:
                    if n > extra:
                        continue
                    extra -= n
                self._start(sim, rec)
                started.append(rec)
                free -= n
                if free == 0:
                    break
            for rec in started:
                self._started(rec, now + rec.est)
        self._extra = extra

    def _backfill(self, sim: Simulator, now: float, free: int, t_shadow: float, extra: int) -> int:
        """Start the queued jobs that fit now, in order; returns the extra nodes left.

        A job starts when it ends by the shadow time or uses only extra nodes. The loop of
        ``schedule`` over the new jobs, here over the whole queue: each loops over a typed
        collection, which a compiled build iterates natively.
        """
        started: list[_Rec] = []
        for rec in self._queue.values():
            n = rec.n
            if n > free:
                continue
            end = now + rec.est
            if end > t_shadow:
                if n > extra:
                    continue
                extra -= n
            self._start(sim, rec)
            started.append(rec)
            free -= n
            if free == 0:
                break
        for rec in started:
            self._started(rec, now + rec.est)
        return extra

    def _backfill_short(
        self, sim: Simulator, now: float, free: int, t_shadow: float, limit: float, short: int
    ) -> None:
        """Start, in submission order, the jobs that fit now and end by the shadow time.

        The first ``short`` records of the estimate-sorted copy have an estimate within
        ``limit``; only they can start. The pass scans the queue in submission order for at
        most ``SCAN_STEPS`` jobs (it usually fills the free nodes or meets every short job
        sooner); if neither happened, the short jobs after the scanned ones that fit now are
        taken from the estimate-sorted copy and put back in submission order.
        """
        started: list[_Rec] = []
        left = short
        # Up to a few hundred short jobs, filtering and sorting them beats a scan; past that,
        # the scan usually fills the free nodes first.
        steps = SCAN_STEPS if short > SCAN_FROM else 0
        last = -1  # submission sequence number of the last job the scan looked at
        for rec in self._queue.values():
            if not steps:
                break
            steps -= 1
            last = rec.seq
            est = rec.est
            if est > limit:
                continue
            n = rec.n
            if n <= free and now + est <= t_shadow:
                self._start(sim, rec)
                started.append(rec)
                free -= n
                if not free:
                    break
            left -= 1
            if not left:
                break
        if free and left:
            # The short jobs behind the scanned ones that fit, in submission order. Free nodes
            # only shrink, so the next to start is always the earliest submitted of those that
            # fit now: picked by a scan of them (a start is usually one of few), until
            # ``PICKS`` starts, after which the rest are sorted.
            by_est = self._by_est
            fit: list[_Rec] = []
            for i in range(short):
                r = by_est[i]
                if r.n <= free and r.seq > last and now + r.est <= t_shadow:
                    fit.append(r)
            picks = 0
            while free and fit:
                if picks == _PICKS:
                    fit.sort(key=_seq_order)
                    for r in fit:
                        n = r.n
                        if n <= free:
                            self._start(sim, r)
                            started.append(r)
                            free -= n
                            if not free:
                                break
                    break
                best = -1
                first = 0
                for i in range(len(fit)):
                    r = fit[i]
                    if r.n <= free and (best < 0 or r.seq < first):
                        best = i
                        first = r.seq
                if best < 0:
                    break
                r = fit[best]
                self._start(sim, r)
                started.append(r)
                free -= r.n
                fit[best] = fit[-1]
                fit.pop()
                picks += 1
        for rec in started:
            self._started(rec, now + rec.est)


@final
@mypyc_attr(serializable=True)
class _Rec:
    """A job for EASY: estimate, submission order, nodes, id, estimated end once running.

    The id both as a machine integer (``jid``, compared) and as the spec's own ``int`` object
    (``key``, for dict keys and ``sim.start``: nothing boxed).

    A native record rather than a tuple: compiled, the orders compare machine floats and ints.
    """

    __slots__ = ("end", "est", "jid", "job", "key", "n", "seq")

    def __init__(self, est: float, seq: int, n: int, jid: int, key: object, job: Job) -> None:
        self.est = est
        self.seq = seq
        self.n = n
        self.jid = jid
        self.key = key
        self.job = job
        self.end = 0.0


def _est_order(r: _Rec) -> tuple[float, int]:
    return (r.est, r.seq)


def _end_order(r: _Rec) -> tuple[float, int]:
    return (r.end, r.jid)


_PICKS: Final = 16
"""Starts ``_backfill_short`` finds by scanning its short jobs before it sorts them."""


def _seq_order(r: _Rec) -> int:
    return r.seq


def _est_before(a: _Rec, b: _Rec) -> bool:
    """``(a.est, a.seq) < (b.est, b.seq)``, without the tuples."""
    if a.est != b.est:
        return a.est < b.est
    return a.seq < b.seq


def _end_before(a: _Rec, b: _Rec) -> bool:
    """``(a.end, a.jid) < (b.end, b.jid)``, without the tuples."""
    if a.end != b.end:
        return a.end < b.end
    return a.jid < b.jid


def _insort_est(recs: list[_Rec], rec: _Rec) -> None:
    """``bisect.insort`` by ``_est_before``."""
    lo, hi = 0, len(recs)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _est_before(rec, recs[mid]):
            hi = mid
        else:
            lo = mid + 1
    recs.insert(lo, rec)


def _insort_end(recs: list[_Rec], rec: _Rec) -> None:
    """``bisect.insort`` by ``_end_before``."""
    lo, hi = 0, len(recs)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _end_before(rec, recs[mid]):
            hi = mid
        else:
            lo = mid + 1
    recs.insert(lo, rec)


def _find_est(recs: list[_Rec], rec: _Rec) -> int:
    """``bisect.bisect_left`` by ``_est_before``: where ``rec`` is."""
    lo, hi = 0, len(recs)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _est_before(recs[mid], rec):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _find_end(recs: list[_Rec], rec: _Rec) -> int:
    """``bisect.bisect_left`` by ``_end_before``: where ``rec`` is."""
    lo, hi = 0, len(recs)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _end_before(recs[mid], rec):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _count_within(recs: list[_Rec], limit: float) -> int:
    """Records (sorted by estimate) with an estimate within ``limit`` (``bisect_right``)."""
    lo, hi = 0, len(recs)
    while lo < hi:
        mid = (lo + hi) >> 1
        if limit < recs[mid].est:
            hi = mid
        else:
            lo = mid + 1
    return lo


class ConservativeBackfill(BaseScheduler):
    """Conservative backfilling: a reservation for every queued job.

    Gives the schedule of a full ``replan`` at every pass (the module doc's definition: every pass
    re-places every queued job, in the order of their reservations, at its earliest slot),
    start for start, without re-placing the jobs whose reservation cannot change.

    The profile of the last pass (running jobs' estimated ends and every reservation) is
    kept. Re-placing the queued jobs in the order of their reservations gives job ``J``
    (reserved at ``r``) exactly ``r`` again when the jobs before it kept theirs and the
    running jobs' part of the profile from ``now`` on gained nothing: its old slot is still
    free, and any earlier start it could take it could have taken then. So:

    - When since the last pass jobs were only submitted, or ended at their estimated end (or
      killed there), and no running job outlived its estimate, no reservation moves: the
      pass advances the kept profile to ``now``, starts the jobs whose reservation is now
      and places only the new jobs, in submission order. With exact estimates every pass is
      such a pass.
    - When jobs ended before their estimated end, the profile gains their nodes until then,
      and a queued job can move up only into a window holding a time where more nodes are
      free than in the last pass (the gain, or a slot a job moved away from, the *spans*).
      Before its own reservation, the kept profile is exactly what the re-placement sees
      at that job; on its own slot, enough nodes are free in any case (no reservation moves
      later), so the job's new start is the earliest start before ``r`` from which its
      nodes stay free until ``r`` (or its estimated end) in the kept profile. Only jobs no
      larger than the most nodes free in the spans are searched, for starts before the
      spans end.
    - Anything else (a command from elsewhere, an overrun, a reconfiguration) re-plans
      the whole queue (``replan``).

    Attributes:
        reservations: Planned start of every queued job after the last pass (jobs started in
            that pass are not in it).
        replans: Passes that re-planned the whole queue.
    """

    name = "conservative"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode's reservations."""
        self.reservations: dict[int, float] = {}
        self.replans = 0
        self._profile: Profile | None = None
        # Queued jobs by reservation: ``(start, submission seq, id, nodes, estimate)``.
        self._order: list[tuple[float, int, int, int, float]] = []
        self._seq = 0
        # Estimated end and nodes of every running job; the ends as a heap (stale entries
        # are skipped).
        self._ends: dict[int, tuple[float, int]] = {}
        self._end_heap: list[tuple[float, int]] = []

    def schedule(self, sim: Simulator) -> None:
        """Start the jobs whose reservation is now, move reservations up, place new jobs."""
        single_cluster(sim, self.name)
        now = sim.now
        new: list[Job] = []
        early: list[tuple[float, int]] = []
        profile = self._profile
        if profile is None or self._follow(sim, now, new, early):
            self._replan(sim, now)
            return
        profile.advance(now)
        for end, size in early:
            profile.release(end, size)
        order = self._order
        k = 0
        due_nodes = 0
        while k < len(order) and order[k][0] <= now:
            if order[k][0] != now:
                self._replan(sim, now)  # a reservation in the past: re-plan
                return
            due_nodes += order[k][3]
            k += 1
        if profile.free[0] != sim.pool.free[0] - due_nodes:
            self._replan(sim, now)  # the kept profile disagrees with the machine: re-plan
            return
        reservations = self.reservations
        for rec in order[:k]:
            del reservations[rec[2]]
            self._start(sim, rec[2], now + rec[4], rec[3])
        del order[:k]
        if early:
            self._move_up(sim, now, [(now, end) for end, _ in early])
        for job in new:
            spec = job.spec
            jid = spec.id
            est = runtime_estimate(spec)
            t = profile.earliest(spec.nodes, est)
            if t == now:
                self._start(sim, jid, now + est, spec.nodes)
            else:
                reservations[jid] = t
                _insort(order, (t, self._seq, jid, spec.nodes, est))
                self._seq += 1
            if t < math.inf:
                profile.reserve(t, est, spec.nodes)

    def _start(self, sim: Simulator, jid: int, end: float, nodes: int) -> None:
        sim.start(jid)
        self._ends[jid] = (end, nodes)
        heapq.heappush(self._end_heap, (end, jid))

    def _follow(
        self, sim: Simulator, now: float, new: list[Job], early: list[tuple[float, int]]
    ) -> bool:
        """Read what happened: new jobs, jobs that ended early; whether to re-plan instead."""
        ends = self._ends
        for event, job in sim.happened:
            if event is _SUBMITTED:
                new.append(job)  # type: ignore[arg-type]
            elif event is _COMPLETED or event is _KILLED:
                known = ends.pop(job.spec.id, None)  # type: ignore[union-attr]
                if known is None or known[0] < now:
                    return True
                if known[0] > now:
                    early.append(known)
            elif event is not _REJECTED and event is not _TICK and event is not _WAKEUP:
                return True
        end_heap = self._end_heap
        while end_heap:
            end, jid = end_heap[0]
            known = ends.get(jid)
            if known is not None and known[0] == end:
                if end <= now:
                    return True  # a running job outlived its estimate
                break
            heapq.heappop(end_heap)
        # Something else started or removed jobs:
        return len(ends) != len(sim.running) or len(self._order) + len(new) != len(sim.queue)

    def _move_up(self, sim: Simulator, now: float, spans: list[tuple[float, float]]) -> None:
        """Re-place the queued jobs, in order, after nodes came free early in ``spans``."""
        profile = self._profile
        assert profile is not None
        order = self._order
        reservations = self.reservations
        most = profile.most_free(spans)
        hi = max(b for _, b in spans)
        moved: list[tuple[tuple[float, int, int, int, float], float]] = []
        for rec in order[:]:
            size = rec[3]
            if size > most:
                continue
            r, est = rec[0], rec[4]
            t = profile.earliest_before(size, est, r if r < hi else hi, r)
            if t == math.inf:
                continue
            profile.unreserve(r, est, size)
            profile.reserve(t, est, size)
            moved.append((rec, t))
            jid = rec[2]
            if t == now:
                del reservations[jid]
                self._start(sim, jid, now + est, size)
            else:
                reservations[jid] = t
            if r + est > hi:
                hi = r + est
            # An upper bound is enough: the search decides.
            vacated = profile.most_free([(r, r + est)])
            if vacated > most:
                most = vacated
        for rec, t in moved:
            del order[_bisect_left(order, rec)]
            if t != now:
                _insort(order, (t, rec[1], rec[2], rec[3], rec[4]))

    def _replan(self, sim: Simulator, now: float) -> None:
        """A full ``replan`` pass; keeps its profile and reservations for the next."""
        self.replans += 1
        profile, new = replan(sim, now, self.reservations)
        self.reservations = new
        self._profile = profile
        queue = sim.queue
        # Ties in the next passes' order go by queue position, as here.
        self._order = sorted(
            (new[jid], i, jid, j.spec.nodes, runtime_estimate(j.spec))
            for i, (jid, j) in enumerate(queue.items())
            if jid in new
        )
        self._seq = len(queue)
        self._ends = ends = {jid: (estimated_end(sim, j), j.size) for jid, j in sim.running.items()}
        self._end_heap = [(t, jid) for jid, (t, _) in ends.items()]
        heapq.heapify(self._end_heap)


def replan(
    sim: Simulator, now: float, reservations: dict[int, float]
) -> tuple[Profile, dict[int, float]]:
    """Conservative backfilling's full pass: every queued job re-placed at its earliest slot.

    Jobs go in the order of their previous reservations (``reservations``; new jobs last, ties
    by queue position); a job whose slot is ``now`` starts. Returns the profile with every
    reservation in it and the planned start of each job still queued.
    """
    profile = Profile(
        now,
        sim.pool.free[0],
        ((estimated_end(sim, j), j.size) for j in sim.running.values()),
    )
    order = sorted(
        (
            (reservations.get(jid, math.inf), i, job)
            for i, (jid, job) in enumerate(sim.queue.items())
        ),
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
    return profile, new
