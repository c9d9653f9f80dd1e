"""Engine settings for a DFRS run: the rescheduling penalty on the jobs, the period on the engine.

The paper's penalty (300 s of no progress per preemption or migration) is the jobs'
reconfiguration model ``FixedCost(300)``; a workload whose jobs carry another model gets copies
with it. DFRS jobs run slower than alone whenever they share CPU, so walltime kills are off.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from hpcgym.baselines.dfrs.config import PENALTY, DFRSConfig, parse_name
from hpcgym.sim import FixedCost, JobSpec, SimConfig


def with_penalty(jobs: Iterable[JobSpec], penalty: float = PENALTY) -> list[JobSpec]:
    """Copies of ``jobs`` whose reconfiguration model is ``FixedCost(penalty)``."""
    cost = FixedCost(penalty)
    return [j if j.reconfig == cost else dataclasses.replace(j, reconfig=cost) for j in jobs]


def dfrs_setup(
    jobs: Iterable[JobSpec],
    algorithm: DFRSConfig | str,
    penalty: float = PENALTY,
) -> tuple[list[JobSpec], SimConfig]:
    """Jobs with the penalty and the ``SimConfig`` (tick = period when periodic) for a run."""
    cfg = parse_name(algorithm) if isinstance(algorithm, str) else algorithm
    tick = cfg.period if cfg.periodic != "none" else None
    return with_penalty(jobs, penalty), SimConfig(kill_on_walltime=False, tick=tick)
