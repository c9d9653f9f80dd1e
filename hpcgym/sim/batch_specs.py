"""A batch run straight from the job specs: the C core without a simulator (``simulate()``).

``BaseScheduler.simulate`` of ``make("fcfs")`` or ``make("easy")`` hands the batch core
(``hpcgym.sim.batch``) the jobs and returns the table it builds from the core's output; building
a ``Simulator`` for that (a ``Job`` per spec, its node pool, its views) cost about two thirds of
such a call. ``run_specs`` has the core read the specs' slots itself (``_batchcore.run_specs``:
one pass, job by job, into its arrays; the ids and the demand's sum come back with the run),
apply the rules by which ``run_batch`` takes the core (every job rigid, on whole nodes, without
memory, no walltime it would outlive, one cluster, no tick, unique ids) and run; the same
``SimResult`` is then built bit for bit (``tests/sim/test_batch_specs.py`` compares it with a
simulator's). When a rule fails it returns ``None`` and the caller builds the simulator as
before, which raises its own errors (a duplicate id) and takes the event loop where it must.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

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
"""Descriptors of ``JobSpec``'s slots the core's ``run_specs`` reads, in its order."""
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
    if not specs:
        return None
    args = (policy, platform.largest_cluster, OVERRUN_GRACE, config.kill_on_walltime, JobSpec)
    out = core.run_specs(*args, specs, _COLUMNS, _PLAIN_RIGID)
    if out is False:
        # The engine takes the jobs sorted by submission time (stably): so does the core.
        specs = sorted(specs, key=_submit_of)
        out = core.run_specs(*args, specs, _COLUMNS, _PLAIN_RIGID)
    if out is None:
        return None
    n = len(specs)
    ids = np.frombuffer(out[12], dtype=np.int64, count=n).copy()
    table = batch_columns(out, ids, config.bsld_tau)
    demand_work = out[13]
    if demand_work is None:  # Python 3.12 and later: their sum() of floats compensates
        inputs = np.frombuffer(out[10], dtype=np.float64, count=4 * n)
        sizes = np.frombuffer(out[11], dtype=np.int64, count=n)
        demand_work = sum((inputs[n : 2 * n] * sizes).tolist())
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
        total_demand_work=demand_work,
    )
    return SimResult(table, summary_of(table, totals, config))
