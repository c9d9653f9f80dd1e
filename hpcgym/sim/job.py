"""A job's mutable state inside the engine, exposed to schedulers read-only."""

from __future__ import annotations

import math
from enum import Enum
from typing import Final

import numpy as np
from mypy_extensions import i64, mypyc_attr

from hpcgym.sim.nodes import ids_of_runs, unpack_runs
from hpcgym.sim.spec import JobKind, JobSpec

_EMPTY_INT: Final = np.empty(0, dtype=np.int64)
_EMPTY_INT.flags.writeable = False
_EMPTY_FLOAT: Final = np.empty(0)
_EMPTY_FLOAT.flags.writeable = False
_NO_RUNS: Final = b""
"""A job's ``_runs`` when its nodes are not known as runs (never mutated)."""


def _read_only(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view


class JobState(Enum):
    """Where a job is in its life."""

    PENDING = "pending"
    """Not submitted yet."""
    QUEUED = "queued"
    RUNNING = "running"
    RECONFIGURING = "reconfiguring"
    """Holds nodes but makes no progress: a resize, restart or migration is under way."""
    SUSPENDED = "suspended"
    """Preempted: holds nothing, keeps its progress, waits for ``resume``."""
    COMPLETED = "completed"
    KILLED = "killed"
    """Killed when it exceeded its walltime."""
    REJECTED = "rejected"
    """Could never fit the platform, or refused by the scheduler."""


ENDED: Final = frozenset({JobState.COMPLETED, JobState.KILLED, JobState.REJECTED})
HOLDING: Final = frozenset({JobState.RUNNING, JobState.RECONFIGURING})

# Enum members as module constants: on Python 3.11 reading ``JobState.X`` costs ~0.3 us (the
# enum metaclass's ``__getattr__`` hook), more than the rest of a job's construction together.
_PENDING: Final = JobState.PENDING
_SUSPENDED: Final = JobState.SUSPENDED
_EVOLVING: Final = JobKind.EVOLVING
_RIGID: Final = JobKind.RIGID


@mypyc_attr(serializable=True)
class Job:
    """The engine's record of one job. Schedulers read it; only engine commands change it.

    Allocation: ``nodes[i]`` is the node of task ``i`` and ``cpu[i]`` its CPU share (fraction of
    that node's CPU). Progress is fluid: ``remaining`` (work seconds at the reference size, or
    seconds left in the current step of an evolving job) drops at ``rate`` per second.
    """

    __slots__ = (
        "_busy_until",
        "_cluster",
        "_cpu",
        "_cpu_lazy",
        "_cpu_sum",
        "_deadline",
        "_demand",
        "_end",
        "_evolving",
        "_fits",
        "_held",
        "_i",
        "_id",
        "_key",
        "_lazy_ids",
        "_list",
        "_mem",
        "_migrations",
        "_mode",
        "_need",
        "_next",
        "_nodes",
        "_preemptions",
        "_prev",
        "_rate",
        "_reconfigs",
        "_remaining",
        "_request",
        "_rigid",
        "_runs",
        "_saved_size",
        "_share",
        "_start",
        "_state",
        "_step",
        "_submit",
        "_t_last",
        "_useful",
        "_version",
        "_virtual",
        "_walltime",
        "_want",
        "_waste",
        "_wt_version",
        "_yield",
        "max_size",
        "spec",
    )

    def __init__(self, spec: JobSpec) -> None:
        # Compiled, the fields lie in the object in the order of their first assignment here:
        # first those a submission touches, then those of a start and an end, the ones only
        # resizes, preemptions and evolving jobs use last, so that a rigid job's events touch
        # few cache lines (simulated: 11% fewer last-level misses in the FCFS loop; no change
        # in time measurable on the 2-core machine of benchmarks/RESULTS.md).
        # ``JobSpec`` fields the loop reads per start and end are kept as native slots: a
        # ``JobSpec`` attribute is a Python-level lookup (``JobSpec`` is not compiled), about
        # 30 ns each from compiled code, so each is read once here.
        key = spec.id
        nodes = spec.nodes
        need = spec.cpu_need
        kind = spec.kind
        self._state = _PENDING
        # ``i64``: compiled, machine integers (no tag to test, no object to count references
        # of): the lists' links are written at every submission, start and end.
        self._list: i64 = 0
        """The ``JobList`` (its tag) the job is in: queued, holding or suspended; 0 for none."""
        self._prev: i64 = -1
        """``_i`` of the job before it in its ``JobList`` (-1: none), as ``_next`` after it."""
        self._next: i64 = -1
        self._i: i64 = -1
        """The job's position in the simulator's submission order (set by the simulator)."""
        self._key: object = key
        """The id as the ``int`` object the spec holds: the simulator's dict of every job, its
        lists' keys and EASY's records use it, so that no dict operation makes a new ``int``
        (compiled, ``_id`` is a machine integer and each use as a key would box it anew)."""
        self._submit: float = spec.submit
        """``spec.submit`` as a native field, next to what a submission touches: the loop reads
        the next job's submission time from it."""
        self._t_last = 0.0
        self._demand = nodes * need
        self._want: int = nodes
        """The requested size (``spec.nodes``)."""
        self._fits = True
        evolving = self._evolving = kind is _EVOLVING
        self._rigid = kind is _RIGID
        self._lazy_ids = False
        self._cpu_lazy = False
        """Whether the whole-node holding is not written to the pool's ``cpu_used`` yet (the
        job is then in ``NodePool.lazy``)."""
        self._version = 0
        self._remaining = spec.evolution[0].duration if evolving else spec.work
        self._rate = 0.0
        self._walltime = spec.walltime
        self._id: int = key
        self.spec = spec
        self._need: float = need
        self._mem: float = spec.mem
        self._runs = _NO_RUNS
        self._nodes = _EMPTY_INT
        self._cpu = _EMPTY_FLOAT
        self._cluster = -1
        self._mode = 2
        self._share = 0.0
        self._cpu_sum = 0.0
        self._useful = 0.0
        self.max_size = 0
        self._yield = 0.0
        self._start = math.nan
        self._held = 0.0
        self._virtual = 0.0
        self._wt_version = 0
        self._deadline = math.inf
        self._end = math.nan
        self._step = 0
        self._saved_size = 0
        self._request = 0
        self._busy_until = math.nan
        self._reconfigs = 0
        self._preemptions = 0
        self._migrations = 0
        self._waste = 0.0

    def __repr__(self) -> str:
        return f"Job(id={self.spec.id}, state={self._state.value}, size={self._nodes.size})"

    @property
    def id(self) -> int:
        """The job's id."""
        return self._id

    @property
    def state(self) -> JobState:
        """Current state."""
        return self._state

    def _ids(self) -> np.ndarray:
        """``_nodes``, built from ``_runs`` on first read when a whole-node start left it lazy.

        Until then ``_nodes`` is a stand-in of the right size (``unknown_ids``): its ``size`` is
        the job's, its values are not ids, so every reader of the ids goes through here.
        """
        if self._lazy_ids:
            self._nodes = ids_of_runs(unpack_runs(self._runs))
            self._lazy_ids = False
        return self._nodes

    @property
    def nodes(self) -> np.ndarray:
        """Node of each task (a read-only view; empty when nothing is held)."""
        return _read_only(self._ids())

    @property
    def cpu(self) -> np.ndarray:
        """CPU share of each task (a read-only view)."""
        return _read_only(self._cpu)

    @property
    def size(self) -> int:
        """Tasks currently held."""
        return self._nodes.size

    @property
    def walltime(self) -> float | None:
        """The job's current time limit: its spec's, unless ``set_walltime`` changed it."""
        return self._walltime

    @property
    def suspended_size(self) -> int:
        """Tasks a suspended job will resume with (0 when not suspended)."""
        return self._saved_size if self._state is _SUSPENDED else 0

    @property
    def cluster(self) -> int:
        """Cluster of the current allocation, or -1."""
        return self._cluster

    @property
    def remaining(self) -> float:
        """Work left, as of the last settlement (see ``Simulator.remaining_work`` for now)."""
        return self._remaining

    @property
    def rate(self) -> float:
        """Current progress rate (0 while reconfiguring, waiting or suspended)."""
        return self._rate

    @property
    def yield_(self) -> float:
        """Current CPU yield: the worst task's ``min(1, share / cpu_need)``."""
        return self._yield

    @property
    def start_time(self) -> float:
        """Time of the first start (NaN before)."""
        return self._start

    @property
    def end_time(self) -> float:
        """Completion, kill or rejection time (NaN before)."""
        return self._end

    @property
    def step(self) -> int:
        """Index of an evolving job's current step."""
        return self._step

    @property
    def request(self) -> int:
        """Size an evolving job waits for (0 when it waits for nothing)."""
        return self._request

    @property
    def busy_until(self) -> float:
        """End of the current reconfiguration (NaN when not reconfiguring)."""
        return self._busy_until

    @property
    def reconfigurations(self) -> int:
        """Resizes so far (scheduler resizes and evolving grants)."""
        return self._reconfigs

    @property
    def preemptions(self) -> int:
        """Suspensions so far."""
        return self._preemptions

    @property
    def migrations(self) -> int:
        """Migrations so far."""
        return self._migrations

    @property
    def waste(self) -> float:
        """CPU-seconds held without progress (waiting for a grant, reconfiguring), as settled."""
        return self._waste

    @property
    def virtual_time(self) -> float:
        """Integral of the yield since submission, as settled (the DFRS priority's input)."""
        return self._virtual

    @property
    def held_time(self) -> float:
        """Seconds the job has held resources, as settled (what its walltime limits)."""
        return self._held
