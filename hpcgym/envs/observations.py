"""Observation encoders, chosen by name: ``"dict"`` (default) and ``"flat"``.

Every value lies in ``[0, 1]``. Unbounded quantities are squashed with ``x / (x + c)``
(``c`` = 1 hour for times, 1 day for the episode clock, 1 for counts); sizes are divided by the
largest cluster's node count and clipped at 1.

``cluster`` ``(clusters, 4)``: idle node fraction, free CPU fraction (1 - utilization),
free memory fraction, fraction of nodes partly used (shared).

``queue`` ``(queue_slots, 15)``, one row per queue-window slot (zeros when empty): present,
wait, estimated run (walltime), requested / min / max size, kind one-hot (rigid, moldable,
malleable, evolving), parallel efficiency at max size (speedup class), size of an evolving job's
next step, fits now (its first start level is legal), CPU need per task, memory per task.

``running`` ``(running_slots, 12)``: present, size, min, max, CPU yield, elapsed since start,
estimated remaining (the walltime minus the progress made, at the current rate; 1 when not
progressing), parallel efficiency at the current size, reconfigurations (``c / (c + 1)``),
pending request size, reconfiguring flag, malleable flag.

``suspended`` ``(suspended_slots, 12)`` (presets with suspend only): as ``running``, size being
the size it resumes at.

``time`` ``(6,)``: episode clock (since the first submission), fraction of jobs submitted,
fraction ended, queue length (``c`` = queue slots), holding jobs (``c`` = running slots), time
to the next submission (1 when none is left).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from gymnasium import spaces
from mypy_extensions import mypyc_attr

from hpcgym.envs.config import EnvConfig
from hpcgym.envs.ledger import (
    BUSY,
    EFFICIENCY,
    NEVER,
    RECONFIGS,
    REQUEST,
    SIZE,
    YIELD,
    JobLedger,
)
from hpcgym.envs.menu import Decision


def _c_helper(name: str) -> Any:
    """``hpcgym.sim._batchcore``'s ``name`` (C), or ``None`` in a pure-Python install.

    Without it numpy gives the same values, slower.
    """
    try:
        from hpcgym.sim import _batchcore
    except ImportError:
        return None
    return getattr(_batchcore, name)


_FILL_ROWS: Final = _c_helper("fill_rows")
_PUT_FLOATS: Final = _c_helper("put_floats")
_ZEROS: Final = np.zeros
_EMPTY: Final = np.empty
_FLOAT32: Final = np.float32
_NO_VALUES: Final[list[float]] = []

HOUR: Final = 3600.0
DAY: Final = 86400.0
Q_FEATURES: Final = 15
R_FEATURES: Final = 12
T_FEATURES: Final = 6
C_FEATURES: Final = 4


@mypyc_attr(allow_interpreted_subclasses=True)
class DictObservation:
    """The ``"dict"`` encoder: a ``Dict`` of float32 boxes in ``[0, 1]`` (see module docstring)."""

    def __init__(self, cfg: EnvConfig, n_clusters: int) -> None:
        self.cfg = cfg
        self.fill_rows: Any = _FILL_ROWS
        """The C row filler, or ``None`` for numpy (the same values; a test compares them)."""
        self.put_floats: Any = _PUT_FLOATS
        """The C writer of a tuple of floats into float32 cells, or ``None`` for numpy."""
        shapes: dict[str, tuple[int, ...]] = {
            "cluster": (n_clusters, C_FEATURES),
            "queue": (cfg.queue_slots, Q_FEATURES),
            "running": (cfg.running_slots, R_FEATURES),
        }
        if cfg.suspend:
            shapes["suspended"] = (cfg.suspended_slots, R_FEATURES)
        shapes["time"] = (T_FEATURES,)
        self.shapes = shapes
        self.nodes_list: list[float] = []
        self._cluster_cache: dict[Any, np.ndarray] = {}
        self.space: spaces.Space[Any] = spaces.Dict(
            {k: spaces.Box(0.0, 1.0, s, dtype=np.float32) for k, s in shapes.items()}
        )

    def reset(self, ledger: JobLedger, cluster_nodes: list[int], t0: float) -> None:
        """Prepare the static per-job rows of an episode and hook into the ledger."""
        self.ledger = ledger
        self.t0 = t0
        nodes_list = [float(c) for c in cluster_nodes]
        if self.nodes_list != nodes_list:
            # The cached cluster blocks depend on the idle counts and the cluster sizes only:
            # they are kept from episode to episode on the same machine.
            self._cluster_cache = {}
        self.nodes = np.array(cluster_nodes, dtype=float)
        self.nodes_list = nodes_list
        self.offsets = np.array(ledger.sim.platform.offsets)
        largest = float(max(cluster_nodes))
        self.largest = largest
        n = ledger.n
        q = np.zeros((n, Q_FEATURES), dtype=np.float32)
        q[:, 0] = 1.0
        q[:, 2] = ledger.estimate / (ledger.estimate + HOUR)
        q[:, 3] = np.minimum(1.0, ledger.req / largest)
        q[:, 4] = np.minimum(1.0, ledger.min / largest)
        q[:, 5] = np.minimum(1.0, ledger.max / largest)
        q[np.arange(n), 6 + ledger.kind] = 1.0
        q[:, 10] = ledger.table.efficiency_max
        q[:, 11] = np.minimum(1.0, ledger.table.next_step / largest)
        q[:, 13] = ledger.cpu_need
        q[:, 14] = ledger.mem
        q[:, 12] = 1.0
        no_fit = q.copy()
        no_fit[:, 12] = 0.0
        self.static_q = np.concatenate((q, no_fit, np.zeros((1, Q_FEATURES), dtype=np.float32)))
        """Static queue features per row with "fits now" set (rows ``0..n-1``) and clear
        (``n..2n-1``), and a zero row (index ``2n``) for empty slots: one gather fills both."""
        r = np.zeros((n, R_FEATURES), dtype=np.float32)
        r[:, 0] = 1.0
        r[:, 2] = q[:, 4]
        r[:, 3] = q[:, 5]
        r[:, 11] = ledger.kind == 2
        self._min_list = r[:, 2].tolist()
        self._max_list = r[:, 3].tolist()
        self.run_feat = np.concatenate((r, np.zeros((1, R_FEATURES), dtype=np.float32)))
        """Per-row running features, refreshed on every ledger touch (times filled in later)."""
        ledger.on_touch = self._touched

    def _touched(self, r: int, d: tuple[float, ...]) -> None:
        # Columns 1..10 in one write; 2, 3 are static, 5, 6 are filled in at encoding time.
        c = d[RECONFIGS]
        values = (
            min(1.0, d[SIZE] / self.largest),
            self._min_list[r],
            self._max_list[r],
            d[YIELD],
            0.0,
            0.0,
            d[EFFICIENCY],
            c / (c + 1.0),
            min(1.0, d[REQUEST] / self.largest),
            d[BUSY],
        )
        put = self.put_floats
        if put is None or not put(self.run_feat, r * R_FEATURES + 1, values):
            self.run_feat[r, 1:11] = values

    def _running(self, rows: list[int], slots: int, now: float) -> np.ndarray:
        k = len(rows)
        self.ledger.fresh(rows)
        out = _ZEROS((slots, R_FEATURES), dtype=_FLOAT32)
        if not k:
            return out
        t_start, eta_end = self.ledger.t_start, self.ledger.eta_end
        fill = self.fill_rows
        if fill is not None and type(rows) is list:
            # Columns 5 and 6: elapsed since the start, estimated time left.
            fill(out, self.run_feat, R_FEATURES, rows, None, 0, now, HOUR, 5, t_start, 6, eta_end)
        else:
            out[:k] = self.run_feat.take(rows, axis=0)
            # Elapsed and remaining time, a column each.
            out[:k, 5] = [(x := now - t_start[r]) / (x + HOUR) for r in rows]
            out[:k, 6] = [y / (y + HOUR) if (y := eta_end[r] - now) > 0 else 0.0 for r in rows]
        return out

    def encode(self, d: Decision, now: float, free: list[int], next_submit: float) -> Any:
        """The observation of decision point ``d`` at time ``now``."""
        led = self.ledger
        cfg = self.cfg
        rows = d.queue_rows
        k = len(rows)
        n = led.n
        # Empty slots are zero rows; only the window's rows are gathered (an index list
        # converts to an array at about 20 ns an item).
        queue = _ZEROS((cfg.queue_slots, Q_FEATURES), dtype=_FLOAT32)
        fill = self.fill_rows
        if k and fill is not None and type(rows) is list and type(d.fits) is list:
            submit = led.submit_list  # column 1: the wait
            fill(
                queue,
                self.static_q,
                Q_FEATURES,
                rows,
                d.fits,
                n,
                now,
                HOUR,
                1,
                submit,
                -1,
                _NO_VALUES,
            )
        elif k:
            idx = [r if f else r + n for r, f in zip(rows, d.fits, strict=True)]
            filled = queue[:k]
            filled[:] = self.static_q.take(idx, axis=0)
            submit = led.submit_list
            filled[:, 1] = [(w := now - submit[r]) / (w + HOUR) for r in rows]
        out: dict[str, np.ndarray] = {
            "cluster": self._cluster(free),
            "queue": queue,
            "running": self._running(d.run_rows, cfg.running_slots, now),
        }
        if cfg.suspend:
            out["suspended"] = self._running(d.susp_rows, cfg.suspended_slots, now)
        n = n or 1
        clock = now - self.t0 if now > self.t0 else 0.0
        gap = next_submit - now
        queued, holding = len(led.queued), d.holding
        values = (
            clock / (clock + DAY),
            led.submitted / n,
            led.ended / n,
            queued / (queued + cfg.queue_slots),
            holding / (holding + cfg.running_slots),
            gap / (gap + HOUR) if gap < NEVER else 1.0,
        )
        put = self.put_floats
        times = _EMPTY(T_FEATURES, dtype=_FLOAT32)
        if put is None or not put(times, 0, values):
            times = np.array(values, dtype=np.float32)
        out["time"] = times
        return out

    def _cluster(self, free: list[int]) -> np.ndarray:
        if self.ledger.simple:
            # Whole-node jobs: the block depends on the idle counts only; cache it.
            key = free[0] if len(free) == 1 else tuple(free)
            block = self._cluster_cache.get(key)
            if block is None:
                idle = [f / c for f, c in zip(free, self.nodes_list, strict=True)]
                block = np.array([(x, x, 1.0, 0.0) for x in idle], dtype=np.float32)
                if len(self._cluster_cache) > 4096:
                    self._cluster_cache.clear()
                self._cluster_cache[key] = block
            return block.copy()
        out = np.empty((len(free), C_FEATURES), dtype=np.float32)
        out[:, 0] = np.divide(free, self.nodes)
        sim = self.ledger.sim
        cpu, mem = sim.node_cpu_used, sim.node_mem_used
        out[:, 1] = 1.0 - np.add.reduceat(cpu, self.offsets) / self.nodes
        out[:, 2] = 1.0 - np.add.reduceat(mem, self.offsets) / self.nodes
        out[:, 3] = np.add.reduceat((cpu > 0.0) & (cpu < 1.0), self.offsets) / self.nodes
        return np.clip(out, 0.0, 1.0)


@mypyc_attr(allow_interpreted_subclasses=True)
class FlatObservation(DictObservation):
    """The ``"flat"`` encoder: the ``"dict"`` arrays concatenated in their key order."""

    def __init__(self, cfg: EnvConfig, n_clusters: int) -> None:
        super().__init__(cfg, n_clusters)
        size = sum(int(np.prod(s)) for s in self.shapes.values())
        self.space = spaces.Box(0.0, 1.0, (size,), dtype=np.float32)

    def encode(self, d: Decision, now: float, free: list[int], next_submit: float) -> Any:
        """The flattened observation."""
        parts = super().encode(d, now, free, next_submit)
        return np.concatenate([p.ravel() for p in parts.values()])


OBSERVATIONS: dict[str, type[DictObservation]] = {
    "dict": DictObservation,
    "flat": FlatObservation,
}
"""Observation encoders by name; add your own subclass here to make it selectable."""
