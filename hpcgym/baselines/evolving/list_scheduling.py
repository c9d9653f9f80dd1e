"""List scheduling of fully-predictable evolving applications (Klein and Perez, Algorithm 1).

Applications are taken in list order (submission order, then id); each is placed by a fit over
the resource EP of those placed before it, and its scheduled EP is added to that resource EP,
so ``epr(t) <= nnodes`` holds throughout. The variants of the paper's evaluation:

==========  =====================================================================
``rigid``   peak nodes x total duration as one block, earliest fit (CBF-like)
``noX``     base fit, expand limit 1 (no step is held)
``2X``      base fit, expand limit 2
``2X+c``    base fit, expand limit 2, then compacting
``infX``    base fit, no expand limit
``infX+c``  base fit, no expand limit, then compacting
==========  =====================================================================

``list_schedule`` is the offline algorithm (a pure function); ``plan_metrics`` computes the
paper's system- and user-centric metrics from a plan. The online scheduler, which re-plans with
the same functions inside the engine, is ``hpcgym.baselines.evolving.online``.

**Choices.** The paper's rigid applications *hold* their peak node count from start to end:
the plan counts that block as allocated, and the nodes it holds beyond each step's need as
waste. A fit starts no earlier than the application's submission (the paper's test cases
submit everything at 0). Waits happen only before larger steps unless ``expand_decreases``
(see ``hpcgym.baselines.evolving.fit``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hpcgym.baselines.evolving.evolution_profile import EvolutionProfile
from hpcgym.baselines.evolving.fit import base_fit, rigid_fit
from hpcgym.errors import SpecError
from hpcgym.sim import JobKind, JobSpec


@dataclass(frozen=True, slots=True)
class Variant:
    """One configuration of Algorithm 1: expand limit, compacting, or the rigid baseline."""

    name: str
    limit: float = 1.0
    compact: bool = False
    rigid: bool = False


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("rigid", rigid=True),
        Variant("noX"),
        Variant("2X", 2.0),
        Variant("2X+c", 2.0, compact=True),
        Variant("infX", math.inf),
        Variant("infX+c", math.inf, compact=True),
    )
}
"""The paper's six variants, by name."""


def variant(name: str) -> Variant:
    """The variant called ``name``.

    Raises:
        SpecError: Unknown name (the message lists the known ones).
    """
    try:
        return VARIANTS[name]
    except KeyError:
        raise SpecError(
            f"no evolving-scheduling variant {name!r}; known: {', '.join(VARIANTS)}"
        ) from None


@dataclass(frozen=True, slots=True)
class AppPlan:
    """Where one application runs.

    Attributes:
        id: The application's (job's) id.
        submit: Its submission time.
        requested: Its requested EP.
        start: When its first step starts.
        scheduled: The expanded EP it is given (rigid: the one block it holds), from ``start``.
        step_starts: Absolute start time of each requested step.
    """

    id: int
    submit: float
    requested: EvolutionProfile
    start: float
    scheduled: EvolutionProfile
    step_starts: tuple[float, ...]

    @property
    def end(self) -> float:
        """Completion time."""
        return self.start + self.scheduled.duration

    @property
    def allocated(self) -> EvolutionProfile:
        """The nodes it holds, in absolute time: ``delay(scheduled, start)``."""
        return self.scheduled.delay(self.start)

    @property
    def waste(self) -> float:
        """Node-seconds held without progress."""
        return self.scheduled.area() - self.requested.area()


def requested_ep(spec: JobSpec) -> EvolutionProfile:
    """The requested EP of an evolving job.

    Raises:
        SpecError: The job is not evolving.
    """
    if spec.kind is not JobKind.EVOLVING:
        raise SpecError(f"job {spec.id} is {spec.kind.value}; evolving scheduling needs EPs")
    return EvolutionProfile.from_steps((s.duration, s.nodes) for s in spec.evolution)


def place(
    app_id: int,
    submit: float,
    req: EvolutionProfile,
    res: EvolutionProfile,
    nnodes: int,
    var: Variant,
    *,
    t0: float | None = None,
    expand_decreases: bool = False,
) -> AppPlan:
    """Fit one application over ``res`` with variant ``var``, no earlier than ``t0``.

    ``t0`` defaults to ``submit``.
    """
    release = submit if t0 is None else max(t0, submit)
    if var.rigid:
        start, sched = rigid_fit(req, res, nnodes, t0=release)
        starts = start + req.ends - req.durations
    else:
        start, sched = base_fit(
            req,
            res,
            nnodes,
            var.limit,
            t0=release,
            compact=var.compact,
            expand_decreases=expand_decreases,
        )
        starts = start + sched.ends - sched.durations
    return AppPlan(app_id, submit, req, start, sched, tuple(starts.tolist()))


def list_schedule(
    apps: Iterable[tuple[int, float, EvolutionProfile]],
    nnodes: int,
    var: Variant | str,
    *,
    base: EvolutionProfile | None = None,
    t0: float = 0.0,
    expand_decreases: bool = False,
) -> tuple[list[AppPlan], EvolutionProfile]:
    """Algorithm 1: place the applications one after the other, in the given order.

    Args:
        apps: ``(id, submit, requested EP)`` in list order.
        nnodes: Platform size.
        var: Variant (or its name).
        base: Nodes already taken, in absolute time (online: the started applications).
        t0: No application starts before ``t0`` (online: now).
        expand_decreases: The paper's literal model (see ``hpcgym.baselines.evolving.fit``).

    Returns:
        The plans, in list order, and the final resource EP (``base`` plus every plan).
    """
    v = variant(var) if isinstance(var, str) else var
    epr = base if base is not None else EvolutionProfile()
    plans = []
    for app_id, submit, req in apps:
        plan = place(app_id, submit, req, epr, nnodes, v, t0=t0, expand_decreases=expand_decreases)
        epr = epr + plan.allocated
        plans.append(plan)
    return plans, epr


def schedule_jobs(
    jobs: Sequence[JobSpec], nnodes: int, var: Variant | str, *, expand_decreases: bool = False
) -> list[AppPlan]:
    """Offline list scheduling of evolving jobs in submission order (ties by id)."""
    ordered = sorted(jobs, key=lambda s: (s.submit, s.id))
    apps = [(s.id, s.submit, requested_ep(s)) for s in ordered]
    return list_schedule(apps, nnodes, var, expand_decreases=expand_decreases)[0]


def plan_metrics(plans: Sequence[AppPlan], nnodes: int) -> dict[str, float]:
    """The paper's metrics of a plan (areas in node-seconds, times in seconds).

    System-centric: ``utilization`` (allocated over ``nnodes x makespan``),
    ``effective_utilization`` (requested steps' node-seconds over the same), ``makespan``
    (last end - first submission), ``waste`` (total). User-centric, per application:
    ``mean_waste``/``max_waste``, ``mean_completion``/``max_completion`` (end - submit),
    ``mean_wait``/``max_wait`` (start - submit).
    """
    if not plans:
        return {}
    submit = np.array([p.submit for p in plans])
    start = np.array([p.start for p in plans])
    end = np.array([p.end for p in plans])
    waste = np.array([p.waste for p in plans])
    alloc = sum(p.scheduled.area() for p in plans)
    useful = sum(p.requested.area() for p in plans)
    makespan = float(end.max() - submit.min())
    area = nnodes * makespan
    completion, wait = end - submit, start - submit
    return {
        "utilization": alloc / area if area > 0 else 0.0,
        "effective_utilization": useful / area if area > 0 else 0.0,
        "makespan": makespan,
        "waste": float(waste.sum()),
        "mean_waste": float(waste.mean()),
        "max_waste": float(waste.max()),
        "mean_completion": float(completion.mean()),
        "max_completion": float(completion.max()),
        "mean_wait": float(wait.mean()),
        "max_wait": float(wait.max()),
    }
