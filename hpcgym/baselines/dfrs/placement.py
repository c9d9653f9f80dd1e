"""A task mapping under construction: which node each task of each job is on.

Schedulers of the DFRS family compute a whole target mapping before touching the engine. A
``Placement`` tracks it with per-node CPU *load* (the sum of the CPU needs of the tasks mapped
there, which may exceed 1: CPU is shared) and memory in use (which may not exceed 1).
"""

from __future__ import annotations

import numpy as np

from hpcgym.sim import JobSpec

EPS = 1e-9
"""Tolerance of memory and CPU comparisons (the engine uses the same)."""


class Placement:
    """Node loads and the node of every task of every mapped job."""

    __slots__ = ("load", "mem", "nodes", "specs")

    def __init__(self, n_nodes: int) -> None:
        self.load = np.zeros(n_nodes)
        """Sum of the CPU needs of the tasks on each node."""
        self.mem = np.zeros(n_nodes)
        """Memory in use on each node."""
        self.nodes: dict[int, np.ndarray] = {}
        """Node of each task, by job id, in mapping order."""
        self.specs: dict[int, JobSpec] = {}

    def __contains__(self, job_id: int) -> bool:
        return job_id in self.nodes

    def copy(self) -> Placement:
        """An independent copy."""
        out = Placement(self.load.size)
        out.load[:] = self.load
        out.mem[:] = self.mem
        out.nodes = dict(self.nodes)
        out.specs = dict(self.specs)
        return out

    def add(self, spec: JobSpec, nodes: np.ndarray) -> None:
        """Map the tasks of ``spec`` on ``nodes`` (one entry per task)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        np.add.at(self.load, nodes, spec.cpu_need)
        np.add.at(self.mem, nodes, spec.mem)
        self.nodes[spec.id] = nodes
        self.specs[spec.id] = spec

    def remove(self, job_id: int) -> None:
        """Unmap every task of ``job_id``."""
        nodes = self.nodes.pop(job_id)
        spec = self.specs.pop(job_id)
        np.subtract.at(self.load, nodes, spec.cpu_need)
        np.subtract.at(self.mem, nodes, spec.mem)
        # A load is a sum of positive needs, or zero: snap rounding residue to exact zeros.
        self.load[nodes[self.load[nodes] < EPS]] = 0.0
        self.mem[nodes[self.mem[nodes] < EPS]] = 0.0

    def max_load(self) -> float:
        """The largest node CPU load (0 when nothing is mapped)."""
        return float(self.load.max()) if self.load.size else 0.0


def fits_memory(placement: Placement, spec: JobSpec) -> bool:
    """Whether every task of ``spec`` finds a node with enough free memory (CPU is shareable)."""
    if spec.mem <= 0.0:
        return True
    room = np.floor((1.0 - placement.mem + EPS) / spec.mem)
    return float(room.sum()) >= spec.nodes


def greedy_nodes(placement: Placement, spec: JobSpec) -> np.ndarray | None:
    """Greedy (paper, section 4.2): each task on the least-loaded node with enough free memory.

    Ties go to the lowest node id. The placement is not changed.

    Returns:
        The node of each task, or ``None`` when some task finds no node with enough memory.
    """
    load = placement.load.copy()
    mem = placement.mem.copy()
    c, m = spec.cpu_need, spec.mem
    out = np.empty(spec.nodes, dtype=np.int64)
    for k in range(spec.nodes):
        masked = np.where(mem + m <= 1.0 + EPS, load, np.inf)
        i = int(masked.argmin())
        if masked[i] == np.inf:
            return None
        out[k] = i
        load[i] += c
        mem[i] += m
    return out
