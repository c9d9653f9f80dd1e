"""KOALA: multicluster placement with a malleability manager (Buisson et al., CoreGRID TR-0092).

**Placement** (section 4.1): jobs wait in a placement queue, scanned from head to tail at every
decision point; each job that fits is placed by **Worst-Fit**, in the cluster with the most idle
processors (ties: the lowest cluster index). A malleable job is placed when that cluster has at
least its minimum size idle; it starts at its requested (initial) size, or at the largest
size it accepts that fits. Each scan that leaves a job unplaced is one *try*; after
``max_tries`` tries the job fails (``reject``). Close-to-Files needs input-file locations, which
no hpcgym workload has: it is not applicable and refused with a clear error.

**Malleability manager** (section 5.2), per cluster, with the FPSMA or EGS policy
(``hpcgym.baselines.koala.malleability``):

- **PRA** (precedence to running applications): idle processors first grow the running malleable
  jobs; waiting jobs are placed with what is left, i.e. only once no running job can grow; what
  is still idle after placement grows the running jobs again (a job placed on an otherwise
  empty cluster grows at once rather than at the next decision point).
- **PWA** (precedence to waiting applications): after the scan, the first waiting job that
  could not be placed is placed by shrinking running malleable jobs of one cluster (the
  Worst-Fit cluster among those whose idle plus reclaimable processors cover the job's minimum
  size); repeated for the next waiting job. When no cluster can make room, or nothing waits,
  the idle processors grow the running malleable jobs instead.
- ``approach="none"``: placement only; malleable jobs keep their initial size (the baseline).

**Threshold** (section 5.2): grows never leave fewer than ``keep_free`` idle processors in a
cluster, so that local users find some. **Choice**: the threshold bounds grows only (the
paper: "never expands"); placing a new job may use every idle processor.

**Background load** (sections 2.4 and 5.2: local users bypass KOALA, and the system may be "in
direct need of the reclaimed processors"): ``background`` maps the ids of *local* jobs to their
cluster (``hpcgym.baselines.koala.background`` draws them). KOALA never places, grows or
counts them; at every decision point, before the manager, each waiting local job (in
submission order) takes idle processors of its cluster, and when too few are idle the
processors KOALA's malleable jobs got by growing are taken back by a *mandatory* shrink
(the policy's shrink order) down to their minimum. The local job starts once the shrunk jobs
have released their processors (at once when resizing is free); if even that leaves too few,
it waits for its cluster's next free processors. **Choice**: the local resource manager
serves its own jobs first come, first served, and never touches KOALA's rigid jobs or a
malleable job's minimum (the paper's guarantee that KOALA jobs keep running).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.koala.malleability import Policy, accept_grow, grow, shrink, shrinkable
from hpcgym.errors import SpecError
from hpcgym.sim import Job, JobKind, JobState, Simulator

_APPROACHES = ("pra", "pwa", "none")


@dataclass(frozen=True, slots=True)
class KoalaConfig:
    """Parameters of the KOALA scheduler.

    Attributes:
        approach: ``"pra"``, ``"pwa"`` or ``"none"`` (no malleability management).
        policy: ``"fpsma"`` or ``"egs"``.
        placement: ``"worst-fit"`` (``"close-to-files"`` is not applicable: no file locations).
        max_tries: Unsuccessful placement scans after which a job fails; ``None``: never (the
            paper gives no value).
        keep_free: Idle processors per cluster that grows never take (the local-user threshold).
    """

    approach: str = "pra"
    policy: str = "fpsma"
    placement: str = "worst-fit"
    max_tries: int | None = None
    keep_free: int = 0

    def __post_init__(self) -> None:
        if self.approach not in _APPROACHES:
            raise SpecError(f"approach must be one of {_APPROACHES}, got {self.approach!r}")
        Policy(self.policy)
        if self.placement == "close-to-files":
            raise SpecError(
                "Close-to-Files placement needs input-file locations, which hpcgym workloads do "
                "not have; use placement='worst-fit'"
            )
        if self.placement != "worst-fit":
            raise SpecError(f"placement must be 'worst-fit', got {self.placement!r}")
        if self.max_tries is not None and self.max_tries < 1:
            raise SpecError(f"max_tries must be >= 1 or None, got {self.max_tries}")
        if self.keep_free < 0:
            raise SpecError(f"keep_free must be >= 0, got {self.keep_free}")


class Koala(BaseScheduler):
    """KOALA's Worst-Fit placement queue and malleability manager on the bare engine.

    Example:
        >>> from hpcgym.sim import JobKind, JobSpec, Platform, Simulator
        >>> job = JobSpec(1, 0.0, work=10.0, nodes=1, kind=JobKind.MALLEABLE, max_nodes=4)
        >>> sim = Simulator(Platform.multi([2, 4]), [job])
        >>> sim.run(Koala(approach="pra")).jobs["max_nodes_held"].tolist()
        [4]
    """

    name: ClassVar[str] = "koala"

    def __init__(
        self,
        config: KoalaConfig | None = None,
        *,
        background: Mapping[int, int] | None = None,
        **kwargs: Any,
    ) -> None:
        """Use ``config``, or build one from keyword arguments (``Koala(approach="pwa")``).

        Args:
            config: The scheduler's parameters (else ``KoalaConfig(**kwargs)``).
            background: Local jobs that bypass KOALA: job id -> cluster index.
            **kwargs: ``KoalaConfig`` fields, when ``config`` is not given.
        """
        self.config = config if config is not None else KoalaConfig(**kwargs)
        self.policy = Policy(self.config.policy)
        self.background: dict[int, int] = dict(background or {})
        """Local jobs (bypassing KOALA) and their cluster."""
        self.reset()

    def env_needs(self) -> dict[str, Any]:
        """The menu levels its placements, grows and shrinks are targets of."""
        return {**super().env_needs(), **koala_levels(self)}

    def reset(self) -> None:
        """Forget the previous episode."""
        self.tries: dict[int, int] = {}
        """Unsuccessful placement scans per waiting job."""
        self.failed: list[int] = []
        """Jobs rejected after ``max_tries`` tries."""
        self.grows = 0
        """Grow operations issued."""
        self.shrinks = 0
        """Shrink operations issued."""
        self.pending: dict[int, tuple[int, int, tuple[int, ...]]] = {}
        """Job placed by shrinking (PWA, local) -> (cluster, processors held, shrinking jobs)."""
        self.preempted = 0
        """Mandatory shrinks issued for local jobs (also counted in ``shrinks``)."""

    def schedule(self, sim: Simulator) -> None:
        """One scan: local jobs, manager and placement in the order of the approach, tries."""
        approach = self.config.approach
        self._place_pending(sim)
        if self.background:
            self._serve_local(sim)
        if approach == "pra":
            self._grow(sim)
            self._scan(sim)
            self._grow(sim)
        elif approach == "pwa":
            self._scan(sim)
            self._make_room(sim)
        else:
            self._scan(sim)
        self._count_tries(sim)

    # ----------------------------------------------------------------------------- placement
    def _waiting(self, sim: Simulator) -> list[Job]:
        """KOALA's placement queue: waiting jobs that are not local and not held for."""
        local, pending = self.background, self.pending
        return [j for j in sim.queue.values() if j.id not in local and j.id not in pending]

    def _scan(self, sim: Simulator) -> None:
        for job in self._waiting(sim):
            self._place(sim, job)

    def _idle(self, sim: Simulator, cluster: int) -> int:
        """Idle processors of ``cluster`` not held for a job waiting for shrinks to finish."""
        held = sum(n for k, n, _ in self.pending.values() if k == cluster)
        return sim.free_nodes(cluster) - held

    def _place_pending(self, sim: Simulator) -> None:
        """Place the jobs whose shrinking jobs have released their processors."""
        for jid, (k, _, shrunk) in list(self.pending.items()):
            if any(sim.jobs[s].state is JobState.RECONFIGURING for s in shrunk):
                continue
            del self.pending[jid]
            job = sim.jobs[jid]
            if job.state is JobState.QUEUED:
                self._place(sim, job, k)

    @staticmethod
    def _min_size(job: Job) -> int:
        spec = job.spec
        return spec.nodes if spec.kind is JobKind.RIGID else spec.min_nodes

    def _place(self, sim: Simulator, job: Job, cluster: int | None = None) -> bool:
        """Start ``job`` in ``cluster`` (default: Worst-Fit) if it fits; whether it started."""
        free = [self._idle(sim, k) for k in range(len(sim.platform.clusters))]
        k = max(range(len(free)), key=lambda c: (free[c], -c)) if cluster is None else cluster
        spec = job.spec
        if free[k] >= spec.nodes:
            size = spec.nodes
        elif spec.kind is JobKind.RIGID or free[k] < spec.min_nodes:
            return False
        else:
            size = accept_grow(spec, spec.min_nodes, free[k] - spec.min_nodes)
            if not spec.allows(size):
                return False
        sim.start(job.id, size, cluster=k)
        self.tries.pop(job.id, None)
        return True

    def _count_tries(self, sim: Simulator) -> None:
        limit = self.config.max_tries
        for jid in [j.id for j in self._waiting(sim)]:
            n = self.tries[jid] = self.tries.get(jid, 0) + 1
            if limit is not None and n > limit:
                sim.reject(jid)
                del self.tries[jid]
                self.failed.append(jid)

    # ----------------------------------------------------------------------------- local users
    def _serve_local(self, sim: Simulator) -> None:
        """Start waiting local jobs, reclaiming grown processors when too few are idle."""
        waiting = [j for j in sim.queue.values() if j.id in self.background]
        waiting.sort(key=lambda j: (j.spec.submit, j.id))
        for job in waiting:
            if job.id in self.pending:
                continue
            k = self.background[job.id]
            need = job.spec.nodes
            idle = self._idle(sim, k)
            if idle >= need:
                sim.start(job.id, need, cluster=k)
                continue
            jobs = self._malleable(sim, k)
            if idle + sum(shrinkable(j.spec, j.size) for j in jobs) < need:
                continue
            sizes = shrink(self.policy, [(j.spec, j.size) for j in jobs], need - idle)
            self.preempted += sum(1 for j, n in zip(jobs, sizes, strict=True) if n < j.size)
            self._apply(sim, jobs, sizes)
            shrunk = tuple(j.id for j in jobs if j.state is JobState.RECONFIGURING)
            if shrunk:
                self.pending[job.id] = (k, need, shrunk)
            else:
                sim.start(job.id, need, cluster=k)

    # ----------------------------------------------------------------------------- manager
    @staticmethod
    def _malleable(sim: Simulator, cluster: int) -> list[Job]:
        """Running malleable jobs of ``cluster``, earliest started first."""
        jobs = [
            j
            for j in sim.running.values()
            if j.cluster == cluster
            and j.spec.kind is JobKind.MALLEABLE
            and j.state is JobState.RUNNING
        ]
        jobs.sort(key=lambda j: (j.start_time, j.id))
        return jobs

    def _apply(self, sim: Simulator, jobs: list[Job], sizes: list[int]) -> None:
        """Shrinks first (they free processors), then grows."""
        for job, new in zip(jobs, sizes, strict=True):
            if new < job.size:
                sim.resize(job.id, new)
                self.shrinks += 1
        for job, new in zip(jobs, sizes, strict=True):
            if new > job.size:
                sim.resize(job.id, new)
                self.grows += 1

    def _grow(self, sim: Simulator) -> None:
        """Hand each cluster's idle processors (above the threshold) to its malleable jobs."""
        for k in range(len(sim.platform.clusters)):
            amount = self._idle(sim, k) - self.config.keep_free
            if amount <= 0:
                continue
            jobs = self._malleable(sim, k)
            if jobs:
                sizes = grow(self.policy, [(j.spec, j.size) for j in jobs], amount)
                self._apply(sim, jobs, sizes)

    def _make_room(self, sim: Simulator) -> None:
        """PWA: shrink running jobs to place waiting ones; else grow the running jobs.

        A job placed by shrinking starts once the shrunk jobs have released their processors
        (FPSMA's "wait for Job to release the processors"): at once when resizing is free, at
        the end of their reconfiguration otherwise; the released processors are held for it.
        """
        n_clusters = len(sim.platform.clusters)
        for job in self._waiting(sim):
            need = self._min_size(job)
            best: tuple[int, int, int] | None = None
            for k in range(n_clusters):
                idle = self._idle(sim, k)
                spare = sum(shrinkable(j.spec, j.size) for j in self._malleable(sim, k))
                if idle + spare >= need and (best is None or (idle, spare) > best[:2]):
                    best = (idle, spare, k)
            if best is None:
                break
            idle, _, k = best
            jobs = self._malleable(sim, k)
            sizes = shrink(self.policy, [(j.spec, j.size) for j in jobs], need - idle)
            self._apply(sim, jobs, sizes)
            shrunk = tuple(
                j.id
                for j, new in zip(jobs, sizes, strict=True)
                if j.state is JobState.RECONFIGURING
            )
            if shrunk:
                self.pending[job.id] = (k, need, shrunk)
            elif not self._place(sim, job, k):
                break
        self._grow(sim)


KOALA_VARIANTS: dict[str, dict[str, Any]] = {
    "koala-static": {"approach": "none"},
    "koala-pra-fpsma": {"approach": "pra", "policy": "fpsma"},
    "koala-pra-egs": {"approach": "pra", "policy": "egs"},
    "koala-pwa-fpsma": {"approach": "pwa", "policy": "fpsma"},
    "koala-pwa-egs": {"approach": "pwa", "policy": "egs"},
}
"""Registry names and keyword arguments of the paper's variants (``Koala(**kwargs)``)."""

KOALA_PRESETS = KOALA_VARIANTS
"""The old name of :data:`KOALA_VARIANTS` ("preset" names env ids; these are variants)."""


def koala_levels(scheduler: Koala) -> dict[str, tuple[str, ...]]:
    """The menu levels KOALA's commands are targets of (:meth:`Koala.env_needs`).

    Worst-Fit places a job in a cluster of its own choosing, at its requested size or the
    largest it accepts there: ``req@*`` and ``fit@*`` (every cluster). Its malleability manager
    hands out or reclaims processors by FPSMA or EGS, so a grow or shrink can end at any size:
    exact-size levels ``n*``. Under PWA, processors held for a job waiting on shrinks leave the
    others less than the cluster's idle nodes, so its starts need every size in every cluster
    (``n*@*``).
    """
    approach = scheduler.config.approach
    if approach == "none":
        return {"start_levels": ("req@*", "fit@*")}
    if approach == "pra":
        return {"start_levels": ("req@*", "fit@*"), "expand_levels": ("n*",)}
    return {"start_levels": ("n*@*",), "shrink_levels": ("n*",), "expand_levels": ("n*",)}
