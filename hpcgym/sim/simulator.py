"""The scheduler-facing simulator: the engine plus the commands a scheduler may issue.

Every command is issued at ``now``. It validates everything first and raises a
``CommandError`` subclass, naming the job and the rule, before changing any state.
"""

from __future__ import annotations

import math
from typing import Final, TypeAlias, cast

import numpy as np
from mypy_extensions import mypyc_attr
from numpy.typing import ArrayLike

from hpcgym.errors import CapacityError, CommandError, JobStateError, SizeError
from hpcgym.sim.batch import run_batch
from hpcgym.sim.engine import EngineCore, Scheduler
from hpcgym.sim.events import PHASE_END as _PHASE_END
from hpcgym.sim.events import WAKEUP as _WAKEUP
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.metrics import SimResult
from hpcgym.sim.nodes import (
    MIN_SHARE,
    UNIQUE,
    WHOLE,
    box,
    pack_runs,
    placement_mode,
    uniform_share,
    uniform_shares,
    unknown_ids,
    whole_row,
)
from hpcgym.sim.spec import JobKind

# Enum members as module constants: attribute access on an Enum class is slow in the hot path.
"""A final: a compiled module reads it from a C static, not its namespace dict by name."""
_QUEUED: Final = JobState.QUEUED
_RUNNING: Final = JobState.RUNNING
_RECONFIGURING: Final = JobState.RECONFIGURING
_SUSPENDED: Final = JobState.SUSPENDED
_REJECTED: Final = JobState.REJECTED
_PENDING: Final = JobState.PENDING
_ENDED: Final = (JobState.COMPLETED, JobState.KILLED, JobState.REJECTED)
_K_RIGID: Final = JobKind.RIGID
_K_MALLEABLE: Final = JobKind.MALLEABLE
_K_EVOLVING: Final = JobKind.EVOLVING


JobId: TypeAlias = "int | np.integer"
"""A job id as commands take it: an ``int``, or a numpy integer (read from an array)."""


def _integer(x: object) -> int | None:
    """``x`` as an ``int`` if it is an integer (a numpy one too, not a ``bool``), else ``None``."""
    if type(x) is int:
        return x
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return int(x)
    return None


def as_job_id(job_id: object) -> int:
    """``job_id`` as an ``int``; a ``CommandError`` for anything but an integer."""
    jid = _integer(job_id)
    if jid is None:
        raise CommandError(f"a job id is an integer, got {job_id!r}")
    return jid


def _whole_size(job_id: int, size: object) -> int:
    """``size`` as an ``int``, or a ``SizeError``: sizes are whole numbers of tasks."""
    k = _integer(size)
    if k is None:
        raise SizeError(f"job {job_id}: a size is a whole number of tasks, got {size!r}")
    return k


def _as_array(job_id: int, what: str, value: object) -> np.ndarray:
    """``value`` as an array; a ``CommandError`` when numpy cannot make one (ragged lists)."""
    try:
        return np.asarray(value)
    except (ValueError, TypeError):
        raise CommandError(f"job {job_id}: {what} must be a flat list, got {value!r}") from None


def _real(what: str, value: object) -> float:
    """``value`` as a ``float`` if it is a real number (not a bool), else a ``CommandError``."""
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    ):
        return float(value)
    raise CommandError(f"{what} must be a number, got {value!r}")


def _cluster_index(job_id: int, cluster: object) -> int | None:
    """``cluster`` as an ``int`` (or ``None``), else a ``CommandError``."""
    if cluster is None:
        return None
    k = _integer(cluster)
    if k is None:
        raise CommandError(f"job {job_id}: a cluster is an integer index, got {cluster!r}")
    return k


def _node_ids(job_id: int, nodes: ArrayLike) -> np.ndarray:
    """``nodes`` as an int64 array, or a ``CommandError``: node ids are integers, never rounded."""
    given = _as_array(job_id, "node ids", nodes)
    if given.dtype.kind not in "iu" and given.size:
        raise CommandError(
            f"job {job_id}: node ids must be integers, got {given.dtype} values "
            f"{given.ravel()[:4].tolist()}"
        )
    return given.astype(np.int64).ravel()  # a copy: the caller's array stays its own


def _cpu_shares(job_id: int, cpu: ArrayLike | float) -> np.ndarray:
    """``cpu`` as a float64 array, or a ``CommandError``: shares are finite numbers."""
    given = _as_array(job_id, "CPU shares", cpu)
    if given.dtype.kind not in "iuf" or not np.isfinite(given).all():
        raise CommandError(
            f"job {job_id}: CPU shares must be finite numbers, got {given.ravel()[:4].tolist()}"
        )
    return given.astype(np.float64)


@mypyc_attr(allow_interpreted_subclasses=True, serializable=True)
class Simulator(EngineCore):
    """A cluster simulation driven by a scheduler.

    Example:
        >>> from hpcgym.sim import JobSpec, Platform, Simulator
        >>> sim = Simulator(Platform.single(4), [JobSpec(1, 0.0, work=10.0, nodes=2)])
        >>> while sim.advance():
        ...     for job_id in list(sim.queue):
        ...         sim.start(job_id)
        >>> sim.jobs[1].end_time
        10.0
    """

    def run(self, scheduler: Scheduler) -> SimResult:
        """Alternate ``advance`` and ``scheduler.schedule`` until every job has ended.

        A run of FCFS or EASY on rigid jobs goes to the C batch core instead, with the same
        result (``hpcgym.sim.batch``).
        """
        done = run_batch(self, scheduler)
        if done is not None:
            return done
        self.drive(scheduler)
        return self.result()

    def drive(self, scheduler: Scheduler) -> None:
        """The event loop: ``advance`` then ``scheduler.schedule`` until every job has ended.

        ``run`` without the batch core and without building the result. The same decision
        points and calls as a loop written by hand, without the interpreter's work per point:
        compiled, ``advance`` is a native call.
        """
        schedule = scheduler.schedule
        while self.advance():
            schedule(self)

    # ----------------------------------------------------------------------------- commands
    def start(
        self,
        job_id: JobId,
        size: int | np.integer | None = None,
        *,
        nodes: ArrayLike | None = None,
        cpu: ArrayLike | float | None = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        """Start a queued job.

        Args:
            job_id: The job.
            size: Tasks to start with; defaults to the requested size. Moldable and malleable
                jobs accept any size their size rule allows.
            nodes: Node of each task. Omitted: one task per node on the lowest-numbered nodes
                with room, in ``cluster`` or the first cluster that fits. Giving nodes that other
                jobs use, with ``cpu`` shares that fit, co-schedules the job onto them.
            cpu: CPU share of each task (scalar or one per task); defaults to the job's need.
            cluster: Cluster for automatic placement.
        """
        # A plain ``int`` is looked up as it is: no conversion, no new ``int`` object.
        given: object = job_id
        if type(given) is int:
            job = cast("dict[object, Job]", self._jobs).get(given)
        else:
            job = self._jobs.get(as_job_id(job_id))
        if job is None or job._state is not _QUEUED:
            self._refuse_start(as_job_id(job_id))
            return
        jid = job._id
        spec = job.spec
        want = job._want
        if cluster is not None:
            cluster = _cluster_index(jid, cluster)
        # ``k``: the size as an ``int`` (``size`` may be a numpy integer, or wrong).
        if size is None:
            k = want
        elif (k := _whole_size(jid, size)) != want:
            if spec.kind is _K_RIGID or spec.kind is _K_EVOLVING:
                raise SizeError(
                    f"job {jid} is {spec.kind.value} and starts at {spec.nodes} tasks, not {k}"
                )
            self._check_size(job, k)
        self._start_job(job, k, nodes, cpu, cluster)

    def _start_job(
        self,
        job: Job,
        k: int,
        nodes: ArrayLike | None,
        cpu: ArrayLike | float | None,
        cluster: int | None,
    ) -> None:
        """``start`` of a queued job at a size its rule allows, the arguments checked.

        The in-package schedulers that know the job (the queue's head, say) call it directly on
        a plain ``Simulator``: ``start`` without the id's lookup and the arguments' checks.
        """
        jid = job._id
        spec = job.spec
        want = job._want
        now = self._now
        if nodes is None and cpu is None and job._need == 1.0:
            # The common case, kept short: whole idle nodes, lowest ids first. Same effect as
            # the general path below (``_hold`` then ``_set_rate``), without its generality.
            pool = self.pool
            free = pool.free
            if cluster is None:
                cluster = 0 if free[0] >= k else self._cluster_with_idle(job, k)
            elif not 0 <= cluster < len(free):
                raise CommandError(f"job {jid}: no cluster {cluster}")
            mem = job._mem
            if pool.single and free[0] >= k and not mem:
                # ``NodePool.take_idle`` inlined for the most common platform: the lowest idle
                # ids (the C ``IdleRuns`` takes them as runs in one call).
                # The count as a shared Python int (``box``): no new object per start.
                cast("list[object]", free)[0] = box(free[0] - k)
                runs = pool.take0(k)
                # The ids are built when read (``Job._ids``), and the CPU array written when
                # someone reads it (``NodePool.sync``), not here: most jobs end unread.
                picked = unknown_ids(k)
                lazy_ids = True
                job._cpu_lazy = True
                lazy = pool.lazy
                lazy.append(job)
                if len(lazy) >= pool.lazy_cap:
                    pool.compact_lazy()
            else:
                lazy_ids = False
                try:
                    picked, taken = pool.take_idle(cluster, k, mem)
                except CapacityError as e:
                    raise CapacityError(f"job {jid}: {e}") from None
                runs = pack_runs(taken)
            # The job's nodes as runs of ids: its end frees them slice by slice.
            job._runs = runs
            job._nodes = picked
            job._lazy_ids = lazy_ids
            job._cpu = whole_row(k)
            fsize = float(k)
            job._cluster = cluster
            job._mode = WHOLE
            job._share = 1.0
            job._cpu_sum = job._useful = fsize
            job.max_size = k
            job._state = _RUNNING
            job._yield = 1.0
            if k == want:
                rate = job._rate = 1.0
            else:
                rate = job._rate = 1.0 if job._evolving else spec.rate(k)
                if k > want:
                    self._update_demand(job)
            self._alloc_total += fsize
            self._useful_total += fsize
        else:
            self._hold(job, *self._resolve(job, k, nodes, cpu, cluster))
            job._state = _RUNNING
            self._set_rate(job)
            rate = job._rate
        self._queue._remove(job)
        self._running._add(job)
        job._start = job._t_last = now
        v = job._version = job._version + 1
        end = now + job._remaining / rate
        seq = self._seq
        self._seq = seq + 1
        self._heap_push(end, _PHASE_END, self._event(end, _PHASE_END, seq, job, v))
        if job._walltime is not None:
            self._arm_walltime(job, None if job._evolving else end)
        self._commands += 1

    def _refuse_start(self, job_id: int) -> None:
        job = self._job(job_id)
        raise JobStateError(f"job {job_id} is {job._state.value}; only queued jobs can start")

    def resize(
        self,
        job_id: JobId,
        size: int | np.integer,
        *,
        nodes: ArrayLike | None = None,
        release: ArrayLike | None = None,
    ) -> None:
        """Shrink or expand a running malleable job to ``size`` tasks.

        The job stops progressing for its reconfiguration model's ``resize`` cost. Shrinking
        frees nodes at once (the tasks on ``release``, else the last tasks); expanding adds tasks
        on ``nodes``, else on the lowest-numbered nodes of its cluster with room.
        """
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        spec = job.spec
        if spec.kind is not _K_MALLEABLE:
            raise JobStateError(
                f"job {job_id} is {spec.kind.value}; only malleable jobs can be resized"
            )
        self._require_running(job, "resized")
        n = job._nodes.size
        k = _whole_size(job_id, size)
        if k == n:
            raise SizeError(f"job {job_id} already has {n} tasks")
        self._check_size(job, k)
        if k < n:
            if nodes is not None:
                raise CommandError(f"job {job_id}: a shrink takes `release`, not `nodes`")
            if release is None:  # the last tasks
                self._settle(job)
                self._drop_last(job, n - k)
            else:
                keep = self._keep_mask(job, n - k, release)
                self._settle(job)
                self._drop(job, keep)
        else:
            if release is not None:
                raise CommandError(f"job {job_id}: an expansion takes `nodes`, not `release`")
            placed = self._resolve(job, k - n, nodes, None, job._cluster)
            self._settle(job)
            self._hold(job, *placed)
        job._reconfigs += 1
        self._overhead(job, spec.reconfig.resize(n, k))

    def shrink(
        self, job_id: JobId, size: int | np.integer, *, release: ArrayLike | None = None
    ) -> None:
        """``resize`` to a smaller ``size``."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        size = _whole_size(job_id, size)
        self._require_running(job, "shrunk")
        if size >= job._nodes.size:
            raise SizeError(f"job {job_id}: shrink to {size} from {job._nodes.size} tasks")
        self.resize(job_id, size, release=release)

    def expand(
        self, job_id: JobId, size: int | np.integer, *, nodes: ArrayLike | None = None
    ) -> None:
        """``resize`` to a larger ``size``."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        size = _whole_size(job_id, size)
        self._require_running(job, "expanded")
        if size <= job._nodes.size:
            raise SizeError(f"job {job_id}: expand to {size} from {job._nodes.size} tasks")
        self.resize(job_id, size, nodes=nodes)

    def grant(self, job_id: JobId, *, nodes: ArrayLike | None = None) -> None:
        """Give an evolving job waiting at a step the extra tasks it asked for."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._request == 0:
            raise JobStateError(f"job {job_id} has no pending request to grant")
        self._require_running(job, "granted")
        n = job._nodes.size
        target = job._request
        placed = self._resolve(job, target - n, nodes, None, job._cluster)
        self._settle(job)
        self._hold(job, *placed)
        job._request = 0
        job._reconfigs += 1
        self._overhead(job, job.spec.reconfig.resize(n, target))

    def suspend(self, job_id: JobId) -> None:
        """Preempt a job: it releases everything, keeps its progress and waits for ``resume``."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._state is not _RUNNING and job._state is not _RECONFIGURING:
            raise JobStateError(f"job {job_id} is {job._state.value}; only running jobs suspend")
        self._settle(job)
        job._saved_size = job._nodes.size
        self._drop(job)
        self._running._remove(job)
        self._suspended._add(job)
        job._state = _SUSPENDED
        job._busy_until = math.nan
        job._preemptions += 1
        job._wt_version += 1
        job._deadline = math.inf
        self._set_rate(job)
        self._plan(job)
        self._commands += 1

    def resume(
        self,
        job_id: JobId,
        *,
        nodes: ArrayLike | None = None,
        cpu: ArrayLike | float | None = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        """Restart a suspended job at its size, anywhere; it pays its model's ``restart`` cost."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._state is not _SUSPENDED:
            raise JobStateError(f"job {job_id} is {job._state.value}; only suspended jobs resume")
        size = job._saved_size
        placed = self._resolve(job, size, nodes, cpu, _cluster_index(job_id, cluster))
        self._settle(job)
        self._hold(job, *placed)
        self._suspended._remove(job)
        self._running._add(job)
        self._overhead(job, job.spec.reconfig.restart(size))
        self._arm_walltime(job)

    def migrate(
        self, job_id: JobId, nodes: ArrayLike, *, cpu: ArrayLike | float | None = None
    ) -> None:
        """Move every task of a running job to ``nodes``; it pays its model's ``migrate`` cost.

        ``nodes`` must differ from the nodes the job holds (in any order): a move onto them moves
        nothing and is refused (``set_shares`` changes CPU shares in place).
        """
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        self._require_running(job, "migrated")
        size = job._nodes.size
        nodes_a, cpu_a = self._explicit(job, size, nodes, cpu)
        held = job._ids()
        if np.array_equal(np.sort(nodes_a), np.sort(held)):
            where = f"nodes {sorted(held.tolist())}" if size <= 8 else f"these {size} nodes"
            raise CommandError(
                f"job {job_id} already runs on {where}: a migration moves tasks to other "
                "nodes; use set_shares to change CPU shares in place"
            )
        k = self._checked(job, nodes_a, cpu_a, freed=True)
        self._settle(job)
        self._drop(job)
        self._hold(job, nodes_a, cpu_a, k, placement_mode(nodes_a, cpu_a), uniform_share(cpu_a))
        job._migrations += 1
        self._overhead(job, job.spec.reconfig.migrate(size))

    def set_shares(self, job_id: JobId, cpu: ArrayLike | float) -> None:
        """Change the CPU share of each task of a job in place (no cost, no move)."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._state is not _RUNNING and job._state is not _RECONFIGURING:
            raise JobStateError(f"job {job_id} is {job._state.value}; it holds no CPU shares")
        nodes_a, cpu_a = self._explicit(job, job._nodes.size, job._ids(), cpu)
        k = self._checked(job, nodes_a, cpu_a, freed=True)
        self._settle(job)
        mode = placement_mode(nodes_a, cpu_a)
        self._drop(job)
        self._hold(job, nodes_a, cpu_a, k, mode, uniform_share(cpu_a))
        self._set_rate(job)
        self._plan(job)
        self._commands += 1

    def wake_at(self, time: float | np.floating) -> None:
        """Ask for a decision point at ``time`` (reported as ``WAKEUP``), e.g. a planned start.

        Several requests for one instant give one decision point. A request at ``now`` is served
        by the next ``advance``.

        Raises:
            CommandError: ``time`` is in the past or not finite.
        """
        time = _real(f"wake_at({time!r}): the time", time)
        if not self._now <= time < math.inf:
            raise CommandError(
                f"wake_at({time!r}): the time must be finite and >= now ({self._now:g})"
            )
        if time not in self._wakeups:
            self._wakeups.add(time)
            self._push(time, _WAKEUP, None, 0)

    def set_walltime(self, job_id: JobId, walltime: float | np.floating | None) -> None:
        """Change the time limit of a queued, running or suspended job (``None``: no limit).

        A running job whose held time already exceeds the new limit is killed at once (at the
        next ``advance``), as a resource manager would.

        Raises:
            CommandError: The limit is not positive, or the job has ended.
        """
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._state in _ENDED or job._state is _PENDING:
            raise JobStateError(f"job {job_id} is {job._state.value}; its walltime cannot change")
        if walltime is not None:
            walltime = _real(f"job {job_id}: a walltime", walltime)
        if walltime is not None and not 0 < walltime < math.inf:
            raise CommandError(f"job {job_id}: a walltime must be > 0 and finite, got {walltime!r}")
        self._settle(job)
        job._walltime = walltime
        if job._state is _RUNNING or job._state is _RECONFIGURING:
            self._arm_walltime(job)
        self._commands += 1

    def reject(self, job_id: JobId) -> None:
        """Refuse a queued job for good (it ends as rejected and is counted)."""
        job_id = as_job_id(job_id)
        job = self._job(job_id)
        if job._state is not _QUEUED:
            raise JobStateError(
                f"job {job_id} is {job._state.value}; only queued jobs are rejected"
            )
        self._n_rejected += 1
        self._end(job, _REJECTED)
        self._commands += 1

    # ----------------------------------------------------------------------------- helpers
    def _job(self, job_id: int) -> Job:
        try:
            return self._jobs[job_id]
        except KeyError:
            raise CommandError(f"no job with id {job_id}") from None

    def _require_running(self, job: Job, verb: str) -> None:
        if job._state is not _RUNNING:
            what = job._state.value
            if job._state is _RECONFIGURING:
                what += f" until t={job._busy_until:g}"
            raise JobStateError(f"job {job.spec.id} is {what}; it cannot be {verb} now")

    def _check_size(self, job: Job, size: int) -> None:
        spec = job.spec
        if not spec.allows(size):
            rule = spec.size_rule.value
            if rule == "multiple":
                rule += f" of {spec.size_multiple}"
            raise SizeError(
                f"job {spec.id} accepts sizes in [{spec.min_nodes}, {spec.max_nodes}] "
                f"({rule}), not {size}"
            )

    def _keep_mask(self, job: Job, n_drop: int, release: ArrayLike | None) -> np.ndarray:
        n = job._nodes.size
        keep = np.ones(n, dtype=bool)
        if release is None:
            keep[n - n_drop :] = False
            return keep
        rel = _node_ids(job.spec.id, release)
        if rel.size != n_drop:
            raise SizeError(f"job {job.spec.id}: release {n_drop} nodes, got {rel.size}")
        held = job._ids()
        for node in rel:
            hits = np.flatnonzero((held == node) & keep)
            if not hits.size:
                raise CommandError(f"job {job.spec.id} has no (more) tasks on node {node}")
            keep[hits[-1]] = False
        return keep

    def _explicit(
        self, job: Job, size: int, nodes: ArrayLike, cpu: ArrayLike | float | None
    ) -> tuple[np.ndarray, np.ndarray]:
        nodes_a = _node_ids(job.spec.id, nodes)
        if nodes_a.size != size:
            raise SizeError(
                f"job {job.spec.id}: {size} tasks need {size} nodes, got {nodes_a.size}"
            )
        if cpu is None:
            return nodes_a, np.full(size, job.spec.cpu_need)
        given = _cpu_shares(job.spec.id, cpu)
        if given.ndim == 0:
            return nodes_a, np.full(size, float(given))
        if given.size != size:
            raise CommandError(
                f"job {job.spec.id}: {size} tasks need {size} CPU shares, got {given.size}"
            )
        return nodes_a, given.ravel().copy()

    def _checked(self, job: Job, nodes: np.ndarray, cpu: np.ndarray, freed: bool = False) -> int:
        try:
            return self.pool.check(
                nodes,
                cpu,
                job.spec.mem,
                job._ids() if freed else None,
                job._cpu if freed else None,
            )
        except CommandError as e:
            raise type(e)(f"job {job.spec.id}: {e}") from None

    def _resolve(
        self,
        job: Job,
        size: int,
        nodes: ArrayLike | None,
        cpu: ArrayLike | float | None,
        cluster: int | None,
    ) -> tuple[np.ndarray, np.ndarray, int, int, float]:
        """Nodes, shares, cluster, placement mode and common share for ``size`` new tasks.

        Everything is validated against capacity; nothing is changed.
        """
        spec = job.spec
        if nodes is not None:
            nodes_a, cpu_a = self._explicit(job, size, nodes, cpu)
            k = self._checked(job, nodes_a, cpu_a)
            if job._cluster >= 0 and k != job._cluster:
                raise CommandError(f"job {spec.id} runs on cluster {job._cluster}, not {k}")
            return nodes_a, cpu_a, k, placement_mode(nodes_a, cpu_a), uniform_share(cpu_a)
        if cpu is None:
            share = spec.cpu_need
        elif np.ndim(cpu) == 0:
            share = float(_cpu_shares(spec.id, cpu))
        else:
            raise CommandError(f"job {spec.id}: per-task CPU shares need explicit nodes")
        if not MIN_SHARE <= share <= 1.0:
            raise CommandError(
                f"job {spec.id}: CPU share must be in [{MIN_SHARE:g}, 1], got {share}"
            )
        if cluster is None:
            k = self.pool.cluster_fitting(size, share, spec.mem)
            if k < 0:
                raise CapacityError(
                    f"job {spec.id}: no cluster has {size} nodes with room for a task "
                    f"(cpu {share:g}, memory {spec.mem:g}); free nodes: {self.pool.free}"
                )
        else:
            if not 0 <= cluster < len(self.pool.free):
                raise CommandError(f"job {spec.id}: no cluster {cluster}")
            k = cluster
        try:
            placed = self.pool.place(k, size, share, spec.mem)
        except CapacityError as e:
            raise CapacityError(f"job {spec.id}: {e}") from None
        mode = WHOLE if share >= 1.0 else UNIQUE
        return placed, uniform_shares(size, share), k, mode, share

    def _cluster_with_idle(self, job: Job, size: int) -> int:
        free = self.pool.free
        if free[0] >= size:
            return 0
        for k in range(1, len(free)):
            if free[k] >= size:
                return k
        raise CapacityError(
            f"job {job.spec.id}: no cluster has {size} idle nodes; idle nodes per cluster: {free}"
        )

    def _overhead(self, job: Job, cost: float) -> None:
        """Enter the job's reconfiguration period of ``cost`` seconds (or run on if 0)."""
        if cost > 0:
            job._state = _RECONFIGURING
            job._busy_until = self._now + cost
        else:
            job._state = _RUNNING
            job._busy_until = math.nan
        self._set_rate(job)
        self._plan(job)
        self._commands += 1
