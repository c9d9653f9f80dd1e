"""The adapter's shadow engine: a simulator that records the commands a scheduler issues on it.

:class:`~hpcgym.policies.adapted.BaselinePolicy` keeps one over the env's episode and lets the
engine scheduler decide on it; every outermost command is logged as a :class:`Command` with its
outcome (the job's size after it, the CPU share, the cluster asked for and the one placed in, the
env placements that give its nodes) and, when no menu entry can perform it whatever the state,
the reason (``issue``). The menu side (which entry performs a command) is
:func:`hpcgym.envs.menu_entry.entry_for`.
"""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.envs.menu_entry import NOT_IN_MENU, PLACEMENT
from hpcgym.sim import SimConfig, Simulator
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.planning import packed_nodes, reclaimed_shares
from hpcgym.sim.simulator import JobId, as_job_id
from hpcgym.sim.spec import JobKind


@dataclass(frozen=True)
class Command:
    """One engine command a scheduler issued, with its outcome on the shadow engine.

    ``size``: the job's tasks after the command (``before``: before it); ``cpu``: the CPU share
    per task it asked for (``None``: the job's need); ``issue``: why no menu entry can perform
    it whatever the state (``None`` when one may); ``cluster``: see below.
    """

    verb: str
    job: int
    size: int = 0
    before: int = 0
    cpu: float | None = None
    issue: str | None = None
    time: float = math.nan
    cluster: int | None = None
    """The cluster a start asked for, when it is not the first that fits (the env's default)."""
    placed: int | None = None
    """The cluster a start placed the job in."""
    placements: tuple[str, ...] = ()
    """A co-scheduled start: the env placements (``coschedule_placement``) giving its nodes."""

    def __str__(self) -> str:
        size = f" -> {self.size}" if self.size else ""
        return f"{self.verb}(job {self.job}{size}) at t={self.time:g}"


class ShadowSimulator(Simulator):
    """A simulator that records the commands issued on it (outermost calls only)."""

    def _init_log(self) -> None:
        self.log: list[Command | float] = []
        """Commands, and ``wake_at`` times as floats, in issue order."""
        self._depth = 0

    def _record(self, cmd: Command) -> None:
        if self._depth == 0:
            self.log.append(cmd)

    def _default_cluster(self, job: Job, size: int, cpu: float | None) -> int:
        spec = job.spec
        share = spec.cpu_need if cpu is None else cpu
        return self.pool.cluster_fitting(size, share, spec.mem)

    def start(
        self,
        job_id: JobId,
        size: int | np.integer | None = None,
        *,
        nodes: Any = None,
        cpu: Any = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        """The engine's ``start``, logged with its outcome."""
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        issue = None
        share: float | None = None
        if cpu is not None:
            if np.ndim(cpu) != 0:
                issue = f"{PLACEMENT} (per-task CPU shares)"
            else:
                share = float(cpu)
        at: int | None = None
        options: dict[str, Any] = {}
        if share is not None and issue is None and job is not None and cluster is None:
            # Where each env placement would put the co-scheduled tasks (compared below).
            n = job.spec.nodes if size is None else int(size)
            k = self._default_cluster(job, n, share)
            if k >= 0:
                options["first"] = self.pool.place(k, n, share, job.spec.mem)
            options["packed"] = packed_nodes(self, n, share, job.spec.mem)
        if nodes is not None and not options:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        elif cluster is not None and job is not None and issue is None:
            n = job.spec.nodes if size is None else int(size)
            first = self._default_cluster(job, n, share)
            if first != cluster:
                at = int(cluster)  # a per-cluster start level ("fit@k") may express it
        self._depth += 1
        try:
            super().start(job_id, size, nodes=nodes, cpu=cpu, cluster=cluster)
        finally:
            self._depth -= 1
        job = self._jobs[job_id]
        got = np.sort(job.nodes)
        placements = tuple(
            name
            for name, where in options.items()
            if where is not None and np.array_equal(where, got)
        )
        if nodes is not None and not placements:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        if share is not None and share == job.spec.cpu_need:
            share = None
        placed = job.cluster if job.cluster >= 0 else None
        cmd = Command("start", job_id, job.size, 0, share, issue, self._now, at, placed, placements)
        self._record(cmd)

    def resize(
        self, job_id: JobId, size: int | np.integer, *, nodes: Any = None, release: Any = None
    ) -> None:
        """The engine's ``resize``, logged with its outcome."""
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        before = job.size if job is not None else 0
        issue = None
        if nodes is not None or release is not None:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        self._depth += 1
        try:
            super().resize(job_id, size, nodes=nodes, release=release)
        finally:
            self._depth -= 1
        self._record(Command("resize", job_id, int(size), before, None, issue, self._now))

    def grant(self, job_id: JobId, *, nodes: Any = None) -> None:
        """The engine's ``grant``, logged with its outcome."""
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        before = job.size if job is not None else 0
        issue = f"{PLACEMENT} (nodes chosen by the scheduler)" if nodes is not None else None
        self._depth += 1
        try:
            super().grant(job_id, nodes=nodes)
        finally:
            self._depth -= 1
        size = self._jobs[job_id].size
        self._record(Command("grant", job_id, size, before, None, issue, self._now))

    def suspend(self, job_id: JobId) -> None:
        """The engine's ``suspend``, logged with its outcome."""
        job_id = as_job_id(job_id)
        self._depth += 1
        try:
            super().suspend(job_id)
        finally:
            self._depth -= 1
        self._record(Command("suspend", job_id, 0, 0, None, None, self._now))

    def resume(
        self,
        job_id: JobId,
        *,
        nodes: Any = None,
        cpu: Any = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        """The engine's ``resume``, logged with its outcome."""
        job_id = as_job_id(job_id)
        issue = None
        if nodes is not None or cpu is not None or cluster is not None:
            issue = f"{PLACEMENT} (resume placed by the scheduler)"
        self._depth += 1
        try:
            super().resume(job_id, nodes=nodes, cpu=cpu, cluster=cluster)
        finally:
            self._depth -= 1
        size = self._jobs[job_id].size
        self._record(Command("resume", job_id, size, 0, None, issue, self._now))

    def _unexpressible(self, verb: str, job_id: int, call: Any) -> None:
        self._depth += 1
        try:
            call()
        finally:
            self._depth -= 1
        self._record(Command(verb, job_id, 0, 0, None, f"{NOT_IN_MENU} ({verb})", self._now))

    def migrate(self, job_id: JobId, nodes: Any, *, cpu: Any = None) -> None:
        """The engine's ``migrate``, logged as a command the menu lacks."""
        job_id = as_job_id(job_id)
        self._unexpressible(
            "migrate", job_id, lambda: super(ShadowSimulator, self).migrate(job_id, nodes, cpu=cpu)
        )

    def set_shares(self, job_id: JobId, cpu: Any) -> None:
        """The engine's ``set_shares``, logged with its outcome."""
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        verb = share_verb(self, job, cpu) if job is not None else None
        if verb is None:
            self._unexpressible(
                "set_shares", job_id, lambda: super(ShadowSimulator, self).set_shares(job_id, cpu)
            )
            return
        self._depth += 1
        try:
            super().set_shares(job_id, cpu)
        finally:
            self._depth -= 1
        share = float(np.asarray(cpu, dtype=float).ravel()[0]) if verb == "lend" else None
        self._record(Command(verb, job_id, 0, 0, share, None, self._now))

    def set_walltime(self, job_id: JobId, walltime: float | np.floating | None) -> None:
        """The engine's ``set_walltime``, logged as a command the menu lacks."""
        job_id = as_job_id(job_id)
        self._unexpressible(
            "set_walltime",
            job_id,
            lambda: super(ShadowSimulator, self).set_walltime(job_id, walltime),
        )

    def reject(self, job_id: JobId) -> None:
        """The engine's ``reject``, logged as a command the menu lacks."""
        job_id = as_job_id(job_id)
        self._unexpressible("reject", job_id, lambda: super(ShadowSimulator, self).reject(job_id))

    def wake_at(self, time: float | np.floating) -> None:
        """The engine's ``wake_at``, its time logged as a float."""
        super().wake_at(time)
        if self._depth == 0:
            self.log.append(float(time))


def share_verb(sim: Simulator, job: Job, cpu: Any) -> str | None:
    """The menu command a ``set_shares`` is, before it runs: ``lend``, ``reclaim`` or ``None``.

    ``lend``: a running malleable job at its full CPU need gets one lower share for every task.
    ``reclaim``: the shares are exactly those of taking back its nodes' idle CPU.
    """
    if job.state is not JobState.RUNNING:
        return None
    try:
        target = np.broadcast_to(np.asarray(cpu, dtype=float), job.cpu.shape)
    except ValueError:
        return None
    need = job.spec.cpu_need
    if (job.cpu == need).all():
        v = target[0] if target.size else need
        lends = job.spec.kind is JobKind.MALLEABLE and (target == v).all() and 0 < v < need
        return "lend" if lends else None
    back = reclaimed_shares(sim, job)
    return "reclaim" if back is not None and np.array_equal(back, target) else None


def shadow_of(sim: Simulator, jobs: Any = None, config: SimConfig | None = None) -> ShadowSimulator:
    """A fresh shadow over ``sim``'s episode, or (``jobs is None and config is None``) a copy."""
    if jobs is None and config is None:
        # A pickle round trip copies an engine about twice as fast as ``copy.deepcopy``.
        # The state goes into a new ``ShadowSimulator`` (a compiled ``Simulator`` cannot change
        # class).
        state = pickle.loads(pickle.dumps(sim.__getstate__(), protocol=pickle.HIGHEST_PROTOCOL))
        shadow = ShadowSimulator.__new__(ShadowSimulator)
        shadow.__setstate__(state)
    else:
        shadow = ShadowSimulator(sim.platform, jobs, config)
    assert isinstance(shadow, ShadowSimulator)
    shadow._init_log()
    return shadow


def decision_point(sim: Simulator) -> tuple[Any, ...]:
    """What identifies a decision point of an episode (the clock and what happened)."""
    events = tuple((e.value, -1 if j is None else j.spec.id) for e, j in sim.happened)
    return (sim.now, sim.done, events)
