"""The DFRS job priority: flow time over squared virtual time (paper, section 4.1).

Virtual time is the integral of a job's yield since its submission; a job that never received
CPU has virtual time 0 and infinite priority. Ties go to the earlier submission.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from hpcgym.sim import Job, Simulator


def priority(flow_time: float, virtual_time: float) -> float:
    """``flow_time / virtual_time**2``; ``inf`` when the virtual time is 0."""
    if virtual_time <= 0.0:
        return math.inf
    return flow_time / (virtual_time * virtual_time)


def job_priority(sim: Simulator, job: Job, virtual: Callable[[Job], float] | None = None) -> float:
    """The priority of ``job`` at ``sim.now`` (virtual time: ``virtual``, else the engine's)."""
    vt = sim.virtual_time(job) if virtual is None else virtual(job)
    return priority(sim.now - job.spec.submit, vt)


def by_priority(
    sim: Simulator, jobs: Iterable[Job], virtual: Callable[[Job], float] | None = None
) -> list[Job]:
    """``jobs`` from the highest priority to the lowest; ties by submission (earlier first)."""
    keyed = [(-job_priority(sim, j, virtual), j.spec.submit, i, j) for i, j in enumerate(jobs)]
    keyed.sort(key=lambda k: (k[0], k[1], k[2]))
    return [k[3] for k in keyed]
