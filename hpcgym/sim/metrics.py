"""Every metric of hpcgym, in one place: per job, and per episode.

Per job (one row each, every submitted job present): ``wait`` (first start - submit),
``response`` (end - submit), ``run`` (end - first start), ``slowdown`` (response / max(run, 1 s)),
``bsld`` (bounded slowdown, ``max(1, response / max(run, tau))``), ``stretch`` (response / the
job's time alone at its requested size, ``work``), ``bounded_stretch``
(``max(response, tau) / max(work, tau)``), ``waste`` (CPU-seconds held without progress),
and the reconfiguration, preemption and migration counts. Rejected jobs have NaN times (start,
end and all durations); their rejection time stays on ``Job.end_time``.

Per episode: counts per outcome, mean and max of the per-job metrics over started jobs,
``makespan`` (last end - first submission), ``utilization`` (allocated CPU-seconds over capacity
x makespan), ``effective_utilization`` (CPU-seconds of progress over the same),
``normalized_underutilization`` (DFRS: the integral of ``min(capacity, demand) - useful`` over
the workload's CPU-seconds of work) and ``energy`` (joules, node power linear in CPU load).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from hpcgym.sim.engine import EngineCore

SLOWDOWN_FLOOR = 1.0
"""Seconds: plain slowdown divides by ``max(run, 1 s)`` so zero-length jobs stay finite."""

_MEANS = ("wait", "response", "run", "slowdown", "bsld", "stretch", "bounded_stretch", "waste")
_SUMS = ("reconfigurations", "preemptions", "migrations")


@dataclass(frozen=True)
class SimResult:
    """The outcome of an episode: one row per job and the episode summary."""

    jobs: pd.DataFrame
    summary: dict[str, float]


def bounded_slowdown(wait: np.ndarray, run: np.ndarray, tau: float = 10.0) -> np.ndarray:
    """``max(1, (wait + run) / max(run, tau))``, elementwise."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, tau))


def job_table(sim: EngineCore) -> pd.DataFrame:
    """One row per job of ``sim``, in submission order."""
    jobs = list(sim.jobs.values())
    tau = sim.config.bsld_tau
    submit = np.array([j.spec.submit for j in jobs])
    start = np.array([j.start_time for j in jobs])
    # A job that never started (rejected) has no times at all, so it cannot stretch makespan.
    end = np.where(np.isnan(start), np.nan, np.array([j.end_time for j in jobs]))
    work = np.array([j.spec.work for j in jobs])
    wait = start - submit
    response = end - submit
    run = end - start
    with np.errstate(invalid="ignore", divide="ignore"):
        table = pd.DataFrame(
            {
                "id": np.array([j.spec.id for j in jobs], dtype=np.int64),
                "kind": [j.spec.kind.value for j in jobs],
                "state": [j.state.value for j in jobs],
                "submit": submit,
                "start": start,
                "end": end,
                "requested_nodes": np.array([j.spec.nodes for j in jobs], dtype=np.int64),
                "max_nodes_held": np.array([j.max_size for j in jobs], dtype=np.int64),
                "work": work,
                "wait": wait,
                "response": response,
                "run": run,
                "slowdown": response / np.maximum(run, SLOWDOWN_FLOOR),
                "bsld": bounded_slowdown(wait, run, tau),
                "stretch": response / work,
                "bounded_stretch": np.maximum(response, tau) / np.maximum(work, tau),
                "waste": np.array([j.waste for j in jobs]),
                "reconfigurations": np.array([j.reconfigurations for j in jobs], dtype=np.int64),
                "preemptions": np.array([j.preemptions for j in jobs], dtype=np.int64),
                "migrations": np.array([j.migrations for j in jobs], dtype=np.int64),
            }
        )
    started = ~np.isnan(start)
    table.loc[~started, ["slowdown", "bsld", "stretch", "bounded_stretch"]] = np.nan
    return table


def summarize(sim: EngineCore, table: pd.DataFrame) -> dict[str, float]:
    """Episode metrics of ``sim`` (see the module docstring)."""
    counts = sim.counts
    out: dict[str, float] = {
        "jobs": float(counts["total"]),
        "completed": float(counts["completed"]),
        "killed": float(counts["killed"]),
        "rejected": float(counts["rejected"]),
    }
    started = table[table["start"].notna()]
    for name in _MEANS:
        col = started[name].to_numpy(dtype=float)
        col = col[np.isfinite(col)]
        out[f"mean_{name}"] = float(col.mean()) if col.size else 0.0
        out[f"max_{name}"] = float(col.max()) if col.size else 0.0
    for name in _SUMS:
        out[name] = float(table[name].sum())
    ends = table["end"].to_numpy(dtype=float)
    first = float(table["submit"].min()) if len(table) else 0.0
    last = float(np.nanmax(ends)) if np.isfinite(ends).any() else first
    makespan = last - first
    capacity = float(sim.platform.total_nodes)
    area = capacity * makespan
    out["makespan"] = makespan
    out["utilization"] = sim.alloc_area / area if area > 0 else 0.0
    out["effective_utilization"] = sim.useful_area / area if area > 0 else 0.0
    work = sim.total_demand_work
    out["normalized_underutilization"] = sim.underutilization / work if work > 0 else 0.0
    cfg = sim.config
    out["energy"] = cfg.idle_power * area + (cfg.busy_power - cfg.idle_power) * sim.alloc_area
    return out


def collect(sim: EngineCore) -> SimResult:
    """The ``SimResult`` of ``sim`` as it stands (normally after the last event)."""
    table = job_table(sim)
    return SimResult(table, summarize(sim, table))
