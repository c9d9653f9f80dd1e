"""DFRS annotation: tasks, CPU needs and memory, by the rules of the DFRS paper (section 5.3).

Synthetic workloads (section 5.3.2): nodes have ``cores`` cores; the task of a one-task job is
sequential and CPU-bound (CPU need ``1/cores``), tasks of other jobs are multi-threaded (1.0);
55% of jobs need 10% of a node's memory per task, the others ``10*x`` % with ``x`` uniform in
{2, ..., 10}.

HPC2N (section 5.3.1), on dual-core nodes with 2 GB: per-processor memory is the larger of the
requested and used memory (fields 10 and 7, KB) as a fraction of 2 GB, at least 10%; a job with
an even processor count and less than 50% memory per processor runs ``procs/2`` tasks of CPU need
1.0 and twice that memory; any other job runs ``procs`` tasks of CPU need 0.5.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobKind, JobSpec
from hpcgym.workloads.convert import record_procs
from hpcgym.workloads.swf import COL
from hpcgym.workloads.workload import ProvenanceStep, Workload

SMALL_MEMORY_SHARE = 0.55
"""Fraction of synthetic jobs whose tasks need 10% of a node's memory."""
HPC2N_NODE_MEMORY_KB = 2 * 1024 * 1024
"""HPC2N node memory (2 GB) in the SWF unit, KB."""
HPC2N_NODES = 120
"""HPC2N Seth: 120 dual-core nodes."""


def annotate_dfrs(w: Workload, seed: int, *, cores: int = 4) -> Workload:
    """CPU needs and memory of the DFRS paper's synthetic workloads.

    Args:
        w: The workload; sizes are task counts.
        seed: Seed of the memory draws (one independent draw per job, in job order).
        cores: Cores per node (the paper assumes quad-core nodes).

    Returns:
        The workload with ``cpu_need`` and ``mem`` set on every job.
    """
    if cores < 1:
        raise WorkloadError(f"annotate_dfrs: cores must be >= 1, got {cores}")
    rng = np.random.default_rng(seed)
    n = len(w)
    small = rng.random(n) < SMALL_MEMORY_SHARE
    x = rng.integers(2, 11, size=n)
    mem = np.where(small, 0.1, 0.1 * x)
    jobs = [
        dataclasses.replace(
            j,
            cpu_need=1.0 / cores if j.nodes == 1 and j.kind is JobKind.RIGID else 1.0,
            mem=float(min(1.0, m)),
        )
        for j, m in zip(w.jobs, mem, strict=True)
    ]
    step = ProvenanceStep.make("annotate_dfrs", seed=seed, cores=cores)
    return w.derive(jobs, step, keep_rows=True)


def hpc2n_tasks(
    rows: np.ndarray, node_memory_kb: float = HPC2N_NODE_MEMORY_KB
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Tasks, CPU need and memory per task of HPC2N records, and how many had no memory field.

    Memory above one node is capped at 1.0 (such a task could not run otherwise).
    """
    procs = record_procs(rows).astype(np.int64)
    req = rows[:, COL["req_memory"]]
    used = rows[:, COL["used_memory"]]
    known = np.maximum(req, used)
    missing = int((known <= 0).sum())
    per_proc = np.maximum(np.where(known > 0, known / node_memory_kb, 0.0), 0.1)
    paired = (procs % 2 == 0) & (per_proc < 0.5)
    tasks = np.where(paired, procs // 2, procs)
    cpu = np.where(paired, 1.0, 0.5)
    mem = np.minimum(np.where(paired, 2.0 * per_proc, per_proc), 1.0)
    return tasks, cpu, mem, missing


def hpc2n_dfrs(w: Workload, *, node_memory_kb: float = HPC2N_NODE_MEMORY_KB) -> Workload:
    """Apply the DFRS paper's HPC2N conversion to a workload read from the HPC2N trace.

    Args:
        w: Rigid jobs with their SWF records (``w.rows``), read with one processor per node
            (the conversion works on processors).
        node_memory_kb: Node memory in KB.

    Returns:
        Jobs of ``tasks`` tasks with CPU need and memory per task, on 120 dual-core nodes.
    """
    if w.rows is None:
        raise WorkloadError(
            f"hpc2n_dfrs: workload {w.name!r} has no SWF records; read it from the HPC2N trace"
        )
    tasks, cpu, mem, missing = hpc2n_tasks(w.rows, node_memory_kb)
    jobs: list[JobSpec] = [
        dataclasses.replace(
            j,
            kind=JobKind.RIGID,
            nodes=int(t),
            min_nodes=int(t),
            max_nodes=int(t),
            cpu_need=float(c),
            mem=float(m),
        )
        for j, t, c, m in zip(w.jobs, tasks, cpu, mem, strict=True)
    ]
    step = ProvenanceStep.make("hpc2n_dfrs", node_memory_kb=node_memory_kb, memory_missing=missing)
    return w.derive(jobs, step, keep_rows=True, platform=Platform.single(HPC2N_NODES, cores=2))
