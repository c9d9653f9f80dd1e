"""Summary statistics of a workload: size, span, offered load, size and run-time distributions."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from hpcgym.sim.spec import JobKind
from hpcgym.workloads.workload import Workload


def node_seconds(w: Workload) -> np.ndarray:
    """CPU demand of each job in node-seconds: ``work * nodes * cpu_need`` (evolving: per step)."""
    out = np.empty(len(w))
    for i, j in enumerate(w.jobs):
        if j.kind is JobKind.EVOLVING:
            out[i] = sum(s.duration * s.nodes for s in j.evolution) * j.cpu_need
        else:
            out[i] = j.work * j.nodes * j.cpu_need
    return out


def arrival_span(w: Workload) -> float:
    """Seconds from the first to the last submission."""
    if not len(w):
        return 0.0
    return w.jobs[-1].submit - w.jobs[0].submit


def offered_load(w: Workload) -> float:
    """Demand over capacity during the arrival span: ``sum(node-seconds) / (nodes * span)``.

    This is the load that inter-arrival scaling controls (the DFRS paper's "load"). It is
    ``inf`` when every job arrives at once.
    """
    span = arrival_span(w)
    demand = float(node_seconds(w).sum())
    if span <= 0:
        return float("inf") if demand > 0 else 0.0
    return demand / (w.platform.total_nodes * span)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Five-number summary plus mean."""

    mean: float
    min: float
    p25: float
    median: float
    p75: float
    max: float

    @classmethod
    def of(cls, values: np.ndarray) -> Distribution:
        """Summarize ``values`` (all zeros when empty)."""
        if len(values) == 0:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        q = np.percentile(values, [0, 25, 50, 75, 100])
        return cls(float(np.mean(values)), *(float(x) for x in q))


@dataclass(frozen=True, slots=True)
class WorkloadStats:
    """What :func:`describe` reports."""

    name: str
    jobs: int
    nodes: int
    span: float
    offered_load: float
    size: Distribution
    runtime: Distribution
    kinds: tuple[tuple[str, int], ...]
    skipped: int


def describe(w: Workload) -> WorkloadStats:
    """Summary statistics of a workload."""
    sizes = np.array([j.nodes for j in w.jobs], dtype=np.float64)
    runs = np.array([j.work for j in w.jobs], dtype=np.float64)
    kinds = Counter(j.kind.value for j in w.jobs)
    return WorkloadStats(
        name=w.name,
        jobs=len(w),
        nodes=w.platform.total_nodes,
        span=arrival_span(w),
        offered_load=offered_load(w),
        size=Distribution.of(sizes),
        runtime=Distribution.of(runs),
        kinds=tuple(sorted(kinds.items())),
        skipped=sum(c for _, c in w.skipped),
    )


def _row(label: str, d: Distribution) -> str:
    values = (d.mean, d.min, d.p25, d.median, d.p75, d.max)
    return f"{label:<14}" + "".join(f"{v:>11.1f}" for v in values)


def format_stats(s: WorkloadStats) -> str:
    """A short plain-text table of the statistics."""
    kinds = ", ".join(f"{k} {n}" for k, n in s.kinds) or "none"
    head = "".join(f"{h:>11}" for h in ("mean", "min", "p25", "median", "p75", "max"))
    return "\n".join(
        [
            f"workload      {s.name}",
            f"jobs          {s.jobs} ({kinds}); {s.skipped} records skipped",
            f"platform      {s.nodes} nodes",
            f"span          {s.span:.0f} s ({s.span / 86400:.2f} days)",
            f"offered load  {s.offered_load:.3f}",
            f"{'':<14}{head}",
            _row("size (nodes)", s.size),
            _row("runtime (s)", s.runtime),
        ]
    )
