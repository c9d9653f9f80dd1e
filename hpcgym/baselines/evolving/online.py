"""Online list scheduling of evolving applications, executed through engine commands.

``EvolvingListScheduler`` keeps a plan (``AppPlan``) for every application in the system and
executes it: ``start`` at a planned start, ``grant`` at a planned step start. It re-plans at
every submission and request (and whenever the engine's state has left the plan):

- **Started applications keep their plans** (they were feasible beside everything planned
  before them; the engine runs them exactly as planned). Their allocations, summed, are the
  base resource EP.
- **Queued applications are re-placed** by Algorithm 1, in submission order, over that base,
  no earlier than now (``hpcgym.baselines.evolving.list_schedule``).

**Why this reproduces the offline plan.** The base fit returns the component-wise earliest
feasible schedule (compacting the latest one with the same end). A queued application's old plan
stays feasible when it is re-placed (the applications before it kept theirs, the ones started
since were placed beside it), and the resource EP it sees only grew, so the earliest (latest)
schedule is unchanged. With every application submitted at 0, the engine run is the offline plan
step for step (tested).

**Wake-ups.** Planned times need not be engine events (a first step is delayed so that it ends
when the second can start; a grant may wait for an expand limit), so the scheduler asks the
engine for a decision point at its next planned action with ``Simulator.wake_at``. Should an
application still be late (the engine's state has left the plan), the late applications are
re-fitted from now (their running step pinned): valid, but no longer the offline plan.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile
from hpcgym.baselines.evolving.fit import earliest_starts, step_limits
from hpcgym.baselines.evolving.list_scheduling import (
    VARIANTS,
    AppPlan,
    list_schedule,
    requested_ep,
    variant,
)
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, Job, Simulator

_REPLAN = frozenset({EventType.SUBMITTED, EventType.REQUESTED})


def _eps(t: float) -> float:
    return 1e-6 * max(1.0, abs(t))


class EvolvingListScheduler(BaseScheduler):
    """Klein and Perez's list scheduling of evolving applications, online (module doc).

    Args:
        variant_name: ``rigid``, ``noX``, ``2X``, ``2X+c``, ``infX`` or ``infX+c``.

    Attributes:
        plans: The current plan of every application seen, by job id.
        scheduling_time: Wall-clock seconds spent in ``schedule`` this episode.
        replans: Re-plans this episode.
    """

    name = "evolving"

    def __init__(self, variant_name: str = "noX") -> None:
        self.variant = variant(variant_name)
        self.plans: dict[int, AppPlan] = {}
        self._reqs: dict[int, EvolutionProfile] = {}
        self.scheduling_time = 0.0
        self.replans = 0

    def __repr__(self) -> str:
        return f"EvolvingListScheduler({self.variant.name!r})"

    def env_needs(self) -> dict[str, Any]:
        """Every decision point: its wake-ups may fall at points the env would skip."""
        return {**super().env_needs(), "skip_trivial": False}

    def reset(self) -> None:
        """Forget the previous episode."""
        self.plans = {}
        self._reqs = {}
        self.scheduling_time = 0.0
        self.replans = 0

    def schedule(self, sim: Simulator) -> None:
        """Re-plan if needed, then start and grant what the plan says is due now."""
        tic = time.perf_counter()
        if len(sim.platform.clusters) != 1:
            raise SpecError(f"{self!r} schedules one cluster; this platform has several")
        if any(kind in _REPLAN for kind, _ in sim.happened) or self._left_plan(sim):
            self._replan(sim)
        self._act(sim)
        nxt = self._next_action(sim)
        if sim.now < nxt < math.inf:
            sim.wake_at(nxt)
        self.scheduling_time += time.perf_counter() - tic

    # ------------------------------------------------------------------------------ planning
    def _req(self, job: Job) -> EvolutionProfile:
        req = self._reqs.get(job.id)
        if req is None:
            req = self._reqs[job.id] = requested_ep(job.spec)
        return req

    def _left_plan(self, sim: Simulator) -> bool:
        now = sim.now
        late = now - _eps(now)
        for job in sim.queue.values():
            plan = self.plans.get(job.id)
            if plan is None or plan.start < late:
                return True
        if sim.queue and not sim.running and self._next_action(sim) == math.inf:
            return True
        return any(self._off_plan(sim, job) for job in sim.running.values())

    def _off_plan(self, sim: Simulator, job: Job) -> bool:
        plan = self.plans.get(job.id)
        if plan is None:
            return True
        k = job.step
        if job.request:
            return plan.step_starts[k] < sim.now - _eps(sim.now)
        body_end = plan.step_starts[k] + float(plan.requested.durations[k])
        return abs(sim.estimated_end(job) - body_end) > _eps(body_end)

    def _replan(self, sim: Simulator) -> None:
        self.replans += 1
        nnodes = sim.platform.total_nodes
        now = sim.now
        base = EvolutionProfile()
        late = []
        for job in sim.running.values():
            if self._off_plan(sim, job):
                late.append(job)
            else:
                base = base + self.plans[job.id].allocated
        for job in late:
            plan = self._refit(sim, job, base, nnodes)
            self.plans[job.id] = plan
            base = base + plan.allocated
        apps = [(j.id, j.spec.submit, self._req(j)) for j in self.queued(sim)]
        plans, _ = list_schedule(apps, nnodes, self.variant, base=base, t0=now)
        for plan in plans:
            self.plans[plan.id] = plan

    def queued(self, sim: Simulator) -> list[Job]:
        """The queued applications in list order: submission order (the paper's).

        Subclasses may order the list otherwise
        (:class:`hpcgym.agents.engine.order.LinearOrder`); an order that never changes between
        re-plans keeps the offline plan's guarantee (module doc), whatever it is.
        """
        return list(sim.queue.values())

    def _refit(self, sim: Simulator, job: Job, base: EvolutionProfile, nnodes: int) -> AppPlan:
        """Re-place the rest of a running application that left its plan; its step is pinned."""
        req = self._req(job)
        dur, nodes = req.durations.tolist(), req.nodes.tolist()
        limit = math.inf if self.variant.rigid else self.variant.limit
        limits = step_limits(req, limit)
        k = job.step
        if job.request:  # holds step k - 1's nodes, waits for step k
            first, pin = k - 1, sim.now - dur[k - 1]
        else:
            first, pin = k, sim.estimated_end(job) - dur[k]
        tail = earliest_starts(
            dur[first:], nodes[first:], limits[first:], base, nnodes, pin, pinned=True
        )
        old = self.plans.get(job.id)
        head = [min(t, pin) for t in (old.step_starts[:first] if old else [pin] * first)]
        starts = [*head, *tail]
        end = starts[-1] + dur[-1]
        bounds = [*starts, end]
        lengths = [bounds[j + 1] - bounds[j] for j in range(len(starts))]
        sched = EvolutionProfile(lengths, nodes)
        return AppPlan(job.id, job.spec.submit, req, starts[0], sched, tuple(starts))

    # ------------------------------------------------------------------------------ executing
    def _act(self, sim: Simulator) -> None:
        now = sim.now
        due = now + _eps(now)
        for job in list(sim.running.values()):
            if (
                job.request
                and self.plans[job.id].step_starts[job.step] <= due
                and sim.free_nodes() >= job.request - job.size
            ):
                sim.grant(job.id)
        for job in list(sim.queue.values()):
            plan = self.plans.get(job.id)
            if plan is not None and plan.start <= due and sim.free_nodes() >= job.spec.nodes:
                sim.start(job.id)

    def _next_action(self, sim: Simulator) -> float:
        now = sim.now
        after = now + _eps(now)
        times = [self.plans[j.id].start for j in sim.queue.values() if j.id in self.plans]
        for job in sim.running.values():
            times.extend(self.plans[job.id].step_starts[job.step :])
        return min((t for t in times if t > after), default=math.inf)


SORTS = ("longest", "widest")
"""Fixed list orders of :class:`SortedListScheduler`."""


class SortedListScheduler(EvolvingListScheduler):
    """List scheduling with the list sorted by a fixed key of each application's request.

    ``longest``: the longest applications first (the sum of their steps' durations);
    ``widest``: the widest first (the most nodes any step asks for); ties in submission order.
    The classic list-scheduling orders (LPT and its width analogue) applied to Klein and
    Perez's list: not in the paper, but a list order a learned policy must beat (the order
    agents of ``hpcgym.agents.engine.order`` learn one). The key never changes, so the online run
    keeps the offline plan (module doc).
    """

    def __init__(self, variant_name: str = "infX", sort: str = "longest") -> None:
        if sort not in SORTS:
            raise SpecError(f"evolving list sort is one of {', '.join(SORTS)}, not {sort!r}")
        super().__init__(variant_name)
        self.sort = sort

    def __repr__(self) -> str:
        return f"SortedListScheduler({self.variant.name!r}, sort={self.sort!r})"

    def queued(self, sim: Simulator) -> list[Job]:
        """The queued applications, longest (or widest) first, ties in submission order."""
        queue = list(sim.queue.values())
        if self.sort == "longest":
            key = [-float(self._req(j).durations.sum()) for j in queue]
        else:
            key = [-float(self._req(j).nodes.max()) for j in queue]
        order = sorted(range(len(queue)), key=lambda i: (key[i], i))
        return [queue[i] for i in order]


def evolving_factories() -> dict[str, Callable[[], EvolvingListScheduler]]:
    """Registry entries: ``evolving-<variant>`` for the six variants, and two sorted lists.

    ``evolving-infX-longest`` and ``evolving-infX-widest``: :class:`SortedListScheduler`.
    """
    out: dict[str, Callable[[], EvolvingListScheduler]] = {
        f"evolving-{name}": partial(EvolvingListScheduler, name) for name in VARIANTS
    }
    for sort in SORTS:
        out[f"evolving-infX-{sort}"] = partial(SortedListScheduler, "infX", sort)
    return out
