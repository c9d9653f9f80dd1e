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


ANSI_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""Symbols of running jobs in the text picture, in the order of the running set."""


def render_ansi(sim: EngineCore, queue_ids: list[int], labels_per_row: int = 64) -> str:
    """The state as text: a header, one character per node, the running jobs and the queue.

    Layout::

        t=3600s (1.00 h into the episode)  queued=3 running=2 suspended=0 idle=9/16
        nodes, 64 per row after the cluster's name and the row's first node: '.' idle, ...
              c0     0 |0000111.........|       <- cluster c0, nodes 0 to 15
        running: 0=job 4 (4 nodes)  1=job 7 (3 nodes)
          q0   job 9      rigid     size 4 [4,4] wait 120s    <- queue window slot 0:
                                    requested [min,max] size, wait so far
    """
    origin = min((j.spec.submit for j in sim.jobs.values()), default=0.0)
    lines = [
        f"t={sim.now:.0f}s ({(sim.now - origin) / 3600:.2f} h into the episode)  "
        f"queued={len(sim.queue)} running={len(sim.running)} "
        f"suspended={len(sim.suspended)} idle={sim.free_nodes()}/{sim.platform.total_nodes}",
        f"nodes, {labels_per_row} per row after the cluster's name and the row's first node: "
        "'.' idle, '+' CPU shared, a symbol: the running job listed below",
    ]
    cells = np.full(sim.platform.total_nodes, ".", dtype="<U1")
    legend = []
    for i, job in enumerate(sim.running.values()):
        symbol = ANSI_SYMBOLS[i % len(ANSI_SYMBOLS)]
        cells[job.nodes] = symbol
        legend.append(f"{symbol}=job {job.spec.id} ({job.size} nodes)")
    shared = (sim.node_cpu_used > 0) & (sim.node_cpu_used < 1.0 - 1e-9)
    cells[shared & (cells == ".")] = "+"
    for offset, cluster in zip(sim.platform.offsets, sim.platform.clusters, strict=False):
        row = "".join(cells[offset : offset + cluster.nodes])
        for k in range(0, len(row), labels_per_row):
            lines.append(f"{cluster.name:>8} {k:>5} |{row[k : k + labels_per_row]}|")
    if legend:
        lines.append("running: " + "  ".join(legend))
    for slot, jid in enumerate(queue_ids):
        job = sim.jobs[jid]
        spec = job.spec
        lines.append(
            f"  q{slot:<3} job {jid:<6} {spec.kind.value:<9} size {spec.nodes} "
            f"[{spec.min_nodes},{spec.max_nodes}] wait {sim.now - spec.submit:.0f}s"
        )
    return "\n".join(lines) + "\n"


KIND_COLOURS = {
    "rigid": "Blues",
    "moldable": "Purples",
    "malleable": "Oranges",
    "evolving": "Greens",
}
"""Colour map of each job kind in Gantt charts; jobs of one kind take shades of it."""

EVENT_MARKERS = {
    "shrink": ("v", "red"),
    "expand": ("^", "green"),
    "grant": ("^", "blue"),
    "suspend": ("x", "black"),
    "resume": ("o", "black"),
}
"""Marker and colour of each resize, grant, suspend and resume event in Gantt charts."""


def render_gantt(
    sim: EngineCore,
    log: GanttLog,
    width: int = 900,
    height: int = 500,
    title: str | None = None,
) -> np.ndarray:
    """A Gantt chart (hours from the episode's start x nodes) as an ``(H, W, 3)`` uint8 array.

    Each job's bars take a shade of its kind's colour (:data:`KIND_COLOURS`, in the legend), with
    a thin white edge between jobs; resizes, grants, suspensions and resumptions are markers
    (:data:`EVENT_MARKERS`) at the job's lowest node. The episode starts at its first submission.

    Args:
        sim: The engine (its clock ends the open intervals).
        log: The episode's allocation log.
        width: Pixels.
        height: Pixels.
        title: The chart's title (default: the time span and the job count).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    origin = min((j.spec.submit for j in sim.jobs.values()), default=0.0)
    fig = Figure(figsize=(width / 100, height / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    kinds_seen: dict[str, str] = {}
    for jid, t0, t1, nodes in log.closed(sim.now):
        kind = sim.jobs[jid].spec.kind.value
        cmap_name = KIND_COLOURS.get(kind, "Greys")
        kinds_seen[kind] = cmap_name
        color = matplotlib.colormaps[cmap_name](0.45 + 0.1 * (jid % 5))
        x0, span = (t0 - origin) / 3600.0, (t1 - t0) / 3600.0
        for first, count in runs(nodes):
            ax.broken_barh(
                [(x0, span)],
                (first - 0.5, count),
                facecolors=color,
                edgecolor="white",
                linewidth=0.3,
            )
    handles: list = [
        Patch(color=matplotlib.colormaps[c](0.65), label=f"{k} job")
        for k, c in sorted(kinds_seen.items())
    ]
    for what, (marker, mcolor) in EVENT_MARKERS.items():
        pts = [
            ((t - origin) / 3600.0, low) for _, t, w, low in log.events if w == what and low >= 0
        ]
        if pts:
            xs, ys = zip(*pts, strict=True)
            ax.scatter(xs, ys, marker=marker, c=mcolor, s=22, zorder=3)
            handles.append(Line2D([], [], marker=marker, color=mcolor, linestyle="", label=what))
    ax.set_xlabel("hours since the episode's first submission")
    ax.set_ylabel("node")
    ax.set_ylim(-0.5, sim.platform.total_nodes - 0.5)
    ax.set_xlim(left=0)
    if title is None:
        title = f"{len(sim.jobs)} jobs on {sim.platform.total_nodes} nodes"
    ax.set_title(title, fontsize=10)
    if handles:
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=8,
            frameon=False,
        )
    fig.tight_layout()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
