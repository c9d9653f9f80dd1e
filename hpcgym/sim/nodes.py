"""Node bookkeeping: per-node CPU and memory in use, and idle-node counts per cluster.

A node is idle exactly when its CPU in use is 0.0: every task has a share of at least
``MIN_SHARE``, and releases snap rounding residue back to exact zeros. The pool checks
capacity and places tasks; it never decides anything. Every method that would break capacity
raises before touching state.
"""

from __future__ import annotations

import numpy as np
from mypy_extensions import mypyc_attr

from hpcgym.errors import CapacityError, CommandError
from hpcgym.sim.platform import Platform

EPS = 1e-9
"""Tolerance of every capacity comparison: shares like 1/3 must fit three times in a node."""

MIN_SHARE = 1e-6
"""Smallest CPU share a task may get (well above ``EPS``, so a full node never takes one more)."""

# How a set of tasks sits on its nodes; the cheaper modes skip work in ``add`` and ``remove``.
SHARED = 0
"""Several tasks of the job may share a node."""
UNIQUE = 1
"""One task per node, any share."""
WHOLE = 2
"""One task per node at share 1: the nodes are the job's alone."""


@mypyc_attr(serializable=True)
class NodePool:
    """CPU and memory use of every node of a platform, tracked with numpy arrays."""

    __slots__ = ("bounds", "cluster_of", "cpu_used", "free", "mem_used", "platform", "single")

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        n = platform.total_nodes
        self.cpu_used = np.zeros(n)
        self.mem_used = np.zeros(n)
        self.cluster_of = platform.cluster_of_nodes()
        self.bounds = [
            (o, o + c.nodes) for o, c in zip(platform.offsets, platform.clusters, strict=True)
        ]
        self.single = len(self.bounds) == 1
        self.free = [c.nodes for c in platform.clusters]
        """Idle nodes per cluster."""

    def _in_cluster(self, cluster: int, values: np.ndarray) -> np.ndarray:
        if self.single:
            return values
        lo, hi = self.bounds[cluster]
        return values[lo:hi]

    def _fitting(self, cluster: int, cpu: float, mem: float) -> np.ndarray:
        """Ids of the nodes of ``cluster`` with room for one task of ``(cpu, mem)``, ascending."""
        if cpu >= 1.0:
            fits = self._in_cluster(cluster, self.cpu_used) == 0.0
        else:
            fits = self._in_cluster(cluster, self.cpu_used) <= 1.0 - cpu + EPS
        if mem > 0:
            fits &= self._in_cluster(cluster, self.mem_used) <= 1.0 - mem + EPS
        found = fits.nonzero()[0]
        lo = self.bounds[cluster][0]
        return found + lo if lo else found

    def place(self, cluster: int, size: int, cpu: float, mem: float) -> np.ndarray:
        """Choose ``size`` distinct nodes of ``cluster`` that fit one task each, lowest ids first.

        Raises:
            CapacityError: Fewer than ``size`` nodes have room.
        """
        found = self._fitting(cluster, cpu, mem)
        if found.size < size:
            raise CapacityError(
                f"cluster {cluster} has {found.size} nodes with room for a task of "
                f"cpu {cpu:g} and memory {mem:g}, {size} needed"
            )
        return found[:size]

    def take_idle(self, cluster: int, size: int, mem: float) -> np.ndarray:
        """Place ``size`` whole-node tasks on the lowest-numbered idle nodes and account them.

        Raises:
            CapacityError: Fewer than ``size`` idle nodes in ``cluster``.
        """
        free = self.free
        if free[cluster] < size:
            raise CapacityError(f"cluster {cluster} has {free[cluster]} idle nodes, {size} needed")
        cpu_used = self.cpu_used
        if self.single:
            nodes = (cpu_used == 0.0).nonzero()[0][:size]
        else:
            lo, hi = self.bounds[cluster]
            nodes = (cpu_used[lo:hi] == 0.0).nonzero()[0][:size] + lo
        free[cluster] -= size
        cpu_used[nodes] = 1.0
        if mem:
            self.mem_used[nodes] = mem
        return nodes

    def cluster_fitting(self, size: int, cpu: float, mem: float) -> int:
        """The first cluster in which ``size`` tasks fit one per node, or -1."""
        for k in range(len(self.bounds)):
            if cpu >= 1.0 and mem == 0:
                if self.free[k] >= size:
                    return k
            elif self._fitting(k, cpu, mem).size >= size:
                return k
        return -1

    def check(
        self,
        nodes: np.ndarray,
        cpu: np.ndarray,
        mem: float,
        freed_nodes: np.ndarray | None = None,
        freed_cpu: np.ndarray | None = None,
    ) -> int:
        """Validate that tasks ``(nodes[i], cpu[i])`` fit, optionally after freeing some tasks.

        Returns:
            The cluster index of the nodes.

        Raises:
            CommandError: Node ids out of range or spanning clusters, or shares out of range.
            CapacityError: A node's CPU or memory would exceed 1.
        """
        n = self.cpu_used.size
        if nodes.size == 0:
            raise CommandError("no nodes given")
        if nodes.min() < 0 or nodes.max() >= n:
            raise CommandError(f"node ids must be in [0, {n}), got {nodes.min()}..{nodes.max()}")
        clusters = self.cluster_of[nodes]
        cluster = int(clusters[0])
        if np.any(clusters != cluster):
            raise CommandError("a job's tasks must all be on nodes of one cluster")
        if not (cpu.min() >= MIN_SHARE and cpu.max() <= 1.0):  # NaN fails both
            raise CommandError(f"CPU shares must be in [{MIN_SHARE:g}, 1]")
        add_cpu = np.bincount(nodes, weights=cpu, minlength=n)
        add_mem = np.bincount(nodes, minlength=n) * mem
        if freed_nodes is not None and freed_cpu is not None and freed_nodes.size:
            add_cpu -= np.bincount(freed_nodes, weights=freed_cpu, minlength=n)
            add_mem -= np.bincount(freed_nodes, minlength=n) * mem
        over_cpu = np.flatnonzero(self.cpu_used + add_cpu > 1.0 + EPS)
        if over_cpu.size:
            k = int(over_cpu[0])
            raise CapacityError(
                f"node {k} would use {self.cpu_used[k] + add_cpu[k]:.4g} of its CPU (max 1)"
            )
        over_mem = np.flatnonzero(self.mem_used + add_mem > 1.0 + EPS)
        if over_mem.size:
            k = int(over_mem[0])
            raise CapacityError(
                f"node {k} would use {self.mem_used[k] + add_mem[k]:.4g} of its memory (max 1)"
            )
        return cluster

    def add(self, cluster: int, nodes: np.ndarray, cpu: np.ndarray, mem: float, mode: int) -> None:
        """Account tasks on nodes (already checked); ``mode``: ``WHOLE``, ``UNIQUE``, ``SHARED``."""
        used = self.cpu_used
        if mode == WHOLE:
            # Whole-node tasks: the nodes were idle and are now exactly full.
            self.free[cluster] -= nodes.size
            used[nodes] = 1.0
            if mem:
                self.mem_used[nodes] = mem
        elif mode == UNIQUE:
            self.free[cluster] -= int(np.count_nonzero(used[nodes] == 0.0))
            used[nodes] += cpu
            if mem:
                self.mem_used[nodes] += mem
        else:
            self.free[cluster] -= int(np.count_nonzero(used[np.unique(nodes)] == 0.0))
            np.add.at(used, nodes, cpu)
            if mem:
                np.add.at(self.mem_used, nodes, mem)

    def remove(
        self, cluster: int, nodes: np.ndarray, cpu: np.ndarray, mem: float, mode: int
    ) -> None:
        """Remove tasks from nodes; nodes left with nothing become idle."""
        used = self.cpu_used
        if mode == WHOLE:
            used[nodes] = 0.0
            if mem:
                self.mem_used[nodes] = 0.0
            self.free[cluster] += nodes.size
            return
        if mode == UNIQUE:
            used[nodes] -= cpu
            if mem:
                self.mem_used[nodes] -= mem
        else:
            np.subtract.at(used, nodes, cpu)
            if mem:
                np.subtract.at(self.mem_used, nodes, mem)
            nodes = np.unique(nodes)
        emptied = nodes[used[nodes] <= EPS]
        if emptied.size:
            # Snap rounding residue to exact zeros: idle means exactly 0.0.
            used[emptied] = 0.0
            self.mem_used[emptied] = 0.0
            self.free[cluster] += int(emptied.size)


_UNIFORM: dict[tuple[int, float], np.ndarray] = {}


def uniform_shares(size: int, share: float) -> np.ndarray:
    """A read-only array of ``size`` equal shares, shared between callers (it never changes)."""
    key = (size, share)
    arr = _UNIFORM.get(key)
    if arr is None:
        if len(_UNIFORM) > 65536:
            _UNIFORM.clear()
        arr = np.full(size, share)
        arr.flags.writeable = False
        _UNIFORM[key] = arr
    return arr


WHOLE_ROWS: dict[int, np.ndarray] = {}
"""``uniform_shares(size, 1.0)`` by size, for the start fast path's plain ``dict.get``."""


def whole_row(size: int) -> np.ndarray:
    """``size`` shares of 1.0 (a read-only array shared between callers), cached by size."""
    arr = WHOLE_ROWS.get(size)
    if arr is None:
        arr = WHOLE_ROWS[size] = uniform_shares(size, 1.0)
    return arr


def uniform_share(cpu: np.ndarray) -> float:
    """The common share of ``cpu`` if all are equal, else -1."""
    first = float(cpu[0])
    return first if cpu.min() == cpu.max() else -1.0


def placement_mode(nodes: np.ndarray, cpu: np.ndarray) -> int:
    """How tasks ``(nodes, cpu)`` sit: ``WHOLE``, ``UNIQUE`` or ``SHARED`` (see above)."""
    if np.unique(nodes).size != nodes.size:
        return SHARED
    return WHOLE if cpu.min() >= 1.0 else UNIQUE
