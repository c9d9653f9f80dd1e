"""SD-Policy: slowdown-driven co-scheduling of malleable jobs (D'Amico et al., ICPP 2019).

A backfill variant. Each pass visits the queue in priority order (submission order). A job is
started statically when EASY backfilling allows it; otherwise, if it is malleable, its
predicted end in the static case (``static_end``: its start in a reservation map, plus its
requested time) is compared with starting it now on shared nodes (``mall_end``: now plus its
requested time plus the runtime increase). If sharing ends it sooner, up to ``max_mates``
running malleable jobs ("mates") are picked by minimizing the sum of their slowdown penalties
``p_i = (wait + increase + req_time) / req_time`` under ``p_i < MAX_SLOWDOWN``, their node counts
summing to the job's request and the job predicted to end before each mate. Mates are shrunk
inside their nodes to ``1 - sharing_factor`` of the CPU (``set_shares``) and the guest starts on
their nodes with ``sharing_factor``; when the guest ends, the mates get their full nodes back.

Choices where the paper leaves room (also in ``docs/baselines-sdpolicy-koala.md``):

- A node holds at most two jobs: only mates that share no node are eligible, and a guest (which
  shares all its nodes) is never a mate.
- When a mate ends before its guest, the guest takes the freed CPU of those nodes (share 1
  there), as the paper's node manager does; under worst-case progress this speeds it up only
  once all its mates have ended, under simulated ideal progress (``progress="mean"``) at once.
- ``static_end`` comes from a conservative map: running jobs' predicted ends plus a reservation
  for each earlier queued job of the pass (up to ``map_depth`` jobs); admission of static starts
  is EASY (only the first waiting job's reservation is protected). Mates' extensions are not
  checked against that reservation (the paper does not either).
- ``DynAVGSD``: the cut-off is the mean predicted slowdown of the running jobs, recomputed at the
  start of every pass.
- Estimates use the requested time; a job that has none is estimated at its true work.
- Only jobs with ``cpu_need == 1`` take part in sharing (a task is a whole node's CPU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.node_timeline import NodeTimeline
from hpcgym.baselines.sdpolicy.mates import MatePool
from hpcgym.baselines.sdpolicy.runtime import (
    RuntimeModel,
    predicted_end,
    predicted_slowdown,
    requested_time,
)
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, Job, JobKind, JobSpec, JobState, SimConfig, Simulator

DYNAMIC = "dynamic"
"""``max_slowdown`` value selecting the dynamic cut-off (the paper's DynAVGSD)."""

_ENDED = (EventType.COMPLETED, EventType.KILLED)


@dataclass(frozen=True, slots=True)
class SDPolicyConfig:
    """Parameters of SD-Policy.

    Attributes:
        max_slowdown: Static cut-off ``P`` on a mate's penalty (5, 10, 50, ``inf``) or
            ``"dynamic"`` for the mean predicted slowdown of running jobs (DynAVGSD).
        sharing_factor: Fraction of a mate's node CPU given to the guest (0.5 in the paper).
        max_mates: Most mates per guest (``m``; 2 in the paper).
        runtime_model: ``"worst"`` (Equation 6, the policy's choice) or ``"ideal"``
            (Equation 5) for the policy's estimates.
        simulate_model: Also simulate ``runtime_model``: :meth:`SDPolicy.setting` then runs
            the engine with ``SimConfig.progress`` ``"worst"`` or ``"mean"`` (how a job whose
            tasks hold unequal CPU shares progresses). Off by default: the engine's own
            setting stands (and the env, whose engine always runs worst case, can host it).
        coschedule: ``False`` turns the policy into plain EASY backfilling (the baseline).
        map_depth: Queued jobs per pass that get a reservation in the map and a malleable try.
    """

    max_slowdown: float | str = 10.0
    sharing_factor: float = 0.5
    max_mates: int = 2
    runtime_model: str = "worst"
    coschedule: bool = True
    map_depth: int = 100
    simulate_model: bool = False

    def __post_init__(self) -> None:
        if self.max_slowdown != DYNAMIC and not (
            isinstance(self.max_slowdown, (int, float)) and self.max_slowdown > 1
        ):
            raise SpecError(
                f"max_slowdown must be a number > 1, inf or 'dynamic', got {self.max_slowdown!r}"
            )
        if not 0 < self.sharing_factor < 1:
            raise SpecError(f"sharing_factor must be in (0, 1), got {self.sharing_factor}")
        if self.max_mates not in (1, 2):
            raise SpecError(f"max_mates must be 1 or 2, got {self.max_mates}")
        if self.runtime_model not in ("worst", "ideal"):
            raise SpecError(f"runtime_model must be 'worst' or 'ideal', got {self.runtime_model!r}")
        if self.map_depth < 1:
            raise SpecError(f"map_depth must be >= 1, got {self.map_depth}")


class SDPolicy(BaseScheduler):
    """SD-Policy on the bare engine (single-cluster platforms).

    Example:
        >>> from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator
        >>> sim = Simulator(Platform.single(2), [JobSpec(1, 0.0, work=10.0, nodes=2)])
        >>> sim.run(SDPolicy()).summary["makespan"]
        10.0
    """

    name: ClassVar[str] = "sd-policy"

    def __init__(self, config: SDPolicyConfig | None = None, **kwargs: Any) -> None:
        """Use ``config``, or build one from keyword arguments (``SDPolicy(max_slowdown=5)``)."""
        self.config = config if config is not None else SDPolicyConfig(**kwargs)
        self.model = RuntimeModel(self.config.runtime_model)
        self.reset()

    def env_needs(self) -> dict[str, Any]:
        """Its setting's walltime rule and, co-scheduling, the lend/co-schedule/reclaim entries."""
        needs = super().env_needs()
        if self.config.coschedule:
            needs.update(sd_levels(self))
        return needs

    def reset(self) -> None:
        """Forget the previous episode's co-scheduling state."""
        self.guests: dict[int, dict[int, np.ndarray]] = {}
        """Running guest id -> {mate id: the mate's nodes it shares}."""
        self.mate_of: dict[int, int] = {}
        """Running mate id -> its guest's id."""
        self.coscheduled: list[tuple[float, int, tuple[int, ...]]] = []
        """Every co-scheduling decision: (time, guest id, mate ids)."""
        self._end_cache: dict[int, float] = {}

    # ----------------------------------------------------------------------------- pass
    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """No walltime kills; with ``simulate_model``, the engine simulates the runtime model.

        Resized jobs outlive their requested time by design. With ``simulate_model``,
        ``runtime_model="ideal"`` runs the engine with ``progress="mean"`` (the paper's
        Equation 5: a job progresses at its tasks' mean served fraction), ``"worst"`` with
        ``progress="worst"`` (Equation 6).
        """
        config = replace(config, kill_on_walltime=False)
        if self.config.simulate_model:
            progress = "mean" if self.model is RuntimeModel.IDEAL else "worst"
            config = replace(config, progress=progress)
        return jobs, config

    def schedule(self, sim: Simulator) -> None:
        """One pass: restore shares after ends, then static starts and co-scheduling."""
        if len(sim.platform.clusters) != 1:
            raise SpecError("SDPolicy runs on single-cluster platforms; use one cluster")
        for event, job in sim.happened:
            if event in _ENDED and job is not None:
                self._on_end(sim, job)
        if sim.queue:
            self._pass(sim)

    def _on_end(self, sim: Simulator, job: Job) -> None:
        jid = job.id
        self._end_cache.pop(jid, None)
        mates = self.guests.pop(jid, None)
        if mates is not None:
            for mid in mates:
                del self.mate_of[mid]
                self._end_cache.pop(mid, None)
                if sim.jobs[mid].state is JobState.RUNNING:
                    sim.set_shares(mid, 1.0)
        gid = self.mate_of.pop(jid, None)
        if gid is not None:
            freed = self.guests[gid].pop(jid)
            guest = sim.jobs[gid]
            if guest.state is JobState.RUNNING:
                cpu = guest.cpu.copy()
                cpu[np.isin(guest.nodes, freed)] = 1.0
                sim.set_shares(gid, cpu)

    def _ends(self, sim: Simulator) -> dict[int, float]:
        """Predicted end of every running job (cached while a job's shares do not change)."""
        cache = self._end_cache
        ends = {}
        for jid, job in sim.running.items():
            if jid in self.guests or jid in self.mate_of:
                ends[jid] = predicted_end(sim, job, self.model)
                continue
            e = cache.get(jid)
            if e is None:
                e = cache[jid] = predicted_end(sim, job, self.model)
            ends[jid] = e
        return ends

    def _releases(self, sim: Simulator, ends: dict[int, float]) -> list[tuple[float, int]]:
        """Predicted node releases: a shared node frees when both of its jobs have ended."""
        releases: list[tuple[float, int]] = []
        for jid, job in sim.running.items():
            gid = self.mate_of.get(jid)
            if gid is not None:
                releases.append((max(ends[jid], ends[gid]), job.size))
            elif jid in self.guests:
                alone = job.size - sum(nd.size for nd in self.guests[jid].values())
                releases.append((ends[jid], alone))
            else:
                releases.append((ends[jid], job.size))
        return releases

    def _pass(self, sim: Simulator) -> None:
        cfg = self.config
        now = sim.now
        ends = self._ends(sim)
        plan = NodeTimeline(now, sim.free_nodes(), self._releases(sim, ends))
        pool = self._pool(sim, ends) if cfg.coschedule else None
        cutoff = self._cutoff(sim, ends) if pool is not None else math.inf
        shadow, extra = math.inf, 0
        have_head = False
        depth = 0
        for job in list(sim.queue.values()):
            n = job.spec.nodes
            req = requested_time(job)
            free = sim.free_nodes()
            if n <= free and (not have_head or now + req <= shadow or n <= extra):
                sim.start(job.id)
                plan.reserve(now, now + req, n)
                if have_head and now + req > shadow:
                    extra -= n
                continue
            sharing = pool is not None and len(pool) > 0
            if depth >= (cfg.map_depth if sharing else 1):
                if free == 0:
                    break
                continue
            depth += 1
            start = plan.earliest(n, req)
            if sharing and self._try_share(sim, job, start + req, cutoff, pool, plan):  # type: ignore[arg-type]
                continue
            if math.isfinite(start):
                plan.reserve(start, start + req, n)
            if not have_head:
                have_head = True
                shadow = start
                extra = plan.free_at(start) if math.isfinite(start) else 0

    def _cutoff(self, sim: Simulator, ends: dict[int, float]) -> float:
        ms = self.config.max_slowdown
        if ms != DYNAMIC:
            return float(ms)
        if not ends:
            return math.inf
        now = sim.now
        running = sim.running
        total = sum(predicted_slowdown(running[j], max(e, now)) for j, e in ends.items())
        return total / len(ends)

    def _pool(self, sim: Simulator, ends: dict[int, float]) -> MatePool | None:
        jobs, job_ends, reqs = [], [], []
        for jid, job in sim.running.items():
            spec = job.spec
            if (
                spec.kind is JobKind.MALLEABLE
                and spec.cpu_need == 1.0
                and job.state is JobState.RUNNING
                and jid not in self.mate_of
                and jid not in self.guests
            ):
                jobs.append(job)
                job_ends.append(ends[jid])
                reqs.append(requested_time(job))
        return MatePool(jobs, job_ends, reqs, sim.now) if jobs else None

    # ----------------------------------------------------------------------------- sharing
    def _try_share(
        self,
        sim: Simulator,
        job: Job,
        static_end: float,
        cutoff: float,
        pool: MatePool,
        plan: NodeTimeline,
    ) -> bool:
        """Co-schedule ``job`` if that ends it sooner and mates qualify (Listings 1 and 2)."""
        spec = job.spec
        if spec.kind is not JobKind.MALLEABLE or spec.cpu_need != 1.0:
            return False
        sf = self.config.sharing_factor
        now = sim.now
        duration = requested_time(job) / sf
        if not now + duration < static_end:
            return False
        chosen = pool.pick(spec.nodes, duration, sf, cutoff, self.config.max_mates)
        if chosen is None:
            return False
        pool.remove(chosen)
        shared: dict[int, np.ndarray] = {}
        for i in chosen:
            mate = pool.jobs[i]
            sim.set_shares(mate.id, 1.0 - sf)
            shared[mate.id] = np.array(mate.nodes)
            self.mate_of[mate.id] = spec.id
            self._end_cache.pop(mate.id, None)
            old_end = float(pool.ends[i])
            plan.reserve(old_end, old_end + duration * sf, mate.size)
        sim.start(spec.id, nodes=np.concatenate(list(shared.values())), cpu=sf)
        self.guests[spec.id] = shared
        self.coscheduled.append((now, spec.id, tuple(shared)))
        return True


SD_VARIANTS: dict[str, dict[str, Any]] = {
    "sd-policy-maxsd5": {"max_slowdown": 5.0},
    "sd-policy-maxsd10": {"max_slowdown": 10.0},
    "sd-policy-maxsd50": {"max_slowdown": 50.0},
    "sd-policy-maxsdinf": {"max_slowdown": math.inf},
    "sd-policy-dynavgsd": {"max_slowdown": DYNAMIC},
    "sd-policy-dynavgsd-ideal": {"max_slowdown": DYNAMIC, "runtime_model": "ideal"},
    "sd-policy-static": {"coschedule": False},
}
"""Registry names and keyword arguments of the paper's variants (``SDPolicy(**kwargs)``)."""

SD_PRESETS = SD_VARIANTS
"""The old name of :data:`SD_VARIANTS` ("preset" names env ids; these are variants)."""


def sd_levels(scheduler: SDPolicy) -> dict[str, Any]:
    """The menu entries SD-Policy's co-scheduling needs (:meth:`SDPolicy.env_needs`).

    Mates lend ``sharing_factor`` of their CPU (``lend_levels``); the guest starts at that share
    on the lent CPU (``coschedule_levels``, ``coschedule_placement="packed"``); when a guest or a
    mate ends, the other takes its CPU back (``reclaim``).
    """
    sf = scheduler.config.sharing_factor
    return {
        "coschedule_levels": (sf,),
        "coschedule_placement": "packed",
        "lend_levels": (sf,),
        "reclaim": True,
    }
