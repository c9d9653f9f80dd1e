"""Summary statistics of a workload: size, span, offered load, size and run-time distributions."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from hpcgym.sim.spec import JobKind
from hpcgym.workloads.convert import check_allocation, record_procs, unit_sizes
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
class UnitLoads:
    """A trace workload's offered load in each unit of allocation.

    Attributes:
        allocation: The unit in use, ``"processor"`` or ``"node"``.
        procs_per_node: Processors per node of the machine.
        processors: The machine's processors.
        nodes: The machine's whole nodes.
        processor: Offered load with jobs allocated in processors.
        node: Offered load with jobs rounded up to whole nodes.
        inflation: Core-seconds of node allocation over those of processors (>= 1).
    """

    allocation: str
    procs_per_node: int
    processors: int
    nodes: int
    processor: float
    node: float
    inflation: float


def _load(demand: float, units: int, span: float) -> float:
    if span <= 0:
        return float("inf") if demand > 0 else 0.0
    return demand / (units * span)


def unit_loads(w: Workload) -> UnitLoads | None:
    """The offered load of a workload read from SWF in processors and in whole nodes.

    ``None`` when the workload has no SWF records, or its sizes are no longer the records'
    (after a transform that changes sizes, such as the DFRS conversion or ``rescale_nodes``).
    The load in the unit in use equals :func:`offered_load`.
    """
    step = next((s for s in w.provenance if s.op == "from_swf"), None)
    if step is None or w.rows is None or len(w.platform.clusters) != 1 or not len(w):
        return None
    params = dict(step.params)
    allocation = check_allocation(params.get("allocation", "node"))
    ppn = params.get("procs_per_node")
    if not isinstance(ppn, int) or ppn < 1:
        return None
    procs = record_procs(w.rows)
    by_proc = unit_sizes(procs, "processor", ppn)
    by_node = unit_sizes(procs, "node", ppn)
    in_use = by_proc if allocation == "processor" else by_node
    sizes = np.array([j.nodes for j in w.jobs], dtype=np.int64)
    if not np.array_equal(sizes, in_use) or any(j.kind is JobKind.EVOLVING for j in w.jobs):
        return None
    units = w.platform.total_nodes
    processors = units if allocation == "processor" else units * ppn
    nodes = max(processors // ppn, 1) if allocation == "processor" else units
    seconds = np.array([j.work * j.cpu_need for j in w.jobs])
    span = arrival_span(w)
    proc_demand = float((seconds * by_proc).sum())
    node_demand = float((seconds * by_node).sum())
    return UnitLoads(
        allocation=allocation,
        procs_per_node=ppn,
        processors=processors,
        nodes=nodes,
        processor=_load(proc_demand, processors, span),
        node=_load(node_demand, nodes, span),
        inflation=node_demand * ppn / proc_demand if proc_demand > 0 else 1.0,
    )


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
    units: UnitLoads | None = None


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
        units=unit_loads(w),
    )


def _row(label: str, d: Distribution) -> str:
    values = (d.mean, d.min, d.p25, d.median, d.p75, d.max)
    return f"{label:<14}" + "".join(f"{v:>11.1f}" for v in values)


def _load_text(value: float) -> str:
    """A load to three decimals, or ``undefined`` when no span divides it (``inf``)."""
    return f"{value:.3f}" if math.isfinite(value) else "undefined"


def format_units(u: UnitLoads) -> str:
    """The unit in use and the offered load under both units, in one line."""
    node = f"whole {u.procs_per_node}-processor nodes"
    if u.procs_per_node == 1:
        load = _load_text(u.processor)
        return f"{u.allocation} (nodes have one processor: load {load} in either unit)"
    if u.allocation == "processor":
        return (
            f"processor (load {_load_text(u.processor)}); {node} would give load "
            f"{_load_text(u.node)} "
            f"on {u.nodes} nodes (x{u.inflation:.2f} core-seconds)"
        )
    return (
        f"node: {node} (load {_load_text(u.node)}, x{u.inflation:.2f} core-seconds); processors "
        f"would give load {_load_text(u.processor)} on {u.processors} units"
    )


def _offered(s: WorkloadStats) -> str:
    """The offered load, or why it is undefined (no job, or every job at the same instant)."""
    if not s.jobs:
        return "undefined (no job)"
    if not math.isfinite(s.offered_load):
        return "undefined (the trace spans 0 s: every job arrives at once)"
    return f"{s.offered_load:.3f}"


def format_stats(s: WorkloadStats, declared: str | None = None) -> str:
    """A short plain-text table of the statistics.

    ``declared`` is the unit a named set declares, printed when the workload has no SWF
    records to compute the load in both units from.
    """
    kinds = ", ".join(f"{k} {n}" for k, n in s.kinds) or "none"
    head = "".join(f"{h:>11}" for h in ("mean", "min", "p25", "median", "p75", "max"))
    lines = [
        f"workload      {s.name}",
        f"jobs          {s.jobs} ({kinds}); {s.skipped} records skipped",
        f"platform      {s.nodes} nodes",
        f"span          {s.span:.0f} s ({s.span / 86400:.2f} days)",
        f"offered load  {_offered(s)}",
    ]
    if s.units is not None:
        if s.units.allocation == "processor":
            lines[2] = f"platform      {s.nodes} units of one processor"
        else:
            lines[2] = f"platform      {s.nodes} nodes of {s.units.procs_per_node} processors"
        lines.append(f"unit          {format_units(s.units)}")
    elif declared is not None:
        lines.append(f"unit          {declared} (declared by the set)")
    return "\n".join(
        [*lines, f"{'':<14}{head}", _row("size (units)", s.size), _row("runtime (s)", s.runtime)]
    )
