"""Pictures of an episode: text (``"ansi"``) and a Gantt chart with resize events (``"rgb_array"``).

The Gantt log records, per job, the intervals during which it held a given set of nodes, and the
instants of its starts, resizes, grants, suspensions and resumptions. It is kept only when the
env renders ``"rgb_array"``, so that plain training pays nothing for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpcgym.sim.engine import EngineCore
from hpcgym.sim.job import Job


@dataclass
class GanttLog:
    """Node-holding intervals and events of every job of an episode."""

    segments: list[tuple[int, float, float, np.ndarray]] = field(default_factory=list)
    """``(job id, start, end, nodes)`` of every closed interval."""
    events: list[tuple[int, float, str, int]] = field(default_factory=list)
    """``(job id, time, what, lowest node)`` of starts, resizes, grants, suspends, resumes."""
    open: dict[int, tuple[float, np.ndarray]] = field(default_factory=dict)

    def touch(self, job: Job, now: float, what: str) -> None:
        """Record ``job``'s allocation as of ``now`` (and the event ``what``, if any)."""
        jid = job.spec.id
        nodes = np.sort(job.nodes)
        prev = self.open.get(jid)
        before = int(prev[1][0]) if prev is not None and prev[1].size else -1
        if prev is not None and not np.array_equal(prev[1], nodes):
            if now > prev[0]:
                self.segments.append((jid, prev[0], now, prev[1]))
            del self.open[jid]
            prev = None
        if prev is None and nodes.size:
            self.open[jid] = (now, nodes)
        if what:
            low = int(nodes[0]) if nodes.size else before
            self.events.append((jid, now, what, low))

    def closed(self, now: float) -> list[tuple[int, float, float, np.ndarray]]:
        """Every interval, the open ones ending at ``now``."""
        tail = [(j, t0, now, nodes) for j, (t0, nodes) in self.open.items() if now > t0]
        return self.segments + tail


def runs(nodes: np.ndarray) -> list[tuple[int, int]]:
    """Sorted node ids as ``(first, count)`` runs of consecutive ids."""
    if not nodes.size:
        return []
    breaks = np.flatnonzero(np.diff(nodes) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [nodes.size]))
    return [(int(nodes[s]), int(e - s)) for s, e in zip(starts, ends, strict=False)]


def render_ansi(sim: EngineCore, queue_ids: list[int], labels_per_row: int = 64) -> str:
    """The queue window and the nodes as text: one character per node (``.`` idle)."""
    lines = [
        f"t={sim.now:.0f}s  queued={len(sim.queue)} running={len(sim.running)} "
        f"suspended={len(sim.suspended)} idle={sim.free_nodes()}/{sim.platform.total_nodes}"
    ]
    symbols = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    cells = np.full(sim.platform.total_nodes, ".", dtype="<U1")
    for i, job in enumerate(sim.running.values()):
        cells[job.nodes] = symbols[i % len(symbols)]
    shared = (sim.node_cpu_used > 0) & (sim.node_cpu_used < 1.0 - 1e-9)
    cells[shared & (cells == ".")] = "+"
    for offset, cluster in zip(sim.platform.offsets, sim.platform.clusters, strict=False):
        row = "".join(cells[offset : offset + cluster.nodes])
        for k in range(0, len(row), labels_per_row):
            lines.append(f"{cluster.name:>8} |{row[k : k + labels_per_row]}|")
    for slot, jid in enumerate(queue_ids):
        job = sim.jobs[jid]
        spec = job.spec
        lines.append(
            f"  q{slot:<3} job {jid:<6} {spec.kind.value:<9} size {spec.nodes} "
            f"[{spec.min_nodes},{spec.max_nodes}] wait {sim.now - spec.submit:.0f}s"
        )
    return "\n".join(lines) + "\n"


def render_gantt(sim: EngineCore, log: GanttLog, width: int = 800, height: int = 450) -> np.ndarray:
    """A Gantt chart (time x nodes) with event markers, as an ``(H, W, 3)`` uint8 array."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width / 100, height / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    cmap = matplotlib.colormaps["tab20"]
    for jid, t0, t1, nodes in log.closed(sim.now):
        color = cmap(jid % 20)
        bars = [(first - 0.5, count) for first, count in runs(nodes)]
        for first, count in bars:
            ax.broken_barh([(t0, t1 - t0)], (first, count), facecolors=color, linewidth=0)
    markers = {
        "shrink": ("v", "red"),
        "expand": ("^", "green"),
        "grant": ("^", "blue"),
        "suspend": ("x", "black"),
        "resume": ("o", "black"),
    }
    for what, (marker, mcolor) in markers.items():
        pts = [(t, low) for _, t, w, low in log.events if w == what and low >= 0]
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.scatter(xs, ys, marker=marker, c=mcolor, s=18, label=what, zorder=3)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("node")
    ax.set_ylim(-0.5, sim.platform.total_nodes - 0.5)
    if log.events:
        handles, _labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
