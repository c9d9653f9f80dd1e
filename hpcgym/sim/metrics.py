"""Every metric of hpcgym, in one place: per job, and per episode.

Per job (one row each, every submitted job present): ``wait`` (first start - submit),
``response`` (end - submit), ``run`` (end - first start), ``slowdown`` (response / max(run, 1 s)),
``bsld`` (bounded slowdown, ``max(1, response / max(run, tau))``), ``stretch`` (response / the
job's time alone at its requested size, ``work``), ``bounded_stretch``
(``max(response, tau) / max(work, tau)``), ``waste`` (CPU-seconds held without progress),
the reconfiguration, preemption and migration counts, and ``lost_work`` (a killed job's
progress in CPU-seconds at its requested sizes, see :func:`progress_work`; 0 for other jobs).
Rejected jobs have NaN times (start, end and all durations); their rejection time stays on
``Job.end_time``.

Per episode: counts per outcome, mean and max of the per-job metrics over started jobs,
``makespan`` (last end - first submission), ``utilization`` (allocated CPU-seconds over capacity
x makespan), ``effective_utilization`` (CPU-seconds of progress over the same),
``normalized_underutilization`` (DFRS: the integral of ``min(capacity, demand) - useful`` over
the workload's CPU-seconds of work), ``lost_work`` (CPU-seconds of progress lost to walltime
kills) and ``normalized_lost_work`` (the same over the workload's CPU-seconds of work) and
``energy`` (joules, node power linear in CPU load). An episode metric that overflows float64
raises ``SpecError`` (never a silent ``inf``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.errors import SpecError
from hpcgym.sim.config import SimConfig
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.spec import JobKind

if TYPE_CHECKING:
    import pandas as pd

    from hpcgym.sim.engine import EngineCore

SLOWDOWN_FLOOR = 1.0
"""Seconds: plain slowdown divides by ``max(run, 1 s)`` so zero-length jobs stay finite."""

_MEANS = ("wait", "response", "run", "slowdown", "bsld", "stretch", "bounded_stretch", "waste")
_SUMS = ("reconfigurations", "preemptions", "migrations")
_MEAN_KEYS = tuple((name, f"mean_{name}", f"max_{name}") for name in _MEANS)
_add, _maximum, _minimum = np.add, np.maximum, np.minimum
SUMMARY_KEYS: tuple[str, ...] = (
    "jobs",
    "completed",
    "killed",
    "rejected",
    *(f"{stat}_{name}" for name in _MEANS for stat in ("mean", "max")),
    *_SUMS,
    "makespan",
    "utilization",
    "effective_utilization",
    "normalized_underutilization",
    "lost_work",
    "normalized_lost_work",
    "energy",
)
"""The keys of an episode summary (:func:`summarize`), in its order."""
_KILLED = JobState.KILLED
_EVOLVING = JobKind.EVOLVING


@dataclass(frozen=True)
class SimResult:
    """The outcome of an episode: the episode summary and one row per job.

    ``columns`` holds the per-job numpy arrays; ``jobs`` is the same as a pandas DataFrame,
    built on first use (the summary needs no pandas, which keeps episode ends cheap).
    """

    columns: dict[str, np.ndarray] = field(repr=False)
    summary: dict[str, float]

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """One row per job, in submission order."""
        import pandas as pd

        return pd.DataFrame(self.columns)


def bounded_slowdown(wait: np.ndarray, run: np.ndarray, tau: float = 10.0) -> np.ndarray:
    """``max(1, (wait + run) / max(run, tau))``, elementwise."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, tau))


def progress_work(job: Job) -> float:
    """CPU-seconds of progress ``job`` has made, as last settled, at its requested sizes.

    Non-evolving: ``(work - remaining) * nodes * cpu_need``; evolving: the finished steps'
    ``duration * nodes`` plus the current step's done part, times ``cpu_need``. The scale is
    that of ``EngineCore.total_demand_work``, so a job that completes has made exactly its share
    of it. A killed job is settled at its kill, so this is the work its kill lost.
    """
    spec = job.spec
    if spec.kind is _EVOLVING:
        steps = spec.evolution
        k = job.step
        done = sum(s.duration * s.nodes for s in steps[:k])
        done += (steps[k].duration - job.remaining) * steps[k].nodes
    else:
        done = (spec.work - job.remaining) * spec.nodes
    return done * spec.cpu_need


_JOB_FIELDS = (
    "spec",
    "state",
    "start_time",
    "end_time",
    "max_size",
    "waste",
    "reconfigurations",
    "preemptions",
    "migrations",
)
_SPEC_FIELDS = ("id", "kind", "submit", "nodes", "work")


def _read_fields() -> Any:
    """Readers of ``_JOB_FIELDS`` and ``_SPEC_FIELDS`` (``_batchcore.get_columns``), or ``None``.

    ``None`` in a pure-Python install: the columns are then read in comprehensions.
    """
    try:
        from hpcgym.sim import _batchcore
    except ImportError:
        return None
    from hpcgym.sim.spec import JobSpec

    job = tuple(getattr(Job, f) for f in _JOB_FIELDS)
    spec = tuple(getattr(JobSpec, f) for f in _SPEC_FIELDS)
    return lambda jobs: _batchcore.get_columns(
        Job, jobs, job
    ), lambda specs: _batchcore.get_columns(JobSpec, specs, spec)


_FIELD_READERS = _read_fields()


def _fields(jobs: list[Job]) -> tuple[list[Any], ...]:
    """The values of ``_JOB_FIELDS`` then ``_SPEC_FIELDS`` of ``jobs``, a list each.

    Read column by column in C (one call per object type) when every object is exactly a
    ``Job`` with exactly a ``JobSpec``; else attribute by attribute, as the same descriptors give.
    """
    if _FIELD_READERS is not None and jobs:
        read_jobs, read_specs = _FIELD_READERS
        got = read_jobs(jobs)
        if got is not None:
            specs = read_specs(got[0])
            if specs is not None:
                return (*got, *specs)
    columns = tuple([getattr(j, f) for j in jobs] for f in _JOB_FIELDS)
    specs = columns[0]
    return (*columns, *([getattr(sp, f) for sp in specs] for f in _SPEC_FIELDS))


def job_columns(sim: EngineCore) -> dict[str, np.ndarray]:
    """The per-job metrics of ``sim`` as numpy arrays, in submission order."""
    jobs = list(sim.jobs.values())
    (_, state, start, end, held, waste, reconf, preempt, migr, jid, kind, submit, nodes, work) = (
        _fields(jobs)
    )
    return derive_columns(
        {
            "id": np.array(jid, dtype=np.int64),
            # A member's ``_value_`` is a plain attribute; ``value`` is a property (10x slower
            # on Python 3.11) and a member's hash is a Python call.
            "kind": np.array([k._value_ for k in kind], dtype=object),
            "state": np.array([st._value_ for st in state], dtype=object),
            "submit": np.array(submit, dtype=float),
            "start": np.array(start, dtype=float),
            "end": np.array(end, dtype=float),
            "requested_nodes": np.array(nodes, dtype=np.int64),
            "max_nodes_held": np.array(held, dtype=np.int64),
            "work": np.array(work, dtype=float),
            "waste": np.array(waste, dtype=float),
            "reconfigurations": np.array(reconf, dtype=np.int64),
            "preemptions": np.array(preempt, dtype=np.int64),
            "migrations": np.array(migr, dtype=np.int64),
            "lost_work": np.array(
                [
                    progress_work(j) if st is _KILLED else 0.0
                    for j, st in zip(jobs, state, strict=True)
                ],
                dtype=float,
            ),
        },
        sim.config.bsld_tau,
    )


def derive_columns(base: dict[str, np.ndarray], tau: float) -> dict[str, np.ndarray]:
    """The per-job table from the jobs' own columns.

    ``base`` has ``job_columns``'s keys but the durations and ratios, and ``end`` as
    ``Job.end_time`` gives it (a rejection time included).

    The batch core (``hpcgym.sim.batch``) builds those columns from its arrays and calls this,
    so both paths compute every duration and ratio with the same expressions.
    """
    submit, start = base["submit"], base["start"]
    started = ~np.isnan(start)
    every = bool(started.all())
    # A job that never started (rejected) has no times at all, so it cannot stretch makespan.
    end = base["end"].copy() if every else np.where(started, base["end"], np.nan)
    work = base["work"]
    wait = start - submit
    response = end - submit
    run = end - start
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = {
            "slowdown": response / np.maximum(run, SLOWDOWN_FLOOR),
            "bsld": bounded_slowdown(wait, run, tau),
            "stretch": response / work,
            "bounded_stretch": np.maximum(response, tau) / np.maximum(work, tau),
        }
    if not every:
        for col in ratios.values():
            col[~started] = np.nan
    return {
        "id": base["id"],
        "kind": base["kind"],
        "state": base["state"],
        "submit": submit,
        "start": start,
        "end": end,
        "requested_nodes": base["requested_nodes"],
        "max_nodes_held": base["max_nodes_held"],
        "work": work,
        "wait": wait,
        "response": response,
        "run": run,
        **ratios,
        "waste": base["waste"],
        "reconfigurations": base["reconfigurations"],
        "preemptions": base["preemptions"],
        "migrations": base["migrations"],
        "lost_work": base["lost_work"],
    }


@dataclass(frozen=True, slots=True)
class EpisodeTotals:
    """What an episode summary reads beyond the per-job table: counts, capacity and areas."""

    jobs: int
    completed: int
    killed: int
    rejected: int
    capacity: float
    """Nodes of the platform."""
    alloc_area: float
    useful_area: float
    underutilization: float
    total_demand_work: float


def totals_of(sim: EngineCore) -> EpisodeTotals:
    """``sim``'s totals as they stand."""
    counts = sim.counts
    return EpisodeTotals(
        jobs=counts["total"],
        completed=counts["completed"],
        killed=counts["killed"],
        rejected=counts["rejected"],
        capacity=float(sim.platform.total_nodes),
        alloc_area=sim.alloc_area,
        useful_area=sim.useful_area,
        underutilization=sim.underutilization,
        total_demand_work=sim.total_demand_work,
    )


def summarize(sim: EngineCore, columns: dict[str, np.ndarray]) -> dict[str, float]:
    """Episode metrics of ``sim`` (see the module docstring)."""
    return summary_of(columns, totals_of(sim), sim.config)


def summary_of(
    columns: dict[str, np.ndarray], totals: EpisodeTotals, cfg: SimConfig
) -> dict[str, float]:
    """Episode metrics from the per-job table and the episode's totals."""
    out = _counts(totals)
    # The ufuncs' reductions straight, not ``mean``/``max``/``sum`` and their Python wrappers
    # (a few us each, 30 calls an episode): the same pairwise sum, divided by the count as
    # ``mean`` divides it. A mask that keeps every row is not applied (the same values).
    started = ~np.isnan(columns["start"])
    every = bool(started.all())
    for name, mean_key, max_key in _MEAN_KEYS:
        col = columns[name]
        if not every:
            col = col[started]
        finite = np.isfinite(col)
        if not finite.all():
            col = col[finite]
        n = col.size
        out[mean_key] = float(_add.reduce(col)) / n if n else 0.0
        out[max_key] = float(_maximum.reduce(col)) if n else 0.0
    for name in _SUMS:
        out[name] = float(_add.reduce(columns[name]))
    ends = columns["end"]
    submits = columns["submit"]
    first = float(_minimum.reduce(submits)) if submits.size else 0.0
    finite = np.isfinite(ends)
    if ends.size and finite.all():
        last = float(_maximum.reduce(ends))
    else:
        last = float(np.nanmax(ends)) if finite.any() else first
    makespan = last - first
    return _finish(out, makespan, float(_add.reduce(columns["lost_work"])), totals, cfg)


def _counts(totals: EpisodeTotals) -> dict[str, float]:
    """The summary's first entries: jobs per outcome."""
    return {
        "jobs": float(totals.jobs),
        "completed": float(totals.completed),
        "killed": float(totals.killed),
        "rejected": float(totals.rejected),
    }


def _finish(
    out: dict[str, float], makespan: float, lost: float, totals: EpisodeTotals, cfg: SimConfig
) -> dict[str, float]:
    """The summary's entries after the per-job statistics, added to ``out``."""
    # A zero makespan is +0.0: when jobs end at both +0.0 and -0.0, numpy's maximum and the C
    # core's may keep either zero (a hypothesis example: ends 0.0, 0.0, -0.0).
    makespan += 0.0
    area = totals.capacity * makespan
    out["makespan"] = makespan
    out["utilization"] = totals.alloc_area / area if area > 0 else 0.0
    out["effective_utilization"] = totals.useful_area / area if area > 0 else 0.0
    work = totals.total_demand_work
    out["normalized_underutilization"] = totals.underutilization / work if work > 0 else 0.0
    out["lost_work"] = lost
    out["normalized_lost_work"] = lost / work if work > 0 else 0.0
    out["energy"] = cfg.idle_power * area + (cfg.busy_power - cfg.idle_power) * totals.alloc_area
    if any(map(math.isinf, out.values())):
        overflowed = [name for name, value in out.items() if math.isinf(value)]
        raise SpecError(
            f"metrics {overflowed} overflow float64 (inf): the platform size, times and power "
            "model multiply beyond 1.8e308. Use smaller units (fewer, larger nodes; kW for power)."
        )
    return out


_SUMMARY_JOB_FIELDS = (
    "spec",
    "start_time",
    "end_time",
    "waste",
    "reconfigurations",
    "preemptions",
    "migrations",
)
_SUMMARY_SPEC_FIELDS = ("submit", "work")


def _summary_readers() -> Any:
    """``(read jobs, read specs, column_stats)`` of the C core, or ``None`` (pure Python)."""
    try:
        from hpcgym.sim import _batchcore
    except ImportError:
        return None
    from hpcgym.sim.spec import JobSpec

    job = tuple(getattr(Job, f) for f in _SUMMARY_JOB_FIELDS)
    spec = tuple(getattr(JobSpec, f) for f in _SUMMARY_SPEC_FIELDS)
    get = _batchcore.get_columns
    return (
        lambda jobs: get(Job, jobs, job),
        lambda specs: get(JobSpec, specs, spec),
        _batchcore.column_stats,
    )


_SUMMARY_READERS = _summary_readers()


def episode_summary(sim: EngineCore) -> dict[str, float]:
    """``sim.result().summary``, without the per-job table when the C core is there.

    The same floats: the C core's ``column_stats`` computes the per-job statistics with
    ``derive_columns``'s expressions and numpy's pairwise sums (a test compares the two on
    episodes of every kind); the rest is :func:`summary_of`'s own code.
    """
    readers = _SUMMARY_READERS
    if readers is None or sim._batch_out is not None or not sim._order:
        return sim.result().summary
    read_jobs, read_specs, column_stats = readers
    jobs = sim._order
    got = read_jobs(jobs)
    specs = None if got is None else read_specs(got[0])
    if got is None or specs is None:
        return sim.result().summary
    _, start, end, waste, reconf, preempt, migr = got
    submit, work = specs
    stats = column_stats(submit, start, end, work, waste, sim.config.bsld_tau)
    if stats is None:  # a -0.0 among the values: numpy's max decides which zero wins
        return sim.result().summary
    totals = totals_of(sim)
    out = _counts(totals)
    for i, name in enumerate(_MEANS):
        out[f"mean_{name}"] = stats[2 * i]
        out[f"max_{name}"] = stats[2 * i + 1]
    for name, col in zip(_SUMS, (reconf, preempt, migr), strict=True):
        out[name] = float(sum(col))
    first, last = stats[-2], stats[-1]
    if math.isnan(last):
        last = first
    lost = 0.0
    if totals.killed:
        lost = float(
            np.array([progress_work(j) if j.state is _KILLED else 0.0 for j in jobs]).sum()
        )
    return _finish(out, last - first, lost, totals, sim.config)


def collect(sim: EngineCore) -> SimResult:
    """The ``SimResult`` of ``sim`` as it stands (normally after the last event)."""
    columns = job_columns(sim)
    return SimResult(columns, summarize(sim, columns))


_BATCH_STATES = np.array(
    [JobState.COMPLETED.value, JobState.KILLED.value, JobState.REJECTED.value], dtype=object
)
"""State names by the batch core's codes: 0 completed, 1 killed, 2 rejected."""


def batch_result(sim: EngineCore) -> SimResult:
    """``sim.result()`` after a batch run (``hpcgym.sim.batch``): the table from the core's arrays.

    The same columns as ``metrics.job_columns`` reads from the jobs, with the same expressions
    (``derive_columns``); built anew at each call, from the core's immutable output.
    """
    out = sim._batch_out
    assert out is not None
    ids = np.fromiter(sim._jobs, dtype=np.int64, count=len(sim._order))
    columns = batch_columns(out, ids, sim.config.bsld_tau)
    return SimResult(columns, summarize(sim, columns))


def batch_columns(out: tuple[Any, ...], ids: np.ndarray, tau: float) -> dict[str, np.ndarray]:
    """The per-job table of a batch core's run (``_batchcore.run``'s ``out``) of jobs ``ids``."""
    n = len(ids)
    start = np.frombuffer(out[0], dtype=np.float64, count=n)
    end = np.frombuffer(out[1], dtype=np.float64, count=n)
    code = np.frombuffer(out[2], dtype=np.int8, count=n)
    inputs = np.frombuffer(out[10], dtype=np.float64, count=4 * n).reshape(4, n)
    work = inputs[1]
    size = np.frombuffer(out[11], dtype=np.int64, count=n)
    if out[7]:  # killed jobs
        # A killed job's progress, as the engine settles it at its kill (``progress_work``).
        left = work - 1.0 * (end - start)
        remaining = np.where(left > 0, left, 0.0)
        lost_work = np.where(code == 1, (work - remaining) * size * 1.0, 0.0)
    else:
        lost_work = np.zeros(n)
    kind = np.empty(n, dtype=object)
    kind[:] = JobKind.RIGID.value
    return derive_columns(
        {
            "id": ids,
            "kind": kind,
            "state": _BATCH_STATES.take(code),
            "submit": inputs[0].copy(),
            "start": start.copy(),
            "end": end,
            "requested_nodes": size.copy(),
            "max_nodes_held": np.where(code != 2, size, 0) if out[8] else size.copy(),
            "work": work.copy(),
            "waste": np.zeros(n),
            "reconfigurations": np.zeros(n, dtype=np.int64),
            "preemptions": np.zeros(n, dtype=np.int64),
            "migrations": np.zeros(n, dtype=np.int64),
            "lost_work": lost_work,
        },
        tau,
    )
