"""Which running jobs may lend CPU or take idle CPU back (the ``lend`` and ``reclaim`` blocks)."""

from __future__ import annotations

import numpy as np

from hpcgym.envs.ledger import JobLedger
from hpcgym.sim.job import JobState
from hpcgym.sim.planning import reclaimed_shares

_RUNNING = JobState.RUNNING
_MALLEABLE = 2


def share_flags(ledger: JobLedger, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per running-window row: whether it may ``lend`` and whether it may ``reclaim``.

    Lend: a running (not reconfiguring) malleable job whose every task holds its full CPU need.
    Reclaim: a running job some of whose tasks would gain idle CPU of their nodes
    (:func:`~hpcgym.sim.planning.reclaimed_shares`).
    """
    lend = np.zeros(len(rows), dtype=bool)
    reclaim = np.zeros(len(rows), dtype=bool)
    jobs, kinds, needs = ledger.jobs, ledger.kind_list, ledger.cpu_need_list
    sim = ledger.sim
    for i, r in enumerate(rows):
        job = jobs[r]
        if job.state is not _RUNNING:
            continue
        cpu = job.cpu
        full = bool((cpu == needs[r]).all())
        lend[i] = kinds[r] == _MALLEABLE and full
        reclaim[i] = not full and reclaimed_shares(sim, job) is not None
    return lend, reclaim
