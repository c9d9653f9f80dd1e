"""MEBF: malleable EASY backfilling (the MEBF paper; ``docs/papers.md``, "MEBF").

A pass (one decision point) does, in order:

1. **Start** queued jobs in submission order: at the preferred (requested) size when it is
   free, else an elastic job (malleable or moldable) at the largest size that fits, down to its
   minimum. The first job that cannot start becomes the blocked head.
2. **Shrink** while no node is free and the head waits: running malleable jobs, least
   scalable first, each by ``share_factor`` of its nodes and at most once per pass, until the
   nodes released let the head start at its smallest size; then it starts and step 1 repeats.
3. **Backfill** (EASY) when some nodes are free but too few for the head: the head gets a
   reservation for its smallest size; a later job starts now if it ends by the shadow time or
   uses only the extra nodes. Elastic jobs start at the largest size that satisfies that.
4. If nothing backfilled: *shrink+* shrinks for the head as in 2 although nodes are free;
   *expand+* expands as in 5 although jobs wait; *basic* leaves the gap.
5. **Expand** when the queue is empty and nodes are idle: running malleable jobs, most
   scalable first, by the expand policy (Handoff, Spare or Intensive).

**When a resize takes effect** (``resize_at``): ``"now"`` (default; the engine applies it at
once) or ``"phase"`` (the paper's simulator, ElastiSim, applies a reconfiguration at the
application's next scheduling point, between phases). With ``"phase"`` every malleable job's
work is split into ``phases`` equal phases; a resize decided mid-phase is *pending* until the
phase ends (the scheduler asks the engine to wake it then, ``Simulator.wake_at``). A pending
shrink keeps its nodes until then, and a pending expansion holds the idle nodes it will take
(no other job starts on them); a job with a pending resize is not a candidate for another.
A resize whose next boundary is the job's end is not issued.

Every resize must pass the feasibility test: the job's estimated remaining time exceeds
``theta`` times its runtime estimate, and its estimated total execution time after the resize
(elapsed + reconfiguration cost + remaining at the new size) is at most ``gamma`` times its
static execution time (its runtime estimate at the preferred size).

Choices where the paper (whose algorithm listings are figures) is not explicit are marked
**Choice** in this module and listed in ``docs/baselines.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from hpcgym.baselines.base import (
    BaseScheduler,
    estimated_end,
    estimated_remaining,
    largest_size,
    runtime_estimate,
    smallest_size,
)
from hpcgym.baselines.priority import SCORES, Ranking
from hpcgym.errors import SpecError
from hpcgym.sim import (
    Job,
    JobKind,
    JobSpec,
    JobState,
    PowerLaw,
    SimConfig,
    Simulator,
    SpeedupModel,
)
from hpcgym.sim.planning import preferred_or_fit, shadow

Variant = Literal["basic", "shrink+", "expand+"]
Policy = Literal["handoff", "spare", "intensive"]
ResizeAt = Literal["now", "phase"]

_BOUNDARY_EPS = 1e-9
"""Relative tolerance on a phase boundary (work done is a float)."""

_RUNNING = JobState.RUNNING
_MALLEABLE = JobKind.MALLEABLE


@dataclass(frozen=True, slots=True)
class MEBFConfig:
    """MEBF's parameters; the defaults are the paper's.

    Attributes:
        variant: ``basic``, ``shrink+`` or ``expand+`` (what to do when nothing backfills).
        policy: Expand policy: ``handoff``, ``spare`` or ``intensive``.
        share_factor: Share of a job's nodes one shrink releases.
        theta: Resize only if the estimated remaining time exceeds ``theta`` x the estimate.
        gamma: Resize only if the new total time is at most ``gamma`` x the static time.
        spare_ratio: The Spare policy's ratio.
        resize_at: ``"now"`` (resizes take effect at once) or ``"phase"`` (at the job's next
            phase boundary, as in the paper's simulator; see the module docstring).
        phases: Equal phases per malleable job when ``resize_at="phase"`` (**Choice**: the
            paper's application models are not given; 10).
        order: The queue's order, a score of ``hpcgym.baselines.priority`` (``fcfs``, the
            paper's: submission order; ``sjf``, ``f1``, ...): the head that starts, is shrunk
            for and holds the reservation is the best-ranked job, and backfilling tries the
            others in rank order (``mebf-sjf``, ``mebf-f1``; not in the paper: the strongest
            heuristics of the rigid scenarios, given malleability).
    """

    variant: Variant = "basic"
    policy: Policy = "handoff"
    share_factor: float = 0.4
    theta: float = 0.5
    gamma: float = 2.0
    spare_ratio: float = 0.5
    resize_at: ResizeAt = "now"
    phases: int = 10
    order: str = "fcfs"

    def __post_init__(self) -> None:
        if self.variant not in ("basic", "shrink+", "expand+"):
            raise SpecError(f"MEBF variant is basic, shrink+ or expand+, not {self.variant!r}")
        if self.policy not in ("handoff", "spare", "intensive"):
            raise SpecError(f"MEBF policy is handoff, spare or intensive, not {self.policy!r}")
        if not 0 < self.share_factor < 1 or not 0 < self.spare_ratio <= 1:
            raise SpecError("MEBF share_factor must be in (0, 1) and spare_ratio in (0, 1]")
        if self.theta < 0 or self.gamma <= 0:
            raise SpecError("MEBF theta must be >= 0 and gamma > 0")
        if self.resize_at not in ("now", "phase"):
            raise SpecError(f"MEBF resize_at is now or phase, not {self.resize_at!r}")
        if isinstance(self.phases, bool) or not isinstance(self.phases, int) or self.phases < 1:
            raise SpecError(f"MEBF phases must be an integer >= 1, not {self.phases!r}")
        if self.order not in SCORES:
            raise SpecError(f"MEBF order is one of {', '.join(SCORES)}, not {self.order!r}")


def scalability(spec: JobSpec, model: SpeedupModel | None = None) -> float:
    """How well a job scales: ``1 - rho`` for a ``PowerLaw`` speedup (1 is linear).

    For other speedup models, the log-log slope of the speedup between the job's smallest and
    largest sizes, which is the same number for a power law (**Choice**). ``model`` replaces
    the job's own speedup model.
    """
    if model is None:
        model = spec.speedup
    if isinstance(model, PowerLaw):
        return 1.0 - model.rho
    lo, hi = spec.min_nodes, spec.max_nodes
    if hi <= lo:
        lo, hi = 1, 2
    return math.log(model(hi) / model(lo)) / math.log(hi / lo)


class MEBF(BaseScheduler):
    """Malleable EASY backfilling (see the module docstring for a pass).

    Run it with ``SimConfig(kill_on_walltime=False)`` when jobs have walltimes: the engine
    counts walltime in seconds held, so a shrunk job would be killed at its request.

    The performance model MEBF predicts with is, by default, each job's own speedup model
    (a perfect model). ``model`` gives other speedup models by job id, to study model error
    (the paper's +0.1 bias in rho): they decide the scalability order and every prediction at
    a size other than the job's current one. The current size's rate is observed.

    Attributes:
        config: The parameters.
        stats: Counts of ``starts``, ``backfills``, ``shrinks`` and ``expands`` so far.
    """

    name = "mebf"

    def __init__(
        self,
        variant: Variant = "basic",
        policy: Policy = "handoff",
        *,
        model: Mapping[int, SpeedupModel] | None = None,
        **params: Any,
    ):
        """Build MEBF; ``params`` are the other ``MEBFConfig`` fields."""
        self.config = MEBFConfig(variant, policy, **params)
        self._model = model or {}
        self.reset()

    def __repr__(self) -> str:
        order = "" if self.config.order == "fcfs" else f", order={self.config.order!r}"
        return f"MEBF({self.config.variant!r}, {self.config.policy!r}{order})"

    def reset(self) -> None:
        """Forget the previous episode."""
        self.stats = {"starts": 0, "backfills": 0, "shrinks": 0, "expands": 0}
        self._scal: dict[int, float] = {}
        self._touched: set[int] = set()
        self._pending: dict[int, tuple[float, int]] = {}
        """Job id -> (phase boundary time, size) of a resize not yet applied."""
        self._held = 0
        """Idle nodes held for pending expansions (no other job may start on them)."""
        order = self.config.order
        self._rank = None if order == "fcfs" else Ranking(order, 0.0)

    def _queue(self, sim: Simulator) -> list[Job]:
        """The queued jobs in the configured order (submission order by default)."""
        if self._rank is None:
            return list(sim.queue.values())
        rank = self._rank
        rank.follow(sim)
        now = sim.now
        return sorted(sim.queue.values(), key=lambda j: rank.key(j, now))

    def _head(self, sim: Simulator) -> Job | None:
        """The queue's first job in the configured order, or ``None``."""
        if self._rank is None:
            return sim.queue_head()
        queue = self._queue(sim)
        return queue[0] if queue else None

    def _free(self, sim: Simulator) -> int:
        """Nodes free for a start or an expansion: idle ones not held for a pending expansion."""
        return sim.pool.free[0] - self._held

    def _scalability(self, job: Job) -> float:
        s = self._scal.get(job.id)
        if s is None:
            s = self._scal[job.id] = scalability(job.spec, self._model.get(job.id))
        return s

    def _rate(self, spec: JobSpec, size: int) -> float:
        """Predicted progress rate on ``size`` tasks (relative to the preferred size)."""
        model = self._model.get(spec.id)
        if model is None:
            return spec.rate(size)
        return model(size) / model(spec.nodes)

    # ------------------------------------------------------------------------------- pass
    def env_needs(self) -> dict[str, Any]:
        """Its setting's walltime rule and the menu levels its commands are targets of."""
        return {**super().env_needs(), **mebf_levels(self)}

    def env_refusal(self) -> str | None:
        """MEBF ranked by a score: the env's ``ebf`` level reserves for another head."""
        order = self.config.order
        if order == "fcfs":
            return None
        # The env's "ebf" start level plans EASY's reservation for the submission-order head;
        # MEBF ranked by a score reserves for its own head.
        return (
            f"MEBF with its queue ranked by {order} backfills behind its own head, and the "
            "env's ebf level reserves for the submission-order head: run it on the engine "
            f"(mebf-{order}, not mebf-{order}@env)"
        )

    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """No walltime kills: resized jobs outlive their requested time by design."""
        return jobs, replace(config, kill_on_walltime=False)

    def schedule(self, sim: Simulator) -> None:
        """One MEBF pass at the current decision point."""
        if len(sim.pool.free) != 1:
            raise SpecError("mebf schedules a single cluster; this platform has several")
        self._touched = set()
        if self._pending:
            self._apply_due(sim)
        variant = self.config.variant
        self._start_heads(sim)
        while sim.queue and self._free(sim) == 0 and self._shrink_for_head(sim):
            self._start_heads(sim)
        if sim.queue and self._free(sim) > 0 and not self._backfill(sim):
            if variant == "shrink+" and self._shrink_for_head(sim):
                self._start_heads(sim)
            elif variant == "expand+":
                self._expand(sim)
        if not sim.queue and self._free(sim) > 0:
            self._expand(sim)

    def _start_heads(self, sim: Simulator) -> None:
        """Step 1: start jobs in submission order until one cannot start."""
        while (job := self._head(sim)) is not None:
            size = preferred_or_fit(job.spec, self._free(sim))
            if not size:
                return
            sim.start(job.id, size)
            self.stats["starts"] += 1

    # ------------------------------------------------------------------------- reconfigure
    def _boundary(self, sim: Simulator, job: Job) -> float:
        """When ``job`` reaches its next phase boundary (``inf`` if that is its end)."""
        spec = job.spec
        phase = spec.work / self.config.phases
        done = spec.work - sim.remaining_work(job)
        k = math.floor(done / phase * (1 + _BOUNDARY_EPS)) + 1
        if k >= self.config.phases or job.rate <= 0:
            return math.inf
        return sim.now + (k * phase - done) / job.rate

    def _resize(self, sim: Simulator, job: Job, size: int) -> bool:
        """Resize now, or at the next phase boundary (``resize_at="phase"``); whether issued."""
        if self.config.resize_at == "now":
            if size < job.size:
                sim.shrink(job.id, size)
            else:
                sim.expand(job.id, size)
            return True
        at = self._boundary(sim, job)
        if not math.isfinite(at):
            return False
        self._pending[job.id] = (at, size)
        if size > job.size:
            self._held += size - job.size
        sim.wake_at(at)
        return True

    def _apply_due(self, sim: Simulator) -> None:
        """Apply the pending resizes whose boundary has come; drop those of ended jobs."""
        now = sim.now
        for jid, (at, size) in list(self._pending.items()):
            job = sim.jobs[jid]
            running = job.state is _RUNNING
            if running and at > now:
                continue
            del self._pending[jid]
            if size > job.size:
                self._held -= size - job.size
            if running:
                if size < job.size:
                    sim.shrink(jid, size)
                else:
                    sim.expand(jid, size)

    def feasible(self, sim: Simulator, job: Job, size: int) -> bool:
        """The paper's feasibility test for resizing running ``job`` to ``size`` now."""
        spec = job.spec
        cfg = self.config
        static = runtime_estimate(spec)
        left = estimated_remaining(sim, job)  # at the current size, observed rate
        if left <= cfg.theta * static:
            return False
        # The same work at the new size, by the model: scale by the predicted rate ratio.
        left_new = left * self._rate(spec, job.size) / self._rate(spec, size)
        cost = spec.reconfig.resize(job.size, size)
        total = sim.now - job.start_time + cost + left_new
        return total <= cfg.gamma * static

    def _candidates(self, sim: Simulator, most_scalable_first: bool) -> list[Job]:
        """Running malleable jobs not resized in this pass nor pending, sorted by scalability."""
        skip = self._touched
        pending = self._pending
        jobs = [
            j
            for j in sim.running.values()
            if j.spec.kind is _MALLEABLE
            and j.state is _RUNNING
            and j.id not in skip
            and j.id not in pending
        ]
        sign = -1.0 if most_scalable_first else 1.0
        jobs.sort(key=lambda j: (sign * self._scalability(j), j.id))
        return jobs

    def _shrink_for_head(self, sim: Simulator) -> bool:
        """Shrink the least scalable jobs until the head can start; all or nothing.

        **Choice**: the shrinks are planned first and applied only if together they free
        enough nodes for the head's smallest size: a shrink that starts nothing would only
        slow its job down. Each shrink releases ``max(1, floor(share_factor * n))`` nodes (or
        fewer, down to the job's minimum size and size rule).
        """
        head = self._head(sim)
        if head is None:
            return False
        # Nodes that pending shrinks will release count as coming (resize_at="phase").
        coming = sum(sim.jobs[j].size - size for j, (_, size) in self._pending.items())
        need = smallest_size(head.spec) - self._free(sim) - max(coming, 0)
        if need <= 0:
            return False
        plan: list[tuple[Job, int]] = []
        for job in self._candidates(sim, most_scalable_first=False):
            n = job.size
            cut = max(1, math.floor(self.config.share_factor * n))
            size = largest_size(job.spec, n - cut)
            if not size or size >= n or not self.feasible(sim, job, size):
                continue
            if self.config.resize_at == "phase" and not math.isfinite(self._boundary(sim, job)):
                continue
            plan.append((job, size))
            need -= n - size
            if need <= 0:
                break
        if need > 0:
            return False
        for job, size in plan:
            self._resize(sim, job, size)
            self._touched.add(job.id)
            self.stats["shrinks"] += 1
        return True

    def _expand(self, sim: Simulator) -> None:
        """Expand the most scalable jobs into the idle nodes by the expand policy.

        ``GetResources`` gives ``amount = min(max_nodes - n, free)``. **Handoff** expands by
        it only if ``amount > n``; **Intensive** always, to the largest size it allows.
        **Spare** (**Choice**) grants at most ``floor(spare_ratio * free)`` nodes, keeping the
        rest spare for arriving jobs, and only if that exceeds ``spare_ratio * n``.
        """
        cfg = self.config
        for job in self._candidates(sim, most_scalable_first=True):
            idle = self._free(sim)
            if idle <= 0:
                return
            n = job.size
            amount = min(job.spec.max_nodes - n, idle)
            if cfg.policy == "handoff":
                if amount <= n:
                    continue
            elif cfg.policy == "spare":
                amount = min(amount, math.floor(cfg.spare_ratio * idle))
                if amount <= cfg.spare_ratio * n:
                    continue
            size = largest_size(job.spec, n + amount)
            if size <= n or not self.feasible(sim, job, size):
                continue
            if not self._resize(sim, job, size):
                continue
            self._touched.add(job.id)
            self.stats["expands"] += 1

    # ---------------------------------------------------------------------------- backfill
    def _releases(self, sim: Simulator) -> list[tuple[float, int]]:
        """Estimated node releases, sorted: running jobs' ends and pending shrinks' boundaries.

        Nodes held for a pending expansion are released with their job's estimated end.
        """
        pending = self._pending
        out = []
        for j in sim.running.values():
            end = estimated_end(sim, j)
            p = pending.get(j.id)
            if p is None:
                out.append((end, j.size))
            elif p[1] < j.size:
                out += [(p[0], j.size - p[1]), (end, p[1])]
            else:
                out.append((end, p[1]))
        out.sort()
        return out

    def _backfill(self, sim: Simulator) -> bool:
        """Step 3: EASY backfilling behind the head; whether anything started."""
        head = self._head(sim)
        if head is None:
            return False
        now = sim.now
        free = self._free(sim)
        ends = self._releases(sim)
        t_shadow, extra = shadow(now, free, smallest_size(head.spec), ends)
        started = False
        for job in self._queue(sim):
            if free <= 0:
                break
            if job is head:
                continue
            spec = job.spec
            size = preferred_or_fit(spec, free)
            if not size:
                continue
            if now + runtime_estimate(spec) / self._rate(spec, size) > t_shadow:
                # It would still run at the shadow time: it may use only the extra nodes.
                size = size if size <= extra else preferred_or_fit(spec, extra)
                if not size:
                    continue
                extra -= size
            sim.start(job.id, size)
            free -= size
            started = True
            self.stats["backfills"] += 1
        return started


def mebf_levels(scheduler: MEBF) -> dict[str, tuple[str, ...]]:
    """The menu levels MEBF's commands are targets of (:meth:`MEBF.env_needs`).

    Starts at the requested size (``req``) or, elastic jobs, the largest size that fits
    (``fit``); backfills within the head's reservation (``ebf``); shrinks by its share factor
    (``cut<f>``); expands to the largest size that fits (Handoff, Intensive: ``fit``) or by the
    Spare ratio of the idle nodes (``spare<f>``).
    """
    cfg = scheduler.config
    expand = f"spare{cfg.spare_ratio!r}" if cfg.policy == "spare" else "fit"
    return {
        "start_levels": ("req", "fit", "ebf"),
        "shrink_levels": (f"cut{cfg.share_factor!r}",),
        "expand_levels": (expand,),
    }
