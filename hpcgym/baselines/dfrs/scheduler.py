"""The DFRS schedulers (paper, section 4): one engine scheduler for all Table 1 combinations.

At each decision point the scheduler builds a target mapping from the engine's current one,
in this order: on completions, the completion action; for each submitted job in submission
order, the submission action; at a periodic tick, the periodic action. It then computes the
yields of the mapped jobs (``opt``) and issues the commands (``apply.apply_target``). The
engine charges the jobs' reconfiguration model on every resume and migration: with
``FixedCost(300)`` that is the paper's rescheduling penalty, of which the scheduler knows
nothing.

Choices where the paper leaves room:
- Submission actions treat a job with a running job's priority like any other: GreedyP and
  GreedyPM pause only running jobs of *lower* priority than the new job (a job submitted at the
  same instant earlier, still at virtual time 0, outranks it).
- Jobs in their rescheduling penalty (``RECONFIGURING``) keep their nodes under MCB8, like the
  young jobs of ``minft``/``minvt`` (the engine cannot migrate them; they may still be paused).
  GreedyPM pauses them instead of moving them.
- Yields are recomputed at every submission, completion and tick, also when no task moves.
- Virtual time (priority, ``minvt``, MCB8-stretch) is, by default, the integral of the yield the
  scheduler *allocated* (``virtual_time="allocated"``): the paper defines the yield as the CPU
  fraction allocated over the need, and its schedulers know nothing of the penalty, so a job's
  virtual time keeps growing while it pays one. ``virtual_time="progress"`` uses the engine's
  ``Simulator.virtual_time`` instead, which stops during a penalty.
- The bins of a fresh MCB8 packing are named after the nodes holding most of their tasks
  (``relabel``); ``relabel_bins=False`` keeps MCB8's own numbering (more migrations).

**Penalty accounting** (the paper says only that every preemption or migration costs 300 s
"of wall clock time", carried out "through a pause/resume mechanism" that moves the job
"between node memory and secondary storage"; what the job holds meanwhile is not stated):

- ``penalty="hold"`` (default, the engine's reconfiguration model): a resumed or migrated job
  sits on its new nodes for the penalty, holding their memory and its CPU share without
  progress, pinned there (MCB8 keeps it; GreedyPM pauses rather than moves it).
- ``penalty="release"``: the penalty is spent off the nodes. A migration suspends the job
  (freeing its nodes at once) and a resume of a paused job is deferred: either way the job
  is *in transit* for ``penalty_seconds``, holding nothing, invisible to the mapping actions.
  When the transit ends (a ``WAKEUP`` decision point) the job waits like a paused job with its
  penalty paid: Greedy places it at once if its memory fits (highest priority first), and any
  later mapping action may put it anywhere; its resume is then free. The engine runs without
  reconfiguration cost (``setting`` gives it ``FixedCost(0)``), and the engine's counts read
  differently: every migration is a suspension, so ``ApplyStats.released_moves`` counts the
  migrations among them. Preemptions stay free when paid back; a paused job pays when it is
  resumed, as under ``hold``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.dfrs.allocation import maxmin_yields, yields
from hpcgym.baselines.dfrs.apply import ApplyStats, apply_target, same_nodes
from hpcgym.baselines.dfrs.config import PENALTY, DFRSConfig, parse_name
from hpcgym.baselines.dfrs.mcb8 import PackJob, mcb8, mcb8_stretch
from hpcgym.baselines.dfrs.placement import Placement, fits_memory, greedy_nodes
from hpcgym.baselines.dfrs.priority import by_priority
from hpcgym.baselines.dfrs.relabel import relabel
from hpcgym.baselines.dfrs.setup import dfrs_setup
from hpcgym.baselines.dfrs.stretch import avg_stretch_yields, stretch_yields
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, Job, JobSpec, JobState, SimConfig, Simulator

_SUBMITTED = EventType.SUBMITTED
_COMPLETED = EventType.COMPLETED
_KILLED = EventType.KILLED
_TICK = EventType.TICK
_RUNNING = JobState.RUNNING
_SUSPENDED = JobState.SUSPENDED
_PENALTIES = ("hold", "release")


class DFRSScheduler(BaseScheduler):
    """A DFRS algorithm of the paper's Table 1 with its allocation and remapping limits."""

    name = "dfrs"

    def __init__(
        self,
        config: DFRSConfig | str | None = None,
        *,
        virtual_time: str = "allocated",
        relabel_bins: bool = True,
        penalty: str = "hold",
        penalty_seconds: float = PENALTY,
    ) -> None:
        """An algorithm by config or paper-style name, with the choices of the module doc.

        Args:
            config: The algorithm (default: ``GreedyPM */per/opt=min/minvt=600``).
            virtual_time: ``"allocated"`` or ``"progress"``.
            relabel_bins: Rename MCB8's bins after the nodes holding their tasks.
            penalty: ``"hold"`` (the engine charges it on the nodes) or ``"release"``.
            penalty_seconds: Transit time of a resumed or migrated job under ``"release"``.
        """
        if config is None:
            config = DFRSConfig()
        elif isinstance(config, str):
            config = parse_name(config)
        if virtual_time not in ("allocated", "progress"):
            raise SpecError(f"virtual_time must be 'allocated' or 'progress', got {virtual_time!r}")
        if penalty not in _PENALTIES:
            raise SpecError(f"penalty must be one of {_PENALTIES}, got {penalty!r}")
        if not penalty_seconds >= 0:
            raise SpecError(f"penalty_seconds must be >= 0, got {penalty_seconds}")
        self.config = config
        self.penalty = penalty
        self.penalty_seconds = float(penalty_seconds)
        self.virtual_time = virtual_time
        self.relabel_bins = relabel_bins
        self.stats = ApplyStats()
        self._vt: dict[int, float] = {}
        self._t = 0.0
        self._transit: dict[int, float] = {}
        """``release``: jobs in transit -> end of their penalty."""
        self._paid: set[int] = set()
        """``release``: paused jobs whose penalty is paid (their next resume is free)."""

    def __repr__(self) -> str:
        return f"DFRSScheduler({self.config.name!r})"

    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """The paper's setting (``dfrs_setup``), other engine settings kept.

        A 300 s penalty per preemption or migration, the period as tick, no walltime kills.
        """
        cost = self.penalty_seconds if self.penalty == "hold" else 0.0
        penalised, dfrs = dfrs_setup(jobs, self.config, penalty=cost)
        return penalised, replace(config, kill_on_walltime=dfrs.kill_on_walltime, tick=dfrs.tick)

    def reset(self) -> None:
        """Forget the previous episode's counters and virtual times."""
        self.stats = ApplyStats()
        self._vt = {}
        self._t = 0.0
        self._transit = {}
        self._paid = set()

    def _accumulate(self, sim: Simulator) -> None:
        """Add the yields allocated since the last decision point to the virtual times."""
        dt = sim.now - self._t
        self._t = sim.now
        if dt <= 0 or self.virtual_time != "allocated":
            return
        vt = self._vt
        for jid, job in sim.running.items():
            y = min(1.0, float(job.cpu.min()) / job.spec.cpu_need)
            vt[jid] = vt.get(jid, 0.0) + y * dt

    def _virtual(self, sim: Simulator, job: Job) -> float:
        """The virtual time the scheduler believes in (see the class doc)."""
        if self.virtual_time == "allocated":
            return self._vt.get(job.id, 0.0)
        return sim.virtual_time(job)

    # ----------------------------------------------------------------------------- driving
    def schedule(self, sim: Simulator) -> None:
        """Map, allocate and issue commands for what happened since the last decision point."""
        cfg = self.config
        self._accumulate(sim)
        submitted: list[Job] = []
        completed = tick = False
        for event, job in sim.happened:
            if event is _SUBMITTED and job is not None:
                submitted.append(job)
            elif event is _COMPLETED or event is _KILLED:
                completed = True
            elif event is _TICK:
                tick = True
        arrived: list[Job] = []
        if self._transit:
            for jid, end in list(self._transit.items()):
                if end <= sim.now:
                    del self._transit[jid]
                    self._paid.add(jid)
                    arrived.append(sim.jobs[jid])
        if not (submitted or completed or tick or arrived):
            return
        if len(sim.platform.clusters) != 1:
            raise SpecError("DFRS schedules a single cluster of identical nodes")
        if cfg.periodic != "none" and sim.config.tick != cfg.period:
            raise SpecError(
                f"{cfg.name} needs SimConfig(tick={cfg.period:g}), got tick={sim.config.tick}"
            )
        target = Placement(sim.platform.total_nodes)
        for job in sim.running.values():
            target.add(job.spec, job.nodes)
        alloc = None
        if completed:
            if cfg.completion == "greedy":
                self._greedy_waiting(sim, target)
            elif cfg.completion == "mcb8":
                target = self._mcb8(sim)
        if submitted:
            if cfg.submit == "mcb8":
                target = self._mcb8(sim)
            elif cfg.submit != "none":
                for job in submitted:
                    self._admit(sim, target, job)
        if tick and cfg.periodic == "mcb8":
            target = self._mcb8(sim)
        elif tick and cfg.periodic == "mcb8-stretch":
            target, alloc = self._mcb8_stretch(sim)
        if arrived:
            self._place_arrived(sim, target, arrived)
        if self.penalty == "release":
            self._release(sim, target)
            alloc = None
        if alloc is None and cfg.periodic == "mcb8-stretch":
            alloc = self._stretch_alloc(sim, target)
        elif alloc is None:
            alloc = yields(target, cfg.opt)
        apply_target(sim, target, alloc, self.stats)
        if self._paid:
            self._paid = {jid for jid in self._paid if sim.jobs[jid].state is _SUSPENDED}

    # ----------------------------------------------------------------------------- release
    def _place_arrived(self, sim: Simulator, target: Placement, arrived: list[Job]) -> None:
        """``release``: Greedy for the jobs whose transit just ended, highest priority first."""
        for job in by_priority(sim, arrived, self._vfun(sim)):
            if job.id in target or job.state is not _SUSPENDED:
                continue
            nodes = greedy_nodes(target, job.spec)
            if nodes is not None:
                target.add(job.spec, nodes)

    def _release(self, sim: Simulator, target: Placement) -> None:
        """``release``: send the jobs the target resumes unpaid or moves into transit."""
        now = sim.now
        for jid, nodes in list(target.nodes.items()):
            job = sim.jobs[jid]
            if job.state is _SUSPENDED and jid not in self._paid:
                pass  # a resume: its penalty comes first
            elif job.state is _RUNNING and not same_nodes(job.nodes, nodes):
                sim.suspend(jid)  # a migration: off its nodes at once
                self.stats.suspends += 1
                self.stats.released_moves += 1
            else:
                continue
            target.remove(jid)
            self._transit[jid] = now + self.penalty_seconds
            sim.wake_at(now + self.penalty_seconds)

    def _vfun(self, sim: Simulator) -> Callable[[Job], float]:
        return lambda job: self._virtual(sim, job)

    # ----------------------------------------------------------------------------- greedy
    def _waiting(self, sim: Simulator) -> list[Job]:
        """Queued and paused jobs, less those in transit (``release``)."""
        transit = self._transit
        paused = [j for j in sim.suspended.values() if j.id not in transit]
        return [*sim.queue.values(), *paused]

    def _greedy_waiting(self, sim: Simulator, target: Placement) -> None:
        """Greedy for every waiting job (queued or paused), highest priority first."""
        waiting = self._waiting(sim)
        for job in by_priority(sim, waiting, self._vfun(sim)):
            nodes = greedy_nodes(target, job.spec)
            if nodes is not None:
                target.add(job.spec, nodes)

    def _admit(self, sim: Simulator, target: Placement, job: Job) -> None:
        """The submission action for ``job``: Greedy, GreedyP or GreedyPM."""
        spec = job.spec
        if spec.id in target or job.state is not JobState.QUEUED:
            return  # already placed by the completion action at this instant
        nodes = greedy_nodes(target, spec)
        if nodes is not None:
            target.add(spec, nodes)
            return
        if self.config.submit == "greedy":
            return
        # GreedyP: mark running jobs of lower priority, lowest first, until the job fits.
        mapped = [sim.jobs[jid] for jid in target.nodes]
        ranked = by_priority(sim, [*mapped, job], self._vfun(sim))
        lower = ranked[ranked.index(job) + 1 :]
        trial = target.copy()
        marked: list[Job] = []
        for other in reversed(lower):
            trial.remove(other.id)
            marked.append(other)
            if fits_memory(trial, spec):
                break
        else:
            return
        # Then unmark, highest priority first, every job that can stay with the job still fitting.
        paused: list[Job] = []
        for other in reversed(marked):
            trial.add(other.spec, target.nodes[other.id])
            if not fits_memory(trial, spec):
                trial.remove(other.id)
                paused.append(other)
        nodes = greedy_nodes(trial, spec)
        assert nodes is not None
        trial.add(spec, nodes)
        if self.config.submit == "greedypm":
            for other in paused:
                if other.state is not _RUNNING:
                    continue
                moved = greedy_nodes(trial, other.spec)
                if moved is not None:
                    trial.add(other.spec, moved)
        target.load, target.mem = trial.load, trial.mem
        target.nodes, target.specs = trial.nodes, trial.specs

    # ----------------------------------------------------------------------------- MCB8
    def _pack_jobs(self, sim: Simulator) -> tuple[list[Job], list[PackJob]]:
        """Every active job in priority order, pinned where its mapping must be kept."""
        cfg = self.config
        now = sim.now
        active = by_priority(sim, [*sim.running.values(), *self._waiting(sim)], self._vfun(sim))
        packs = []
        for job in active:
            spec = job.spec
            pinned = None
            if job.size:
                young = (cfg.minft is not None and now - spec.submit < cfg.minft) or (
                    cfg.minvt is not None and self._virtual(sim, job) < cfg.minvt
                )
                if young or job.state is not _RUNNING:
                    pinned = tuple(int(n) for n in job.nodes)
            packs.append(
                PackJob(spec.id, spec.nodes, spec.cpu_need, spec.mem, pinned, order=spec.id)
            )
        return active, packs

    def _placement(
        self, sim: Simulator, mapping: dict[int, list[int]], packs: list[PackJob]
    ) -> Placement:
        """The target of a fresh packing, bins renamed to spare migrations (``relabel``)."""
        current = {jid: job.nodes for jid, job in sim.running.items()}
        pinned = {p.id for p in packs if p.pinned is not None}
        if self.relabel_bins:
            named = relabel(mapping, current, pinned, sim.platform.total_nodes)
        else:
            named = {jid: np.asarray(b, dtype=np.int64) for jid, b in mapping.items()}
        target = Placement(sim.platform.total_nodes)
        for jid, nodes in named.items():
            job = sim.jobs[jid]
            target.add(job.spec, job.nodes if same_nodes(job.nodes, nodes) else nodes)
        return target

    def _mcb8(self, sim: Simulator) -> Placement:
        _, packs = self._pack_jobs(sim)
        mapping, _ = mcb8(packs, sim.platform.total_nodes)
        return self._placement(sim, mapping, packs)

    def _mcb8_stretch(self, sim: Simulator) -> tuple[Placement, dict[int, float]]:
        active, packs = self._pack_jobs(sim)
        now = sim.now
        flow = {j.id: now - j.spec.submit for j in active}
        virtual = {j.id: self._virtual(sim, j) for j in active}
        period = self.config.period
        mapping, _ = mcb8_stretch(packs, flow, virtual, period, sim.platform.total_nodes)
        target = self._placement(sim, mapping, packs)
        return target, self._stretch_alloc(sim, target)

    def _stretch_alloc(self, sim: Simulator, target: Placement) -> dict[int, float]:
        """Yields for the estimated stretches at the next period.

        ``opt=max``: iteratively minimize the largest; ``opt=avg``: minimize their sum.
        """
        if not target.nodes:
            return {}
        now = sim.now
        flow = {jid: now - spec.submit for jid, spec in target.specs.items()}
        virtual = {jid: self._virtual(sim, sim.jobs[jid]) for jid in target.specs}
        period = self.config.period
        if self.config.opt == "avg":
            return avg_stretch_yields(target, flow, virtual, period)
        return stretch_yields(target, flow, virtual, period, maxmin_yields(target))


def scheduler_from_name(name: str, period: float | None = None) -> DFRSScheduler:
    """A ``DFRSScheduler`` from a paper-style name (period: 600 s unless given)."""
    return DFRSScheduler(parse_name(name) if period is None else parse_name(name, period))
