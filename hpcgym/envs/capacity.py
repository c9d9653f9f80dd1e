"""Room on the platform for new tasks, counted exactly as the engine's placement counts it.

A node has room for a task of CPU share ``s`` and memory ``m`` when it is idle (``s >= 1``) or
its CPU in use is at most ``1 - s`` (``s < 1``), and its memory in use is at most ``1 - m``
(``m > 0``), with the engine's tolerance ``EPS``. A job's tasks go one per node on one cluster.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from hpcgym.sim.engine import EngineCore
from hpcgym.sim.nodes import EPS


def _room_counts() -> Any:
    """``hpcgym.sim._batchcore.room_counts`` (C), or ``None`` in a pure-Python install."""
    try:
        from hpcgym.sim import _batchcore
    except ImportError:
        return None
    return _batchcore.room_counts


_ROOM_COUNTS: Final = _room_counts()
"""``room``'s counts in one C loop; without it numpy gives the same counts, slower (about
ten array operations, each with its own temporary, for a few dozen tasks on a few hundred
nodes: the call overhead, not the work, was a third of a ``Shared-v0`` step)."""


class Capacity:
    """Counts of nodes with room, per cluster, for the current state of ``sim``."""

    def __init__(self, sim: EngineCore) -> None:
        self.sim = sim
        self.free: list[int] = sim.pool.free
        """Idle nodes per cluster (the engine's live list; read only)."""
        self.offsets = np.array(sim.platform.offsets)
        self.starts = tuple(int(o) for o in sim.platform.offsets)
        """The clusters' first node ids (``room_counts``' argument)."""
        self.single = len(self.free) == 1

    def max_idle(self) -> int:
        """Most idle nodes in any one cluster."""
        free = self.free
        return free[0] if self.single else max(free)

    def room(self, share: np.ndarray, mem: np.ndarray) -> np.ndarray:
        """Nodes with room for a task of ``(share[i], mem[i])``: ``(len(share), clusters)``."""
        cpu_used = self.sim.node_cpu_used
        mem_used = self.sim.node_mem_used
        if _ROOM_COUNTS is not None:
            share = np.ascontiguousarray(share, dtype=np.float64)
            mem = np.ascontiguousarray(mem, dtype=np.float64)
            out = np.empty((share.size, len(self.starts)), dtype=np.int64)
            _ROOM_COUNTS(out, cpu_used, mem_used, share, mem, self.starts, EPS)
            return out
        return self.numpy_room(share, mem)

    def numpy_room(self, share: np.ndarray, mem: np.ndarray) -> np.ndarray:
        """``room`` in numpy (the pure-Python install's, and the tests' second opinion)."""
        cpu_used = self.sim.node_cpu_used
        mem_used = self.sim.node_mem_used
        share = np.asarray(share, dtype=float)[:, None]
        mem = np.asarray(mem, dtype=float)[:, None]
        ok = np.where(share >= 1.0, cpu_used == 0.0, cpu_used <= 1.0 - share + EPS)
        ok &= (mem <= 0.0) | (mem_used <= 1.0 - mem + EPS)
        if self.single:
            return ok.sum(axis=1, keepdims=True)
        return np.add.reduceat(ok, self.offsets, axis=1)

    def best_room(self, share: np.ndarray, mem: np.ndarray, simple: bool) -> np.ndarray | int:
        """Most nodes with room in any one cluster, per task (``simple``: idle nodes, a scalar)."""
        if simple:
            return self.max_idle()
        return self.room(share, mem).max(axis=1)

    def room_in(self, cluster: int, share: float, mem: float, simple: bool) -> int:
        """Nodes with room for one ``(share, mem)`` task in ``cluster``."""
        if simple or (share >= 1.0 and mem <= 0.0):
            return self.free[cluster]
        counts = self.room(np.array([share]), np.array([mem]))
        return int(counts[0, cluster])
