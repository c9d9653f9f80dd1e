"""SD-Policy's runtime models and estimates (D'Amico et al., ICPP 2019, section 3.4).

A job's duration is split in slots of constant allocation. In slot ``t`` a job whose tasks
hold CPU shares ``used`` (fractions of a node; the static allocation is a full node, share 1)
progresses at a rate the model gives:

- **ideal** (Equation 5): the job balances its load over its tasks, so its rate is the mean
  served fraction ``mean(min(1, used / need))``;
- **worst case** (Equation 6): the job is statically balanced and the least-served task sets the
  pace, ``min(min(1, used / need))``.

The paper writes the *runtime* of a slot as ``req_cpus / used_cpus * time``; we call the
runtime increase the part above the static time, ``sum(time_t / rate_t - time_t)`` over the slots
(choice: Listing 1 adds "the increase" to the requested time, which only makes sense for the
excess). The engine simulates either model (``SimConfig.progress``: ``"worst"`` or ``"mean"``);
``SDPolicy(simulate_model=True)`` makes its ``setting`` pick the one matching the policy's
``runtime_model``.

Estimates use only what a scheduler knows: the user's requested time (``walltime``; the real
work when the workload has none) and the work done so far.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from hpcgym.sim import Job, Simulator


class RuntimeModel(Enum):
    """How a job with unequal CPU shares over its tasks progresses (paper, section 3.4)."""

    IDEAL = "ideal"
    """Equation 5: the mean served fraction over tasks."""
    WORST = "worst"
    """Equation 6: the least-served task's fraction (the engine's default progress)."""


def model_rate(cpu: np.ndarray, need: float, model: RuntimeModel) -> float:
    """Progress rate (1 = static speed) of a job whose tasks hold shares ``cpu``.

    Args:
        cpu: CPU share of each task.
        need: The job's per-task CPU need (a static task holds ``need``).
        model: Ideal (mean) or worst case (min).
    """
    if cpu.size == 0:
        return 0.0
    served = np.minimum(1.0, cpu / need)
    return float(served.min() if model is RuntimeModel.WORST else served.mean())


def runtime_increase(slots: list[tuple[float, float]]) -> float:
    """Time above the static duration of a run made of ``(static_seconds, rate)`` slots.

    Example:
        >>> runtime_increase([(100.0, 1.0), (50.0, 0.5)])
        50.0
    """
    return sum(work / rate - work for work, rate in slots)


def requested_time(job: Job) -> float:
    """The user's requested time, or the true work when the workload gives none (>= 1 s)."""
    wt = job.spec.walltime
    return max(wt if wt is not None else job.spec.work, 1.0)


def predicted_end(sim: Simulator, job: Job, model: RuntimeModel) -> float:
    """When a running job is predicted to end at its current shares under ``model``.

    The work still to do is the requested time minus the work done; a job past its estimate
    is predicted to end now (the usual backfilling convention).
    """
    done = job.spec.work - sim.remaining_work(job)
    left = requested_time(job) - done
    if left <= 0:
        return sim.now
    rate = model_rate(job.cpu, job.spec.cpu_need, model)
    return sim.now + left / rate if rate > 0 else float("inf")


def predicted_slowdown(job: Job, end: float) -> float:
    """Slowdown estimate ``(end - submit) / requested time`` (Equation 4 with ``end`` known)."""
    return (end - job.spec.submit) / requested_time(job)
