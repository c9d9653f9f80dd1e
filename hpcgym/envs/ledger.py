"""The env's own bookkeeping of an episode's jobs, indexed by row.

Row ``i`` is the ``i``-th job in submission order (the engine's order). The ledger mirrors each
job's phase (pending, queued, holding, suspended, ended) with sorted row lists, so that windows
need no scan; it holds the static columns (a :class:`~hpcgym.envs.table.JobTable`), a cache of
each holding job's dynamic state, and the running sums the rewards' potentials read. It is
updated from the engine's ``happened`` list after every ``advance`` and by the env after every
command it issues: nothing else changes a job, so the caches are exact.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Final, cast

import numpy as np

from hpcgym.envs.table import JobTable
from hpcgym.sim.engine import EngineCore
from hpcgym.sim.events import EventType
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.metrics import progress_work

_insort: Final = bisect.insort
"""A final: compiled, read from a C static, not looked up by name at every call."""
# Constants are ``Final``: compiled, a plain module global is a dict lookup at every read.
PENDING: Final = 0
QUEUED: Final = 1
HOLDING: Final = 2
SUSPENDED: Final = 3
ENDED: Final = 4

_SUBMITTED: Final = EventType.SUBMITTED
_COMPLETED: Final = EventType.COMPLETED
_KILLED: Final = EventType.KILLED
_REJECTED: Final = EventType.REJECTED
_SUSPENDED: Final = JobState.SUSPENDED
_RECONFIGURING: Final = JobState.RECONFIGURING

# Columns of ``JobLedger.dyn``.
SIZE: Final = 0
YIELD: Final = 1
RATE: Final = 2
T_START: Final = 3
ETA_END: Final = 4
EFFICIENCY: Final = 5
RECONFIGS: Final = 6
REQUEST: Final = 7
BUSY: Final = 8
NEVER: Final = 1e30
"""``ETA_END`` of a job that makes no progress."""
_NO_DYN = (0.0, 0.0, 0.0, 0.0, NEVER, 0.0, 0.0, 0.0, 0.0)


def _drop(rows: list[int], r: int) -> None:
    """Take ``r`` out of the ascending list ``rows``.

    A bisection written out (compiled, a native loop; ``bisect`` would be a call through a
    module global) instead of ``list.remove``'s scan, which compares ``r`` with every row
    before it as Python objects.
    """
    lo, hi = 0, len(rows)
    while lo < hi:
        mid = (lo + hi) >> 1
        if rows[mid] < r:
            lo = mid + 1
        else:
            hi = mid
    if lo == len(rows) or rows[lo] != r:
        raise ValueError(f"row {r} is not in the list")
    rows.pop(lo)


class JobLedger:
    """Row lists per phase, static columns, dynamic cache and reward sums of one episode.

    Attributes:
        jobs: The engine's ``Job`` of each row.
        table: Static columns (also reachable as attributes: ``ledger.req``, ...).
        queued, holding, suspended: Rows in each phase, ascending (submission order).
        dyn_rows: Per row, the cached tuple of size, yield, rate, first start, estimated end
            (``ETA_END``: when the walltime estimate runs out at the current rate, ``NEVER``
            when not progressing), efficiency at the current size, reconfigurations, pending
            request and reconfiguring flag (columns ``SIZE`` ... ``BUSY``); ``dyn`` is the same
            as a ``(rows, 9)`` array.
        on_touch: Called with the row and its new ``dyn`` values after every refresh
            (observation caches).
            ``dyn`` is refreshed lazily: call ``fresh(rows)`` before reading it.
    """

    def __init__(self, sim: EngineCore, table: JobTable) -> None:
        self.sim = sim
        self.jobs: list[Job] = list(sim.jobs.values())
        self._efficiency: dict[tuple[int, int], float] = {}
        """Parallel efficiency at a size other than the requested one, by (row, size)."""
        # Job ids in the jobs' order (the engine's ``jobs`` mapping iterates them so).
        self.row_of = dict(zip(sim.jobs, range(len(self.jobs)), strict=True))
        self.n = n = len(self.jobs)
        self.table = table
        self.submit, self.work, self.estimate = table.submit, table.work, table.estimate
        self.req, self.min, self.max = table.req, table.min, table.max
        self.cpu_need, self.mem, self.kind = table.cpu_need, table.mem, table.kind
        self.rule, self.multiple = table.rule, table.multiple
        self.tau = sim.config.bsld_tau
        self.inv_bsld_run: list[float] = (1.0 / np.maximum(table.work, self.tau)).tolist()
        self.submit_list: list[float] = table.submit.tolist()
        self._estimate: list[float] = table.estimate.tolist()
        self.req_list: list[int] = table.req.tolist()
        # Python copies of the columns read one row at a time (numpy scalars are slow there).
        self.min_list: list[int] = table.min.tolist()
        self.max_list: list[int] = table.max.tolist()
        self.rule_list: list[int] = table.rule.tolist()
        self.multiple_list: list[int] = table.multiple.tolist()
        self.kind_list: list[int] = table.kind.tolist()
        self.cpu_need_list: list[float] = table.cpu_need.tolist()
        self.mem_list: list[float] = table.mem.tolist()
        self.size_min_list: list[int] = table.size_min.tolist()
        self.size_max_list: list[int] = table.size_max.tolist()
        self.flexible_list: list[bool] = table.flexible.tolist()
        self.t_start: list[float] = [0.0] * n
        self.eta_end: list[float] = [NEVER] * n
        self.any_size = not bool(table.rule.any())
        """Every job accepts any size in its range (no power-of-two or multiple rule)."""
        self.simple = bool(np.all(table.cpu_need == 1.0)) and bool(np.all(table.mem == 0.0))
        """Every task is a whole node without memory: fits are idle-node counts."""
        self.queued: list[int] = []
        self.holding: list[int] = []
        self.suspended: list[int] = []
        self.dyn_rows: list[tuple[float, ...]] = [_NO_DYN] * n
        self.on_touch: Callable[[int, tuple[float, ...]], None] | None = None
        self._dirty: set[int] = set()
        # Progress made before each step of the evolving jobs (others need none).
        self.step_base = (
            {}
            if sim._plain_rigid  # no evolving job: no job has steps
            else {
                i: np.concatenate(([0.0], np.cumsum([st.duration for st in j.spec.evolution])))
                for i, j in enumerate(self.jobs)
                if j.spec.evolution
            }
        )
        # Reward sums (see rewards.py).
        self.bsld_ended = 0.0
        self.bstretch_ended = 0.0
        self.bsld_rate = 0.0
        self.bsld_offset = 0.0
        self.wait_started = 0.0
        self.queued_submit = 0.0
        self.reconfigurations = 0
        self.killed_work = 0.0
        """CPU-seconds of progress lost to walltime kills (at the requested size)."""
        self.submitted = 0
        self.ended = 0

    @property
    def dyn(self) -> np.ndarray:
        """The dynamic cache as a new ``(rows, 9)`` array (call ``fresh`` first)."""
        return np.array(self.dyn_rows, dtype=float).reshape(self.n, 9)

    @property
    def queued_count(self) -> int:
        """Jobs queued now."""
        return len(self.queued)

    # ------------------------------------------------------------------ engine events
    def absorb(self, happened: list[tuple[EventType, Job | None]]) -> None:
        """Apply what the engine reports after an ``advance``."""
        row_of = self.row_of
        for kind, job in happened:
            if job is None:
                continue
            # ``_key``: the id as the spec's own ``int`` (``job.id`` would box a new one).
            r = row_of[cast(int, job._key)]
            if kind is _SUBMITTED:
                self.submitted += 1
                self.queued.append(r)
                s = self.submit_list[r]
                self.queued_submit += s
                inv = self.inv_bsld_run[r]
                self.bsld_rate += inv
                self.bsld_offset += s * inv
            elif kind is _COMPLETED or kind is _KILLED:
                if kind is _KILLED:
                    self.killed_work += progress_work(job)
                _drop(self.holding, r)
                self._unfinished_gone(r)
                response = job.end_time - self.submit_list[r]
                run = job.end_time - job.start_time
                self.bsld_ended += max(1.0, response / max(run, self.tau))
                self.bstretch_ended += max(response, self.tau) * self.inv_bsld_run[r]
            elif kind is _REJECTED:
                self.submitted += 1
                self.ended += 1
            else:
                self.touch(r)

    def _unfinished_gone(self, r: int) -> None:
        self.ended += 1
        inv = self.inv_bsld_run[r]
        self.bsld_rate -= inv
        self.bsld_offset -= self.submit_list[r] * inv

    # ------------------------------------------------------------------ env commands
    def started(self, r: int) -> None:
        """The env started the queued job of row ``r``."""
        now = self.sim.now
        _drop(self.queued, r)
        _insort(self.holding, r)
        s = self.submit_list[r]
        self.queued_submit -= s
        self.wait_started += now - s
        self.t_start[r] = now
        self.touch(r)

    def suspended_job(self, r: int) -> None:
        """The env suspended the holding job of row ``r``."""
        _drop(self.holding, r)
        _insort(self.suspended, r)
        self.reconfigurations += 1
        self.touch(r)

    def resumed(self, r: int) -> None:
        """The env resumed the suspended job of row ``r``."""
        _drop(self.suspended, r)
        _insort(self.holding, r)
        self.touch(r)

    def rejected(self, r: int) -> None:
        """The env rejected the queued job of row ``r``."""
        _drop(self.queued, r)
        self.queued_submit -= self.submit_list[r]
        self._unfinished_gone(r)

    def touch(self, r: int) -> None:
        """Mark the dynamic cache of row ``r`` stale (it is refreshed when next read)."""
        self._dirty.add(r)

    def fresh(self, rows: list[int]) -> None:
        """Refresh the stale caches among ``rows`` (before reading ``dyn`` or ``eta_end``).

        Refreshing late gives the same values as refreshing at once: a job's state changes
        only through a reported event or a command, each of which marks it stale again.
        """
        dirty = self._dirty
        if dirty:
            for r in rows:
                if r in dirty:
                    dirty.discard(r)
                    self._refresh(r)

    def _refresh(self, r: int) -> None:
        job = self.jobs[r]
        sim = self.sim
        spec = job.spec
        state = job.state
        n = job.size if state is not _SUSPENDED else job.suspended_size
        left = sim.remaining_work(job)
        base = self.step_base.get(r)
        done = spec.work - left if base is None else base[job.step + 1] - left
        rate = job.rate
        now = sim.now
        eta = now + max(self._estimate[r] - done, 0.0) / rate if rate > 0 else NEVER
        self.eta_end[r] = eta
        if n == spec.nodes:
            eff = 1.0
        elif not n:
            eff = 0.0
        else:
            eff = self._efficiency.get((r, n), -1.0)
            if eff < 0:
                eff = self._efficiency[r, n] = min(1.0, spec.rate(n) * spec.nodes / n)
        values = (
            n,
            job.yield_,
            rate,
            self.t_start[r],
            eta,
            eff,
            job.reconfigurations,
            job.request,
            1.0 if state is _RECONFIGURING else 0.0,
        )
        self.dyn_rows[r] = values
        if self.on_touch is not None:
            self.on_touch(r, values)

    # ------------------------------------------------------------------ reward sums
    def bsld_sum(self, now: float) -> float:
        """Bounded slowdowns of ended jobs plus ``age / max(work, tau)`` of unfinished ones."""
        return self.bsld_ended + now * self.bsld_rate - self.bsld_offset

    def bstretch_sum(self, now: float) -> float:
        """Bounded stretches of ended jobs plus ``age / max(work, tau)`` of unfinished ones.

        A job's bounded stretch is ``max(response, tau) / max(work, tau)``: its response over
        its time alone at its requested size (``hpcgym.sim.metrics``).
        """
        return self.bstretch_ended + now * self.bsld_rate - self.bsld_offset

    def wait_sum(self, now: float) -> float:
        """Waits of started jobs plus the ages of queued ones."""
        return self.wait_started + now * len(self.queued) - self.queued_submit
