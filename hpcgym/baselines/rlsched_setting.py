"""RLScheduler's setting (Zhang et al., SC'20): its simulator rule and its env arguments.

Shared by the paper check (``hpcgym papers rlscheduler``), the RLScheduler scenarios of
``hpcgym bench`` and the agents trained or searched in that setting.
"""

from __future__ import annotations

from typing import Any

from hpcgym.sim import SimConfig

CONFIG = SimConfig(kill_on_walltime=False)
"""RLScheduler never kills a job that outlives its request."""


def rlsched_kwargs(workload: str, backfill: bool) -> dict[str, Any]:
    """``hpcgym/Rigid-v0``'s arguments for RLScheduler's setting on ``workload``.

    The trace's own machine, 1,024-job sequences, reserve mode (with or without backfilling)
    over 128 queue slots, no walltime kills.
    """
    return {
        "workload": workload,
        "platform": None,
        "n_jobs": 1024,
        "selection": "reserve",
        "reserve_backfill": backfill,
        "queue_slots": 128,
        "kill_on_walltime": False,
    }
