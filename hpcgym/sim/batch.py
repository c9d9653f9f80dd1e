"""Whole FCFS and EASY runs of rigid jobs in one call to a C core, with the event loop's results.

A batch run (``Simulator.run``, ``BaseScheduler.run`` or ``simulate``) of ``make("fcfs")`` or
``make("easy")`` on a fresh simulator whose jobs are all rigid, whole-node jobs on one cluster
needs no decision point: nothing outside the scheduler looks at the state until the end. Such a
run goes to ``hpcgym.sim._batchcore`` (C, built with the package), which plays the same rules
(``_batchcore.c`` lists them) with arrays instead of job objects. The jobs, counters and areas
are then written back as the event loop leaves them, so ``sim.jobs``, ``sim.counts`` and
``sim.result()`` are the same, bit for bit (``tests/sim/test_batch.py`` compares every field).

Anything else takes the event loop: another scheduler (a subclass of FCFS or EASY included:
only a class that declares ``batch_policy`` itself qualifies), a simulator already advanced, a
tick, a job that is not rigid, shares a node's CPU or memory, or would outlive its estimate
(no walltime kill and a walltime below its run time). So does every run when the core is not
built (a pure-Python install) or ``HPCGYM_BATCH_CORE=0`` is set, e.g. to time the event loop.
Stepping the simulator by hand (``while sim.advance(): ...``) never uses the core.

After a batch run, ``sim.happened`` is empty (the event loop would hold the last instant's
events) and the scheduler object is as ``reset()`` leaves it.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from hpcgym.sim.engine import _EMPTY_FLOAT, _EMPTY_INT, EngineCore
from hpcgym.sim.job import JobState
from hpcgym.sim.metrics import SimResult, batch_result
from hpcgym.sim.planning import OVERRUN_GRACE

_COMPLETED = JobState.COMPLETED
_KILLED = JobState.KILLED
_REJECTED = JobState.REJECTED

_NO_WALL: object = -1.0
"""The core's walltime of a job without one."""

FCFS = 0
"""``batch_policy`` of first come, first served."""
EASY = 1
"""``batch_policy`` of EASY backfilling."""


def _load_core() -> Any:
    try:
        from hpcgym.sim import _batchcore
    except ImportError:  # a pure-Python install: the event loop runs everything
        return None
    return _batchcore


_CORE = _load_core()


def available() -> bool:
    """Whether the C batch core is built and not switched off (``HPCGYM_BATCH_CORE=0``)."""
    return _CORE is not None and os.environ.get("HPCGYM_BATCH_CORE", "1") != "0"


def batch_core() -> Any:
    """The C batch core's module when ``available()``, else ``None``."""
    return _CORE if available() else None


def batch_policy(scheduler: object) -> int:
    """The core's policy for ``scheduler``: ``FCFS``, ``EASY`` or -1 (none).

    Only a class that declares ``batch_policy`` in its own body qualifies, so a subclass that
    changes what ``schedule`` does never inherits the core.
    """
    value = type(scheduler).__dict__.get("batch_policy", -1)
    return value if value in (FCFS, EASY) else -1


def _fresh(sim: EngineCore) -> bool:
    return (
        sim._next_sub == 0
        and sim._n_ended == 0
        and sim._commands == 0
        and not sim._heap
        and not sim._wakeups
        and sim._plain_rigid
        and sim.config.tick is None
        and len(sim.platform.clusters) == 1
        and len(sim._order) > 0
    )


def run_batch(sim: EngineCore, scheduler: object) -> SimResult | None:
    """Run ``sim`` to its end with ``scheduler`` in the core, or return ``None`` untouched.

    Returns:
        The run's result, as ``sim.result()`` gives it; ``None`` when the run does not qualify
        (see the module docstring), in which case nothing was changed.
    """
    policy = batch_policy(scheduler)
    if policy < 0 or not available() or not _fresh(sim):
        return None
    order = sim._order
    largest = sim._largest
    kill = sim.config.kill_on_walltime
    n = len(order)
    work: list[object] = []
    wall: list[object] = []
    size: list[int] = []
    no_wall = _NO_WALL
    for job in order:
        spec: Any = job.spec  # (its fields are moved as objects, not unboxed and boxed again)
        nodes: int = spec.nodes
        if job._fits != (nodes <= largest):
            return None
        w: object = job._walltime
        if w is None:
            wall.append(no_wall)
        else:
            if not kill and job._remaining > spec.walltime:
                return None  # it would outlive its estimate: EASY's general path
            wall.append(w)
        work.append(spec.work)
        size.append(nodes)
    out = _CORE.run(policy, largest, OVERRUN_GRACE, kill, list(sim._sub_times), work, wall, size)
    start = np.frombuffer(out[0], dtype=np.float64)
    end = np.frombuffer(out[1], dtype=np.float64)
    code = np.frombuffer(out[2], dtype=np.int8)
    _write_back(sim, start.tolist(), end.tolist(), code.tolist(), kill)
    sim.alloc_area = sim.useful_area = float(out[3])
    sim.demand_area = float(out[4])
    sim._commands = int(out[5])
    sim._n_completed = int(out[6])
    sim._n_killed = int(out[7])
    sim._n_rejected = int(out[8])
    sim._now = float(out[9])
    sim._n_ended = n
    sim._next_sub = n
    sim._s_next = math.inf
    sim._head = n
    sim.happened = []
    sim._alloc_total = sim._useful_total = sim._demand_total = 0.0
    sim._batch_out = out
    return batch_result(sim)


def _write_back(
    sim: EngineCore, start: list[float], end: list[float], code: list[int], kill: bool
) -> None:
    """Leave every job as the event loop's start and end (``_end``, ``_settle``) leave it."""
    order = sim._order
    for k in range(len(order)):
        job = order[k]
        e = end[k]
        c = code[k]
        if c == 2:
            job._state = _REJECTED
            job._end = job._t_last = e
            job._version = 1
            job._wt_version = 1
            continue
        s = start[k]
        dt = e - s
        job._start = s
        job._end = job._t_last = e
        job._held = 0.0 + dt
        job._virtual = 0.0 + 1.0 * dt
        job._version = 2
        job._wt_version = 1 if job._walltime is None else 2
        job._share = 1.0
        job._nodes = _EMPTY_INT
        job._cpu = _EMPTY_FLOAT
        job.max_size = job.spec.nodes
        if c == 0:
            job._state = _COMPLETED
            job._remaining = 0.0
            w = job._walltime
            if kill and w is not None:
                left = w - 0.0
                job._deadline = s + (left if left > 0 else 0.0)
        else:
            job._state = _KILLED
            left = job._remaining - 1.0 * dt
            job._remaining = left if left > 0 else 0.0
            job._deadline = math.inf
