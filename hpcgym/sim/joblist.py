"""The engine's queued, holding and suspended jobs: one ``JobList`` each.

A ``JobList`` is a read-only ``Mapping[int, Job]`` (job id to job, in the order the jobs
entered it), which ``sim.queue``, ``sim.running`` and ``sim.suspended`` show to schedulers. It
replaced a ``dict`` per state: a job entering or leaving a state was a dict insertion or
deletion, about 230 machine instructions each, four per rigid job (queued, started, ended),
15% of the FCFS event loop (callgrind, HPC2N). Here a list is doubly linked through the jobs
themselves (``Job._prev`` and ``Job._next``: neighbours' positions in submission order), so
entering and leaving are a few native field writes, with no hashing, probing or resizing.

Reading it by id goes through the simulator's dict of every job (``_jobs``), then checks that
the job is in this list (``Job._list``, the list's tag). ``keys()``, ``values()`` and
``items()`` are lists made when called (a ``dict``'s are live views); iterating one while the
simulator changes it raises ``RuntimeError``, as a ``dict`` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, cast

from mypy_extensions import i64, mypyc_attr

from hpcgym.sim.job import Job

NO_LIST: Final = 0
"""``Job._list`` of a job in no list (pending or ended); the lists' tags are 1, 2 and 3."""


@mypyc_attr(serializable=True)
class JobList:
    """The jobs in one state, by id, in the order they entered it (a read-only mapping).

    Args:
        tag: This list's ``Job._list`` value (not ``NO_LIST``; one per list of a simulator).
        what: What the jobs are, for messages ("queued jobs").
        order: Every job of the simulator, in submission order (``Job._i`` indexes it).
        jobs: Every job by id.
    """

    def __init__(self, tag: i64, what: str, order: list[Job], jobs: dict[int, Job]) -> None:
        # ``i64``: machine integers, compiled (see ``Job._list``).
        self._tag: i64 = tag
        self._what = what
        self._order = order
        self._jobs = jobs
        self._first: i64 = -1
        """``_i`` of the first job, -1 when empty."""
        self._last: i64 = -1
        self._n: i64 = 0
        self._changes: i64 = 0
        """Additions and removals so far: an iteration under way checks it."""

    # ----------------------------------------------------------------------------- changes
    def _add(self, job: Job) -> None:
        """Append ``job`` (in no list: the caller knows it)."""
        i = job._i
        last = self._last
        job._prev = last
        job._next = -1
        job._list = self._tag
        if last >= 0:
            self._order[last]._next = i
        else:
            self._first = i
        self._last = i
        self._n += 1
        self._changes += 1

    def _remove(self, job: Job) -> None:
        """Take ``job`` out (it is in this list: the caller knows it)."""
        p = job._prev
        q = job._next
        order = self._order
        if p >= 0:
            order[p]._next = q
        else:
            self._first = q
        if q >= 0:
            order[q]._prev = p
        else:
            self._last = p
        job._list = NO_LIST
        job._prev = job._next = -1
        self._n -= 1
        self._changes += 1

    # ----------------------------------------------------------------------------- reading
    def __len__(self) -> int:
        return int(self._n)

    def __bool__(self) -> bool:
        return self._n > 0

    def __getitem__(self, key: int) -> Job:
        job = self._jobs.get(key)
        if job is None or job._list != self._tag:
            raise KeyError(key)
        return job

    def __contains__(self, key: object) -> bool:
        job = cast("dict[object, Job]", self._jobs).get(key)
        return job is not None and job._list == self._tag

    def get(self, key: int, default: Any = None) -> Any:
        """The job of id ``key``, or ``default`` when it is not in this list."""
        job = self._jobs.get(key)
        if job is None or job._list != self._tag:
            return default
        return job

    def values(self) -> list[Job]:
        """The jobs, in order (a new list)."""
        out: list[Job] = []
        order = self._order
        i = self._first
        while i >= 0:
            job = order[i]
            out.append(job)
            i = job._next
        return out

    def keys(self) -> list[int]:
        """The ids, in order (a new list)."""
        return [cast(int, job._key) for job in self.values()]

    def items(self) -> list[tuple[int, Job]]:
        """``(id, job)`` pairs, in order (a new list)."""
        return [(cast(int, job._key), job) for job in self.values()]

    def __iter__(self) -> Iterator[int]:
        order = self._order
        changes = self._changes
        i = self._first
        while i >= 0:
            job = order[i]
            yield cast(int, job._key)
            if self._changes != changes:
                raise RuntimeError(f"the {self._what} changed during iteration")
            i = job._next

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JobList):
            return self.items() == other.items()
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"JobList({dict(self.items())!r})"


Mapping.register(JobList)


def job_lists(order: list[Job], jobs: dict[int, Job]) -> tuple[JobList, JobList, JobList]:
    """A simulator's three lists, empty: queued, holding (running or reconfiguring), suspended.

    ``order``: the simulator's jobs in submission order, each numbered (``Job._i``);
    ``jobs``: the same by id. (Made here, in compiled code: mypyc leaves the ``__init__`` of a
    serializable class unrun when the class is called from Python.)
    """
    return (
        JobList(1, "queued jobs", order, jobs),
        JobList(2, "running jobs", order, jobs),
        JobList(3, "suspended jobs", order, jobs),
    )
