"""A batch run straight from the job specs: the C core without a simulator (``simulate()``).

``BaseScheduler.simulate`` of ``make("fcfs")`` or ``make("easy")`` hands the batch core
(``hpcgym.sim.batch``) four columns of the jobs and returns the table it builds from the core's
output; building a ``Simulator`` for that (a ``Job`` per spec, its node pool, its views) cost
about two thirds of such a call. ``run_specs`` reads the specs' fields column by column in C
instead, applies the rules by which ``run_batch`` takes the core (every job rigid, on whole
nodes, without memory, no walltime it would outlive, one cluster, no tick, unique ids), runs the
core and builds the same ``SimResult`` bit for bit (``tests/sim/test_batch_specs.py`` compares it
with a simulator's). When a rule fails it returns ``None`` and the caller builds the simulator as
before, which raises its own errors (a duplicate id) and takes the event loop where it must.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcgym.sim.batch import batch_core, batch_policy
from hpcgym.sim.config import SimConfig
from hpcgym.sim.metrics import EpisodeTotals, SimResult, batch_columns, summary_of
from hpcgym.sim.planning import OVERRUN_GRACE
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobKind, JobSpec, SizeRule

_COLUMNS = tuple(
    getattr(JobSpec, f) for f in ("id", "submit", "work", "nodes", "min_nodes", "walltime")
)
"""Descriptors of ``JobSpec``'s slots, read with the core's ``get_columns``."""
_PLAIN_RIGID = tuple(
    (getattr(JobSpec, name), value, identity)
    for name, value, identity in (
        ("kind", JobKind.RIGID, True),
        ("size_rule", SizeRule.ANY, True),
        ("cpu_need", 1.0, False),
        ("mem", 0.0, False),
    )
)
"""What every job must be for the core, as the engine tests it (``is`` for the enums)."""
_submit_of = operator.attrgetter("submit")


def run_specs(
    platform: Platform, jobs: Sequence[JobSpec], config: SimConfig, scheduler: object
) -> SimResult | None:
    """``scheduler``'s whole run of ``jobs`` in the batch core, or ``None`` (it does not qualify).

    The rules are the module docstring's; the result is ``Simulator(...)``'s ``result()`` after
    ``scheduler.run``, bit for bit.
    """
    policy = batch_policy(scheduler)
    core = batch_core()
    if policy < 0 or core is None or config.tick is not None or len(platform.clusters) != 1:
        return None
    specs = jobs if type(jobs) is list else list(jobs)
    columns = _columns(core, specs)
    if columns is None:
        return None
    ids = np.array(columns[0], dtype=np.int64)
    try:
        out = _run(core, policy, platform, config, columns, ids)
    except _OutOfOrder:
        # The engine takes the jobs sorted by submission time (stably): so does the core.
        specs = sorted(specs, key=_submit_of)
        columns = _columns(core, specs)
        assert columns is not None
        ids = np.array(columns[0], dtype=np.int64)
        out = _run(core, policy, platform, config, columns, ids)
    if out is None:
        return None
    _, _, work, nodes, _, _ = columns
    n = len(specs)
    table = batch_columns(out, ids, config.bsld_tau)
    alloc, demand = float(out[3]), float(out[4])
    totals = EpisodeTotals(
        jobs=n,
        completed=int(out[6]),
        killed=int(out[7]),
        rejected=int(out[8]),
        capacity=float(platform.total_nodes),
        alloc_area=alloc,
        useful_area=alloc,
        underutilization=demand - alloc,
        # The engine's ``work * nodes * cpu_need`` summed in the same order (cpu_need is 1.0).
        total_demand_work=sum(map(operator.mul, work, nodes)),
    )
    return SimResult(table, summary_of(table, totals, config))


def _columns(core: Any, specs: list[JobSpec]) -> tuple[list[Any], ...] | None:
    """``id, submit, work, nodes, min_nodes, walltime`` of ``specs`` as lists, or ``None``.

    ``None`` when there is no spec or one is not a plain rigid ``JobSpec`` (``_PLAIN_RIGID``).
    """
    if not specs:
        return None
    columns: tuple[list[Any], ...] | None = core.get_columns(JobSpec, specs, _COLUMNS, _PLAIN_RIGID)
    return columns


class _OutOfOrder(Exception):
    """The jobs do not come in submission order."""


def _run(
    core: Any,
    policy: int,
    platform: Platform,
    config: SimConfig,
    columns: tuple[list[Any], ...],
    ids: np.ndarray,
) -> tuple[Any, ...] | None:
    """The core's run of the jobs' ``columns``, or ``None`` (it does not qualify).

    ``None`` when an id appears twice or a job would outlive its estimate (walltime kills off).

    Raises:
        _OutOfOrder: The jobs do not come in submission order (the core checks it).
    """
    _, submit, work, nodes, min_nodes, walltime = columns
    kill = config.kill_on_walltime
    if min_nodes != nodes or not _unique(ids):
        return None
    if not kill and any(w is not None and r > w for r, w in zip(work, walltime, strict=True)):
        return None  # EASY's general path
    try:
        out: tuple[Any, ...] = core.run(
            policy, platform.largest_cluster, OVERRUN_GRACE, kill, submit, work, walltime, nodes
        )
    except ValueError as e:
        if "submission order" in str(e):
            raise _OutOfOrder from e
        raise
    return out


def _unique(ids: np.ndarray) -> bool:
    """Whether no id appears twice (at once when they increase or decrease throughout)."""
    step = np.diff(ids)
    if (step > 0).all() or (step < 0).all():
        return True
    return bool(np.unique(ids).size == ids.size)
