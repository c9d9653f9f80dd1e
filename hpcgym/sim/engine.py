"""The discrete-event engine: time, progress, events and decision points.

A ``Simulator`` runs until something happened that a scheduler can act on, reports it in
``happened`` and waits; the scheduler reads the state and issues commands (``hpcgym.sim.commands``),
then calls ``advance`` again. Nothing in here is random: the same inputs and commands give the
same timeline on every run and machine.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, final

import numpy as np
from mypy_extensions import mypyc_attr

from hpcgym.errors import SpecError, StalledError
from hpcgym.sim.config import SimConfig
from hpcgym.sim.events import PHASE_END as _PHASE_END
from hpcgym.sim.events import RECONF_END as _RECONF_END
from hpcgym.sim.events import SUBMIT as _SUBMIT
from hpcgym.sim.events import TICK as _TICK
from hpcgym.sim.events import WALLTIME as _WALLTIME
from hpcgym.sim.events import EventType
from hpcgym.sim.interrupt import let_signals_in
from hpcgym.sim.job import _NO_RUNS, Job, JobState
from hpcgym.sim.joblist import job_lists
from hpcgym.sim.nodes import SHARED, WHOLE, NodePool, uniform_share
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobKind, JobSpec, SizeRule, fits_machine

# Enum members and module functions as final module constants: attribute access on an Enum
# class is slow, and a compiled module reads a final from a C static but any other global from
# its namespace dict, by name, at every use.
_PENDING: Final = JobState.PENDING
_QUEUED: Final = JobState.QUEUED
_RUNNING: Final = JobState.RUNNING
_RECONFIGURING: Final = JobState.RECONFIGURING
_SUSPENDED: Final = JobState.SUSPENDED
_COMPLETED: Final = JobState.COMPLETED
_KILLED: Final = JobState.KILLED
_REJECTED: Final = JobState.REJECTED
_K_EVOLVING: Final = JobKind.EVOLVING
_ANY: Final = SizeRule.ANY
_E_SUBMITTED: Final = EventType.SUBMITTED
_E_COMPLETED: Final = EventType.COMPLETED
_E_KILLED: Final = EventType.KILLED
_E_REJECTED: Final = EventType.REJECTED
_E_RECONFIGURED: Final = EventType.RECONFIGURED
_E_REQUESTED: Final = EventType.REQUESTED
_E_STEPPED: Final = EventType.STEPPED
_E_TICK: Final = EventType.TICK
_E_WAKEUP: Final = EventType.WAKEUP


if TYPE_CHECKING:
    from hpcgym.sim.metrics import SimResult
    from hpcgym.sim.simulator import Simulator

_EMPTY_INT: Final = np.empty(0, dtype=np.int64)
_EMPTY_FLOAT: Final = np.empty(0)

MAX_IDLE_POINTS: Final = 10_000
"""Decision points in a row at one instant, with no command between them, before ``advance``
raises ``StalledError``: the clock has stopped and nobody acts."""

_SIGNAL_MASK: Final = 0xFFF
"""Pending signals (Ctrl-C) are let in every ``_SIGNAL_MASK + 1`` decision points."""

EXACT_TICK_SKIP: Final = 10_000_000
"""Ticks an empty machine skips one addition at a time, so that the ticks after the gap fall at
the very float64 times they always did; a longer gap (an epoch-second or millisecond submit
time after small ones) is crossed with one multiplication, which may round the later tick times
by a few ulps."""


@final
@mypyc_attr(serializable=True)
class Event:
    """A pending event of the engine's heap, ordered by ``(time, prio, seq)``.

    ``prio`` is one of ``hpcgym.sim.events``' priorities, ``seq`` the order the event was
    queued in (unique: no two events compare equal), ``version`` the job's ``_version`` (its
    ``_wt_version`` for a walltime kill) when queued: an event whose job has moved on is stale.
    A native record rather than a tuple: compiled, the heap compares machine floats and ints
    instead of tuples of Python objects.
    """

    __slots__ = ("job", "prio", "seq", "time", "version")

    def __init__(self, time: float, prio: int, seq: int, job: Job | None, version: int) -> None:
        self.time = time
        self.prio = prio
        self.seq = seq
        self.job = job
        self.version = version

    def __repr__(self) -> str:
        return f"Event({self.time!r}, {self.prio}, {self.seq}, {self.job!r}, {self.version})"

    def key(self) -> tuple[float, int, int]:
        """What orders events: ``(time, prio, seq)``."""
        return (self.time, self.prio, self.seq)


def _submit_of(job: Job) -> float:
    """A job's submission time (the set-up's sort key)."""
    return job._submit


def _submit_order(job: Job) -> tuple[float, int]:
    """A job's place in submission order: its submission time, then its id."""
    return (job._submit, job._id)


def _before(a: Event, b: Event) -> bool:
    """``a.key() < b.key()``, without the tuples."""
    if a.time != b.time:
        return a.time < b.time
    if a.prio != b.prio:
        return a.prio < b.prio
    return a.seq < b.seq


def push_event(heap: list[Event], event: Event) -> None:
    """``heapq.heappush`` for events (the same algorithm, ``_before`` as the order).

    The comparisons are written out: compiled, a call per comparison costs as much as it does.
    """
    heap.append(event)
    pos = len(heap) - 1
    t, prio, seq = event.time, event.prio, event.seq
    while pos > 0:
        up = (pos - 1) >> 1
        parent = heap[up]
        # ``if not _before(event, parent): break``
        if t != parent.time:
            if not t < parent.time:
                break
        elif prio != parent.prio:
            if not prio < parent.prio:
                break
        elif not seq < parent.seq:
            break
        heap[pos] = parent
        pos = up
    heap[pos] = event


def pop_event(heap: list[Event]) -> Event:
    """``heapq.heappop`` for events (the same algorithm, ``_before`` as the order, written out)."""
    last = heap.pop()
    n = len(heap)
    if not n:
        return last
    top = heap[0]
    # ``heapq._siftup``: the smaller child moves up until a leaf, then ``last`` sifts down.
    pos = 0
    child = 1
    while child < n:
        right = child + 1
        moved = heap[child]
        if right < n:
            other = heap[right]
            # ``not _before(moved, other)``
            if moved.time != other.time:
                take = not moved.time < other.time
            elif moved.prio != other.prio:
                take = not moved.prio < other.prio
            else:
                take = not moved.seq < other.seq
            if take:
                child = right
                moved = other
        heap[pos] = moved
        pos = child
        child = 2 * pos + 1
    t, prio, seq = last.time, last.prio, last.seq
    while pos > 0:
        up = (pos - 1) >> 1
        parent = heap[up]
        # ``if not _before(last, parent): break``
        if t != parent.time:
            if not t < parent.time:
                break
        elif prio != parent.prio:
            if not prio < parent.prio:
                break
        elif not seq < parent.seq:
            break
        heap[pos] = parent
        pos = up
    heap[pos] = last
    return top


class EventQueue(Protocol):
    """The engine's event queue: ``EventHeap`` (C) or ``PyEventHeap``, which answer alike.

    ``push(time, prio, event)`` takes the event with its own time and priority, ``pop``
    removes and returns the first by ``(time, prio)``, ties in the order they were pushed
    (the events' ``seq``: the engine numbers them push by push), ``top`` returns it kept
    (``None`` when empty), ``pop_top`` drops it and returns the next (one call where the event
    loop made two), ``events`` lists every queued event in heap order.
    """

    def push(self, time: float, prio: int, event: Event) -> None:
        """Queue ``event``; ``time`` and ``prio`` are its own fields."""
        ...

    def pop(self) -> Event:
        """The first event, removed (``IndexError`` when empty)."""
        ...

    def top(self) -> Event | None:
        """The first event, kept, or ``None``."""
        ...

    def pop_top(self) -> Event | None:
        """``pop`` then ``top`` in one call: the new first event, or ``None``.

        ``IndexError`` when empty.
        """
        ...

    def events(self) -> list[Event]:
        """Every queued event, in heap order (a new list)."""
        ...

    def __len__(self) -> int: ...


# ``allow_interpreted_subclasses``: compiled, a serializable class's ``__init__`` runs when
# it is built by a call from Python only if that is set (mypy 2.4.1), and ``EventHeap()`` is
# such a call (the type is chosen at import).
@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class PyEventHeap:
    """The event queue in Python: ``push_event`` and ``pop_event`` on a list.

    The twin of the C ``EventHeap`` (``_eventheap.c``), used when that is not built.
    """

    def __init__(self) -> None:
        self._items: list[Event] = []

    def push(self, time: float, prio: int, event: Event) -> None:
        """Queue ``event``; ``time`` and ``prio`` are its own fields."""
        push_event(self._items, event)

    def pop(self) -> Event:
        """The first event, removed (``IndexError`` when empty)."""
        return pop_event(self._items)

    def top(self) -> Event | None:
        """The first event, kept, or ``None``."""
        items = self._items
        return items[0] if items else None

    def pop_top(self) -> Event | None:
        """``pop`` then ``top`` in one call: the new first event, or ``None``.

        ``IndexError`` when empty.
        """
        items = self._items
        pop_event(items)
        return items[0] if items else None

    def events(self) -> list[Event]:
        """Every queued event, in heap order (a new list)."""
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events())


def _event_heap_type() -> Any:
    """The C ``EventHeap`` when built, else ``PyEventHeap``."""
    try:
        from hpcgym.sim._eventheap import EventHeap as CEventHeap
    except ImportError:  # a pure-Python install
        return PyEventHeap
    return CEventHeap


EventHeap: Final[Any] = _event_heap_type()
"""What the engine queues its events in: ``EventHeap()`` is empty."""


def _first_tick_from(t: float, tick: float, until: float) -> float:
    """The first of the ticks ``t``, ``t + tick``, ... that is at or after ``until``.

    Added one tick at a time, as the engine always did, up to ``EXACT_TICK_SKIP`` ticks (the
    same float64 times); beyond, most of the gap is crossed by one multiplication.
    """
    if t >= until:
        return t
    gap = (until - t) / tick
    if gap > EXACT_TICK_SKIP:
        t += math.floor(gap - 1.0) * tick
    while t < until:
        t += tick
    return t


class Scheduler(Protocol):
    """Anything that acts at decision points by issuing commands on the simulator."""

    def schedule(self, sim: Simulator) -> None:
        """Inspect ``sim`` and issue commands; called once per decision point."""
        ...


def _cpu_work(spec: JobSpec) -> float:
    """CPU-seconds a job needs at its requested size (an evolving job: step by step)."""
    if spec.kind is _K_EVOLVING:
        return sum(s.duration * s.nodes for s in spec.evolution) * spec.cpu_need
    return spec.work * spec.nodes * spec.cpu_need


# The read-only views of ``EngineCore``: rebuilt after unpickling, never pickled.
_VIEWS: Final = ("queue", "running", "suspended", "jobs", "_cpu_view", "node_mem_used")
# The event queue's bound methods (``EngineCore._bind_heap``): rebound after unpickling.
_HEAP_METHODS: Final = ("_heap_push", "_heap_pop_top", "_heap_top")


@mypyc_attr(allow_interpreted_subclasses=True, serializable=True)
class EngineCore:
    """State, event loop and internal transitions; commands live in ``Simulator``."""

    def __init__(
        self, platform: Platform, jobs: Iterable[JobSpec], config: SimConfig | None = None
    ) -> None:
        self.platform = platform
        self.config = config or SimConfig()
        self._kill_on_walltime = self.config.kill_on_walltime
        """``config.kill_on_walltime`` as a native field (read per start)."""
        self._largest = platform.largest_cluster
        # A ``JobSpec`` field read from compiled code costs about 30 ns (a Python-level lookup):
        # each is read once, here or in ``Job``, and the rest of the set-up reads the jobs.
        specs = list(jobs)
        # A Job per spec, each tracked by the cycle collector: collections while tens of
        # thousands pile up cost more than making them (40% of a 54k-job build, perf). The jobs
        # are collected as usual afterwards; nothing depends on when a collection runs.
        paused = gc.isenabled()
        gc.disable()
        try:
            order = [Job(s) for s in specs]
            prev = -math.inf
            in_order = True
            for job in order:
                if job._submit < prev:
                    in_order = False
                    break
                prev = job._submit
            if not in_order:
                # Stable: jobs submitted at the same time keep their given order.
                order.sort(key=_submit_of)
            subs = [job._submit for job in order]
            self._order = order
            self._jobs: dict[int, Job] = {cast(int, job._key): job for job in order}
        finally:
            if paused:
                gc.enable()
        if len(self._jobs) < len(specs):
            seen: set[int] = set()
            for job in order:
                if job._id in seen:
                    raise SpecError(f"job id {job._id} appears twice; job ids must be unique")
                seen.add(job._id)
        largest = self._largest
        plain = True
        demand_work = 0.0
        for i, job in enumerate(order):
            job._i = i
            s = job.spec
            need, mem, rigid = job._need, job._mem, job._rigid
            # The usual job (whole nodes, any size) needs no call to know it can fit.
            if (
                need != 1.0
                or mem > 1.0
                or job._evolving
                or s.min_nodes > largest
                or s.size_rule is not _ANY
            ):
                job._fits = self._can_ever_fit(s)
            if not rigid or need != 1.0 or mem != 0.0:
                plain = False
            demand_work += _cpu_work(s) if job._evolving else job._remaining * job._want * need
        self._plain_rigid = plain
        """Every job rigid, on whole nodes, without memory (``hpcgym.sim.batch``)."""
        self._sub_times = subs
        self._next_sub = 0
        self._s_next = subs[0] if subs else math.inf
        """``_sub_times[_next_sub]`` (``inf`` once every job is submitted), a native float."""
        self._head = 0
        self._heap: EventQueue = EventHeap()
        self._bind_heap()
        self._spare: list[Event] = []
        """Popped events, reused by the next pushes (no allocation per event)."""
        self._seq = 0
        """Events queued so far (the next event's ``seq``)."""
        self._now = subs[0] if subs else 0.0
        self.pool = NodePool(platform)
        self._capacity = float(platform.total_nodes)
        self._queue, self._running, self._suspended = job_lists(order, self._jobs)
        self._n_total = len(self._order)
        self._n_ended = 0
        self._n_completed = 0
        self._n_killed = 0
        self._n_rejected = 0
        self._commands = 0
        self._wakeups: set[float] = set()
        self._tick_commands: int | None = None
        self._points = 0
        self._point_time = -math.inf
        self._point_commands = -1
        self._idle_points = 0
        # What happened since the previous decision point (``happened``): kind, job, kind,
        # job... in the first ``2 * _n_events`` entries of one list reused from point to point
        # (a list's ``clear`` frees its storage). No list and no tuple is made per event unless
        # a scheduler reads ``happened`` (FCFS never does).
        self._events: list[object] = []
        self._n_events = 0
        self._happened: list[tuple[EventType, Job | None]] | None = None
        """``happened`` once built at this decision point (the same list on every read)."""
        # Totals kept current, and their integrals over time (for the episode metrics).
        self._alloc_total = 0.0
        self._useful_total = 0.0
        self._demand_total = 0.0
        self.alloc_area = 0.0
        """CPU-seconds allocated to jobs so far."""
        self.useful_area = 0.0
        """CPU-seconds spent progressing so far (no reconfiguration, waiting or excess share)."""
        self.demand_area = 0.0
        """Integral of ``min(capacity, demand)``, demand being the CPU needs of the submitted,
        unfinished jobs (DFRS), in CPU-seconds."""
        self.total_demand_work = demand_work
        """CPU-seconds the workload needs at requested sizes (DFRS's normalization)."""
        if self.config.tick is not None and specs:
            self._push(subs[0] + self.config.tick, _TICK, None, 0)
        self._batch_out: tuple[Any, ...] | None = None
        """What the C core returned, after a batch run (``hpcgym.sim.batch``)."""
        self._make_views()

    def _bind_heap(self) -> None:
        """Keep the event queue's methods bound (rebound after unpickling).

        The queue is typed by a protocol (C or Python): compiled, a method call on it looks the
        method up by name every time, where a bound method kept is called directly.
        """
        heap = self._heap
        self._heap_push: Callable[[float, int, Event], None] = heap.push
        self._heap_pop_top: Callable[[], Event | None] = heap.pop_top
        self._heap_top: Callable[[], Event | None] = heap.top

    def _make_views(self) -> None:
        """The read-only views schedulers read (rebuilt after unpickling)."""
        self.queue: Mapping[int, Job] = MappingProxyType(self._queue)
        """Queued jobs by id, in submission order."""
        self.running: Mapping[int, Job] = MappingProxyType(self._running)
        """Jobs holding resources (running or reconfiguring) by id, in start order."""
        self.suspended: Mapping[int, Job] = MappingProxyType(self._suspended)
        """Suspended jobs by id."""
        self.jobs: Mapping[int, Job] = MappingProxyType(self._jobs)
        """Every job by id, in submission order."""
        self._cpu_view = self.pool.cpu_used.view()
        self._cpu_view.flags.writeable = False
        self.node_mem_used = self.pool.mem_used.view()
        self.node_mem_used.flags.writeable = False

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the views (pickle, deepcopy).

        A compiled engine (see ``setup.py``) keeps its attributes in a C struct named by
        ``__mypyc_attrs__``; a subclass defined in Python adds a ``__dict__``.
        """
        names = getattr(type(self), "__mypyc_attrs__", None)
        extra = getattr(self, "__dict__", None) or {}
        state = {k: getattr(self, k) for k in names if hasattr(self, k)} if names else {}
        state.update(extra)
        for k in (*_VIEWS, *_HEAP_METHODS):
            state.pop(k, None)
        if "_spare" in state:
            state["_spare"] = []
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled simulator: same state, same future timeline."""
        self._spare = []
        for k, v in state.items():
            setattr(self, k, v)
        self._bind_heap()
        self._make_views()

    # ----------------------------------------------------------------------------- reading
    @property
    def happened(self) -> list[tuple[EventType, Job | None]]:
        """What happened since the previous decision point, as ``(kind, job)`` pairs.

        In processing order; ``job`` is ``None`` for ticks and wake-ups. Built on first read at
        each decision point; every read at the same point returns the same list, which later
        events of that point (a command's) are appended to.
        """
        view = self._happened
        if view is None:
            events = self._events
            view = [
                (cast(EventType, events[i]), cast("Job | None", events[i + 1]))
                for i in range(0, 2 * self._n_events, 2)
            ]
            self._happened = view
        return view

    @happened.setter
    def happened(self, value: list[tuple[EventType, Job | None]]) -> None:
        self._events = [x for pair in value for x in pair]
        self._n_events = len(value)
        self._happened = value

    def _note(self, kind: EventType, job: Job | None) -> None:
        """Record that ``kind`` happened (to ``job``) at this decision point."""
        events = self._events
        i = 2 * self._n_events
        if i < len(events):
            events[i] = kind
            events[i + 1] = job
        else:
            events.append(kind)
            events.append(job)
        self._n_events += 1
        view = self._happened
        if view is not None:
            view.append((kind, job))

    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._now

    @property
    def done(self) -> bool:
        """Whether every job has ended (completed, killed or rejected)."""
        return self._n_ended == self._n_total

    @property
    def counts(self) -> dict[str, int]:
        """Jobs per outcome so far; ``completed + killed + rejected == submitted`` at the end."""
        return {
            "total": len(self._order),
            "submitted": self._next_sub,
            "queued": len(self._queue),
            "running": len(self._running),
            "suspended": len(self._suspended),
            "completed": self._n_completed,
            "killed": self._n_killed,
            "rejected": self._n_rejected,
        }

    @property
    def next_submission(self) -> float:
        """Time of the next submission (``inf`` when every job is submitted)."""
        return self._s_next

    def queued_jobs(self) -> list[Job]:
        """The queued jobs in submission order (``list(queue.values())``), a new list."""
        return list(self._queue.values())

    def queue_head(self) -> Job | None:
        """The earliest-submitted queued job, or ``None``.

        Amortized O(1), unlike ``next(iter(queue))``, which must skip the entries a dict keeps
        for deleted keys at its front.
        """
        order = self._order
        i = self._head
        n = self._next_sub
        if i < n and order[i]._state is _QUEUED:
            return order[i]
        while i < n:
            job = order[i]
            if job._state is _QUEUED:
                self._head = i
                return job
            i += 1
        self._head = i
        return None

    @property
    def underutilization(self) -> float:
        """Integral of ``min(capacity, demand) - useful`` (DFRS definition), in CPU-seconds."""
        return self.demand_area - self.useful_area

    @property
    def node_cpu_used(self) -> np.ndarray:
        """CPU in use on each node (a read-only view of the engine's array).

        Whole-node starts write it only when it is read (``NodePool.sync``): read this property
        again after commands rather than keeping the view, which may miss such holdings.
        """
        self.pool.sync()
        return self._cpu_view

    @property
    def node_idle(self) -> np.ndarray:
        """Whether each node is idle (a new array)."""
        self.pool.sync()
        return self.pool.cpu_used == 0.0

    def free_nodes(self, cluster: int | None = None) -> int:
        """Idle nodes (nothing on them) in ``cluster``, or on the whole platform."""
        if cluster is None:
            return sum(self.pool.free)
        return self.pool.free[cluster]

    def remaining_work(self, job: Job) -> float:
        """Work left at ``now`` (the settled value minus progress since)."""
        return max(0.0, job._remaining - job._rate * (self._now - job._t_last))

    def virtual_time(self, job: Job) -> float:
        """Integral of the job's yield since submission, at ``now`` (DFRS's priority input)."""
        return (
            job._virtual + job._yield * (self._now - job._t_last) if job._rate > 0 else job._virtual
        )

    def estimated_end(self, job: Job) -> float:
        """When the current phase ends at the current rate (``inf`` when not progressing)."""
        if job._state is _RECONFIGURING:
            rate = self._nominal_rate(job)[1]
            return job._busy_until + job._remaining / rate if rate > 0 else math.inf
        if job._rate <= 0:
            return math.inf
        return self._now + self.remaining_work(job) / job._rate

    def result(self) -> SimResult:
        """Per-job table and episode summary (see ``hpcgym.sim.metrics``)."""
        from hpcgym.sim.metrics import batch_result, collect

        return batch_result(self) if self._batch_out is not None else collect(self)

    # ----------------------------------------------------------------------------- loop
    def advance(self) -> bool:
        """Run to the next decision point.

        Returns:
            ``True`` at a decision point (see ``happened``); ``False`` once every job has ended.

        Raises:
            StalledError: Jobs are unfinished but no event can ever occur again.
        """
        top_of = self._heap_top
        pop_top = self._heap_pop_top
        n = self._n_total
        while self._n_ended < n:
            # Drop stale events first: they must not move the clock.
            top = top_of()
            while top is not None:
                job = top.job
                if job is None or top.version == (
                    job._wt_version if top.prio == _WALLTIME else job._version
                ):
                    break
                nxt = pop_top()
                top.job = None
                self._spare.append(top)
                top = nxt
            i = self._next_sub
            s_next = self._s_next
            if top is not None:
                t = top.time
                if s_next < t:
                    t = s_next
            elif i < n:
                t = s_next
            else:
                raise StalledError(self._stall_message())
            if t > self._now:
                # Integrate the totals, constant since the last instant, up to t.
                dt = t - self._now
                self.alloc_area += self._alloc_total * dt
                self.useful_area += self._useful_total * dt
                d = self._demand_total
                self.demand_area += (d if d < self._capacity else self._capacity) * dt
                self._now = t
            self._n_events = 0
            self._happened = None
            while top is not None:
                if top.time != t or top.prio >= _SUBMIT:
                    break
                # The next event, taken now: it stays the first unless a handler queues one
                # (every push counts ``_seq``), when it is read again.
                seq = self._seq
                nxt = pop_top()
                prio, version = top.prio, top.version
                # Every event before submissions has its job. Typed ``Job`` here, not
                # ``Job | None``: compiled, a union's fields are read and compared as objects.
                ev_job = cast(Job, top.job)
                top.job = None
                self._spare.append(top)
                if prio == _PHASE_END:
                    if version == ev_job._version:
                        if ev_job._evolving:
                            self._phase_end(ev_job)
                        else:
                            self._complete(ev_job)
                elif prio == _WALLTIME:
                    if version == ev_job._wt_version:
                        self._kill(ev_job)
                elif version == ev_job._version:
                    self._reconf_end(ev_job)
                top = nxt if self._seq == seq else top_of()
            if i < n and s_next == t:
                order = self._order
                queue = self._queue
                while True:
                    job = order[i]
                    i += 1
                    job._t_last = t
                    self._demand_total += job._demand
                    if job._fits:
                        job._state = _QUEUED
                        queue._add(job)
                        self._note(_E_SUBMITTED, job)
                    else:
                        self._n_rejected += 1
                        self._end(job, _REJECTED)
                        self._note(_E_REJECTED, job)
                    if i >= n:
                        self._s_next = math.inf
                        break
                    # From the next job (its first cache line, touched at its submission
                    # anyway), not from ``_sub_times``: one boxed float fewer to read.
                    s_next = order[i]._submit
                    if s_next != t:
                        self._s_next = s_next
                        break
                self._next_sub = i
            # ``top`` is still the queue's first event: a submission queues none (a rejected
            # job ends at once, with nothing pending).
            if top is not None and top.time == t:
                tick_only = not self._n_events
                while top is not None and top.time == t:
                    seq = self._seq
                    nxt = pop_top()
                    self._spare.append(top)
                    if top.prio == _TICK:
                        self._tick(tick_only)
                    else:
                        self._wakeups.discard(t)
                        if self._n_ended < n:
                            self._note(_E_WAKEUP, None)
                    top = nxt if self._seq == seq else top_of()
            if self._n_events:
                self._points += 1
                if not self._points & _SIGNAL_MASK:
                    # Compiled loops never reach the interpreter's signal check by themselves.
                    let_signals_in()
                if t != self._point_time or self._commands != self._point_commands:
                    self._point_time = t
                    self._point_commands = self._commands
                    self._idle_points = 0
                else:
                    self._idle_points += 1
                    if self._idle_points >= MAX_IDLE_POINTS:
                        raise StalledError(
                            f"at t={t:g} the clock has not moved over {MAX_IDLE_POINTS} decision "
                            "points with no command issued: a scheduler that only asks to be "
                            "woken at now never lets the simulation progress"
                        )
                return True
        return False

    def _push(self, time: float, prio: int, job: Job | None, version: int) -> None:
        seq = self._seq
        self._seq = seq + 1
        self._heap_push(time, prio, self._event(time, prio, seq, job, version))

    def _event(self, time: float, prio: int, seq: int, job: Job | None, version: int) -> Event:
        """A new event, or a spare one (popped earlier) set to these values."""
        spare = self._spare
        if not spare:
            return Event(time, prio, seq, job, version)
        event = spare.pop()
        event.time = time
        event.prio = prio
        event.seq = seq
        event.job = job
        event.version = version
        return event

    def _settle(self, job: Job) -> None:
        """Account progress, waste, held and virtual time of ``job`` up to now."""
        now = self._now
        dt = now - job._t_last
        if dt > 0:
            if job._rate > 0:
                left = job._remaining - job._rate * dt
                job._remaining = left if left > 0 else 0.0
                job._virtual += job._yield * dt
                job._held += dt
            elif job._cpu_sum > 0:
                job._waste += job._cpu_sum * dt
                job._held += dt
        job._t_last = now

    def _set_rate(self, job: Job) -> None:
        """Recompute rate, yield and useful CPU after any change of state or allocation."""
        if job._state is _RUNNING and job._request == 0 and job._nodes.size:
            spec = job.spec
            need = spec.cpu_need
            if job._share >= need:
                # Every task has all the CPU it can use.
                job._yield = 1.0
                n = job._nodes.size
                job._rate = 1.0 if job._evolving or n == spec.nodes else spec.rate(n)
                useful = n * need
            else:
                job._yield, job._rate = self._nominal_rate(job)
                useful = float(np.minimum(job._cpu, need).sum())
        else:
            job._yield = 0.0
            job._rate = 0.0
            useful = 0.0
        self._useful_total += useful - job._useful
        job._useful = useful

    def _nominal_rate(self, job: Job) -> tuple[float, float]:
        """Yield and progress rate the job's allocation gives when it progresses."""
        spec = job.spec
        n = job._nodes.size
        if not n:
            return 0.0, 0.0
        if job._share > 0:
            worst = job._share / spec.cpu_need
            y = 1.0 if worst >= 1.0 else worst
        elif self.config.progress == "mean":
            y = float(np.minimum(job._cpu / spec.cpu_need, 1.0).mean())
        else:
            worst = float(job._cpu.min()) / spec.cpu_need
            y = 1.0 if worst >= 1.0 else worst
        return y, (y if job._evolving else spec.rate(n) * y)

    def _plan(self, job: Job) -> None:
        """Invalidate the job's pending events; schedule its next phase or reconfiguration end.

        A deferred walltime kill (see ``_arm_walltime``) is queued as soon as the new plan no
        longer completes the job by its deadline.
        """
        v = job._version = job._version + 1
        t = math.inf
        if job._state is _RECONFIGURING:
            self._push(job._busy_until, _RECONF_END, job, v)
        elif job._rate > 0:
            t = self._now + job._remaining / job._rate
            self._push(t, _PHASE_END, job, v)
        deadline = job._deadline
        if deadline != math.inf and (t > deadline or job._evolving):
            job._deadline = math.inf
            self._push(deadline, _WALLTIME, job, job._wt_version)

    def _arm_walltime(self, job: Job, end: float | None = None) -> None:
        """(Re)start the walltime clock of a job that holds resources now.

        The kill is due when the held time reaches the walltime. When the job is planned to
        complete by then (``end``: its planned completion, for a job whose next phase end is its
        completion), the kill is not queued but kept as ``job._deadline``: ``_plan`` queues it
        if a later change moves the completion past it. Completions at the deadline come first
        either way (``PHASE_END`` sorts before ``WALLTIME``), so this only saves heap work.
        """
        job._wt_version += 1
        job._deadline = math.inf
        wt = job._walltime
        if wt is not None and self._kill_on_walltime:
            left = wt - job._held
            deadline = self._now + (left if left > 0 else 0.0)
            if end is not None and end <= deadline:
                job._deadline = deadline
            else:
                self._push(deadline, _WALLTIME, job, job._wt_version)

    def _hold(
        self, job: Job, nodes: np.ndarray, cpu: np.ndarray, cluster: int, mode: int, share: float
    ) -> None:
        """Give ``job`` the tasks ``(nodes, cpu)`` on top of what it holds (already checked).

        ``share`` is the common value of ``cpu`` or -1 when shares differ.
        """
        self.pool.add(cluster, nodes, cpu, job._mem, mode)
        self._attach(job, nodes, cpu, cluster, mode, share)

    def _attach(
        self, job: Job, nodes: np.ndarray, cpu: np.ndarray, cluster: int, mode: int, share: float
    ) -> None:
        """Record tasks already accounted in the pool as the job's (see ``_hold``)."""
        if job._nodes.size:
            if share != job._share:
                share = -1.0
            # Whole-node tasks went on idle nodes, which the job cannot hold: no node repeats.
            may_repeat = mode != WHOLE
            nodes = np.concatenate((job._ids(), nodes))
            cpu = np.concatenate((job._cpu, cpu))
            if mode > job._mode:
                mode = job._mode
            if mode != SHARED and may_repeat and np.unique(nodes).size != nodes.size:
                mode = SHARED
        job._nodes, job._cpu, job._cluster, job._mode, job._share = nodes, cpu, cluster, mode, share
        job._runs = _NO_RUNS
        job._lazy_ids = False
        total = share * nodes.size if share > 0 else float(cpu.sum())
        self._alloc_total += total - job._cpu_sum
        job._cpu_sum = total
        if nodes.size > job.max_size:
            job.max_size = nodes.size
        self._update_demand(job)

    def _drop(self, job: Job, keep: np.ndarray | None = None) -> None:
        """Release the tasks of ``job`` not selected by the boolean mask ``keep`` (all if None)."""
        if keep is None:
            self.pool.remove(job._cluster, job._ids(), job._cpu, job._mem, job._mode)
            self._kept(job, _EMPTY_INT, _EMPTY_FLOAT)
            return
        gone = ~keep
        ids = job._ids()
        self.pool.remove(job._cluster, ids[gone], job._cpu[gone], job._mem, job._mode)
        self._kept(job, ids[keep], job._cpu[keep])

    def _drop_last(self, job: Job, n_drop: int) -> None:
        """Release the last ``n_drop`` tasks of ``job`` (``_drop`` without a mask)."""
        k = job._nodes.size - n_drop
        ids = job._ids()
        self.pool.remove(job._cluster, ids[k:], job._cpu[k:], job._mem, job._mode)
        # Copies: the job's arrays never share memory with released ones.
        self._kept(job, ids[:k].copy(), job._cpu[:k].copy())

    def _kept(self, job: Job, nodes: np.ndarray, cpu: np.ndarray) -> None:
        """Make ``(nodes, cpu)``, what ``job`` keeps of its tasks, its allocation."""
        if not nodes.size:
            total = 0.0
        else:
            if job._share < 0:
                job._share = uniform_share(cpu)
            total = job._share * cpu.size if job._share > 0 else float(cpu.sum())
        job._nodes, job._cpu = nodes, cpu
        job._runs = _NO_RUNS
        job._lazy_ids = False
        self._alloc_total += total - job._cpu_sum
        job._cpu_sum = total
        self._update_demand(job)
        if not nodes.size:
            job._cluster = -1
            job._mode = WHOLE
            job._share = 0.0

    def _update_demand(self, job: Job) -> None:
        """Re-derive the job's CPU demand: its current requirement, or what it holds if more.

        The requirement is the requested size (an evolving job: its current step's). Counting
        what a job holds beyond it keeps ``useful <= demand`` when a malleable job is expanded.
        """
        spec = job.spec
        need = spec.evolution[job._step].nodes if job._evolving else spec.nodes
        n = job._nodes.size
        demand = (n if n > need else need) * spec.cpu_need
        if demand != job._demand:
            self._demand_total += demand - job._demand
            job._demand = demand

    def _end(self, job: Job, state: JobState) -> None:
        """End ``job`` (settled by the caller) as ``state`` and release what it holds."""
        if job._cpu_sum:
            runs = job._runs
            if runs and not job._mem:
                # Whole nodes taken as runs of ids: give the runs back, no sort, no scan.
                written = not job._cpu_lazy
                job._cpu_lazy = False
                self.pool.release_runs(job._cluster, runs, written)
            else:
                self.pool.remove(job._cluster, job._ids(), job._cpu, job._mem, job._mode)
            self._alloc_total -= job._cpu_sum
            job._nodes, job._cpu, job._cpu_sum, job._cluster = _EMPTY_INT, _EMPTY_FLOAT, 0.0, -1
            job._runs = _NO_RUNS
            job._lazy_ids = False
        old = job._state
        if old is _RUNNING or old is _RECONFIGURING:
            self._running._remove(job)
        elif old is _QUEUED:
            self._queue._remove(job)
        elif old is _SUSPENDED:
            self._suspended._remove(job)
        job._state = state
        job._end = self._now
        self._n_ended += 1
        job._version += 1
        job._wt_version += 1
        job._rate = job._yield = 0.0
        if job._useful:
            self._useful_total -= job._useful
            job._useful = 0.0
        self._demand_total -= job._demand
        if not self._running._n:
            # Nothing holds resources: drop the rounding that repeated += and -= leave behind.
            self._alloc_total = self._useful_total = 0.0
            if not self._queue._n and not self._suspended._n:
                self._demand_total = 0.0

    def _can_ever_fit(self, spec: JobSpec) -> bool:
        """Whether the job's smallest accepted size (evolving: its largest step) can ever fit."""
        return fits_machine(spec, self._largest)

    def _complete(self, job: Job) -> None:
        """End of a progressing job's last phase (it progressed since its last settlement)."""
        now = self._now
        dt = now - job._t_last
        job._held += dt
        job._virtual += job._yield * dt
        job._remaining = 0.0
        job._t_last = now
        self._n_completed += 1
        self._end(job, _COMPLETED)
        self._note(_E_COMPLETED, job)

    def _phase_end(self, job: Job) -> None:
        spec = job.spec
        if job._step + 1 >= len(spec.evolution):
            self._complete(job)
            return
        self._settle(job)
        job._step += 1
        step = spec.evolution[job._step]
        job._remaining = step.duration
        n = job._nodes.size
        if step.nodes > n:
            job._request = step.nodes
            kind = _E_REQUESTED
        else:
            if step.nodes < n:
                keep = np.zeros(n, dtype=bool)
                keep[: step.nodes] = True
                self._drop(job, keep)
            kind = _E_STEPPED
        self._update_demand(job)
        self._set_rate(job)
        self._plan(job)
        self._note(kind, job)

    def _reconf_end(self, job: Job) -> None:
        self._settle(job)
        job._state = _RUNNING
        job._busy_until = math.nan
        self._set_rate(job)
        self._plan(job)
        self._note(_E_RECONFIGURED, job)

    def _kill(self, job: Job) -> None:
        self._settle(job)
        self._n_killed += 1
        self._end(job, _KILLED)
        self._note(_E_KILLED, job)

    def _tick(self, tick_only: bool) -> None:
        if self.done:
            return
        if tick_only:
            # Two wake-ups in a row with no command between them and nothing under way: the
            # state can no longer change by itself.
            idle = self._next_sub >= len(self._sub_times) and not any(
                j._rate > 0 or j._state is _RECONFIGURING or self._kill_armed(j)
                for j in self._running.values()
            )
            if idle and self._tick_commands == self._commands:
                raise StalledError(self._stall_message())
            self._tick_commands = self._commands if idle else None
        tick = self.config.tick
        assert tick is not None
        nxt = self._now + tick
        if nxt <= self._now:
            raise StalledError(
                f"at t={self._now:g} the tick period {tick:g} s no longer moves the clock "
                f"(float64 resolution there is {math.ulp(self._now):g} s): use a longer tick "
                "or times nearer 0"
            )
        i = self._next_sub
        if i < len(self._sub_times) and not (self._queue or self._running or self._suspended):
            # Nothing in the system until the next submission: the ticks before it would be
            # decision points where nothing can happen. Jump to the first tick at or after it.
            nxt = _first_tick_from(nxt, tick, self._sub_times[i])
        self._push(nxt, _TICK, None, 0)
        self._note(_E_TICK, None)

    def _kill_armed(self, job: Job) -> bool:
        """Whether a walltime kill is pending for a job holding resources."""
        return self._kill_on_walltime and job._walltime is not None

    def _stall_message(self) -> str:
        # Every job is submitted by now (a stall waits on no submission): the unfinished ones
        # are those queued, running and suspended, not a scan of the whole workload (the env
        # meets stalls at many decision points of evolving workloads and forces a decision).
        stuck = sorted(
            [*self._queue.values(), *self._running.values(), *self._suspended.values()],
            key=_submit_order,
        )
        shown = ", ".join(f"{j.spec.id} ({j._state.value})" for j in stuck[:10])
        more = f" and {len(stuck) - 10} more" if len(stuck) > 10 else ""
        return (
            f"at t={self._now:g} {len(stuck)} jobs are unfinished but no event is pending: "
            f"{shown}{more}. The scheduler must start, resume or grant something (or reject it)."
        )
