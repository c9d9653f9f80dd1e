"""Job sequences drawn the way RLScheduler's evaluation draws them.

RLScheduler (Zhang et al., SC20; facts and sources in ``docs/rlscheduler.md``) evaluates on
sequences of consecutive jobs cut from one SWF trace. Reproducing its numbers needs three things
this module gives:

- **Its job list** (:func:`rlscheduler_jobs`): every record with a positive run time (a negative
  one counts as 10 s, a zero one drops the record), sorted by job number; the size is the larger
  of allocated and requested processors, in nodes of ``MaxProcs / MaxNodes`` processors rounded
  up; the runtime estimate is the requested time (a request of 0 s becomes 0.1 s), or the run
  time when the trace has none. No status filter. Submit times stay on the trace's own clock
  (not re-based to 0), because the F1 score reads the absolute submit time.
- **Its starts** (:func:`rlscheduler_starts`): one generator seeded the way the 2019 OpenAI Gym
  ``seeding.np_random`` seeded a legacy ``numpy.random.RandomState`` (the low 8 bytes of the
  SHA-512 of the seed's decimal text, as little-endian 32-bit words), then one
  ``randint(length, limit - length - 1)`` per sequence, ``limit`` being the job count (or the
  ``batch_job_slice`` when one is set). The published table used seed 1, 10 sequences of 1,024.
- **Its sequences** (:func:`rlscheduler_sequences`): the jobs ``start .. start + length - 1``.

The job lists are also workload sets (:data:`RLSCHED_SETS`: ``rlsched/lublin256-v0``,
``rlsched/sdsc-sp2-v0``, ``rlsched/hpc2n-v0``), so that the env and the bench run on exactly
these jobs, and :func:`split_starts` draws sequences the same way inside one split of a trace
(RLScheduler draws from the whole trace, which leaves no job unseen by training).

The engine must run these without walltime kills (``SimConfig(kill_on_walltime=False)``):
RLScheduler lets a job overrun its request.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads.registry import WorkloadSet, register, resolve_file
from hpcgym.workloads.swf import COL, SwfTrace, read_swf
from hpcgym.workloads.workload import Workload

EVAL_LENGTH = 1024
"""Jobs per evaluation sequence in RLScheduler's published tables."""

EVAL_COUNT = 10
"""Sequences per trace in RLScheduler's published tables."""

EVAL_SEED = 1
"""The seed of RLScheduler's published tables."""

TRAIN_LENGTH = 256
"""Jobs per training sequence in RLScheduler."""

MIN_REQUEST = 0.1
"""Seconds: the walltime given to a record whose requested time is 0."""


def gym_legacy_rng(seed: int) -> np.random.RandomState:
    """A ``RandomState`` seeded as OpenAI Gym's 2019 ``seeding.np_random(seed)`` seeded it.

    The seed's decimal text is hashed with SHA-512; the first 8 bytes, read as little-endian
    unsigned 32-bit words, are the seed words, without the high zero words.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise WorkloadError(f"the seed must be a non-negative integer, got {seed!r}")
    seed %= 2**64
    digest = hashlib.sha512(str(seed).encode("utf8")).digest()[:8]
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 8, 4)]
    while len(words) > 1 and words[-1] == 0:
        words.pop()
    return np.random.RandomState(words)


def rlscheduler_starts(
    n_jobs: int,
    count: int = EVAL_COUNT,
    *,
    length: int = EVAL_LENGTH,
    seed: int = EVAL_SEED,
    job_slice: int = 0,
) -> list[int]:
    """Indices of the first job of each evaluation sequence, in drawing order.

    Args:
        n_jobs: Jobs in the trace's RLScheduler job list (:func:`rlscheduler_jobs`).
        count: Sequences to draw.
        length: Jobs per sequence.
        seed: The evaluation seed.
        job_slice: RLScheduler's ``batch_job_slice``: draw from the first ``job_slice`` jobs
            only (0: the whole trace). Its tables used 10,000 for SDSC SP2 and HPC2N.

    Returns:
        ``count`` indices, each in ``[length, limit - length - 1)``.
    """
    limit = job_slice or n_jobs
    if job_slice and job_slice < length:
        raise WorkloadError(f"job_slice {job_slice} is shorter than a sequence ({length} jobs)")
    if limit - length - 1 <= length:
        raise WorkloadError(
            f"{limit} jobs are too few for {length}-job sequences drawn as RLScheduler does "
            f"(starts in [{length}, {limit - length - 1})); use shorter sequences"
        )
    rng = gym_legacy_rng(seed)
    return [int(rng.randint(length, limit - length - 1)) for _ in range(count)]


@dataclass(frozen=True)
class RLSchedTrace:
    """A trace as RLScheduler reads it.

    Attributes:
        name: The file name.
        jobs: RLScheduler's job list, in job-number order, on the trace's clock.
        platform: One cluster of ``MaxNodes`` nodes.
        procs_per_node: ``MaxProcs / MaxNodes`` (RLScheduler divides without rounding).
    """

    name: str
    jobs: tuple[JobSpec, ...]
    platform: Platform
    procs_per_node: float


def rlscheduler_jobs(trace: SwfTrace, name: str = "") -> RLSchedTrace:
    """The trace's jobs by RLScheduler's reading rules (module docstring)."""
    header = trace.header
    nodes_total = header.max_nodes or 0
    procs_total = header.max_procs or nodes_total
    if nodes_total <= 0:
        raise WorkloadError(
            f"{name or trace.path}: RLScheduler sizes its machine by the header's MaxNodes, "
            "which this trace lacks; add a '; MaxNodes: N' line"
        )
    ppn = procs_total / nodes_total
    data = trace.data
    run = data[:, COL["run_time"]].copy()
    run[run < 0] = 10.0
    keep = run > 0
    rows = data[keep]
    run = run[keep]
    order = np.argsort(rows[:, COL["job_id"]], kind="stable")
    rows, run = rows[order], run[order]
    procs = np.maximum(rows[:, COL["alloc_procs"]], rows[:, COL["req_procs"]])
    req = rows[:, COL["req_time"]]
    jobs = []
    for r, t, p, q in zip(rows, run, procs, req, strict=True):
        size = math.ceil(p / ppn)
        if size < 1:
            raise WorkloadError(
                f"{name or trace.path}: job {int(r[COL['job_id']])} has no processor count "
                "(fields 5 and 8); RLScheduler cannot size it either"
            )
        jobs.append(
            JobSpec(
                id=int(r[COL["job_id"]]),
                submit=float(r[COL["submit_time"]]),
                work=float(t),
                nodes=size,
                # RLScheduler's request time is the run time when the trace has none (-1). A
                # request of 0 s stays 0 there; the engine needs > 0, and 0.1 s ranks and
                # backfills the same on whole-second traces.
                walltime=None if q == -1 else max(float(q), MIN_REQUEST),
                user=int(r[COL["user_id"]]),
                group=int(r[COL["group_id"]]),
            )
        )
    return RLSchedTrace(
        name=name or os.path.basename(str(trace.path)),
        jobs=tuple(jobs),
        platform=Platform.single(nodes_total),
        procs_per_node=ppn,
    )


def read_rlscheduler_trace(path: str | os.PathLike[str]) -> RLSchedTrace:
    """Read an SWF file (every record, whatever its status) into RLScheduler's job list."""
    trace = read_swf(path, drop_status=())
    return rlscheduler_jobs(trace, os.path.basename(str(path)))


def rlscheduler_sequences(
    trace: RLSchedTrace,
    count: int = EVAL_COUNT,
    *,
    length: int = EVAL_LENGTH,
    seed: int = EVAL_SEED,
    job_slice: int = 0,
) -> list[tuple[int, tuple[JobSpec, ...]]]:
    """The evaluation sequences: ``(start index, jobs)`` per sequence, in drawing order."""
    starts = rlscheduler_starts(
        len(trace.jobs), count, length=length, seed=seed, job_slice=job_slice
    )
    return [(s, trace.jobs[s : s + length]) for s in starts]


def split_starts(
    first: int,
    stop: int,
    count: int,
    *,
    length: int = EVAL_LENGTH,
    seed: int = EVAL_SEED,
) -> list[int]:
    """Starts of ``count`` sequences inside the jobs ``[first, stop)`` (one split of a trace).

    The generator is RLScheduler's (:func:`gym_legacy_rng`); each start is
    ``first + randint(0, stop - first - length + 1)``, so every sequence lies inside the range.
    RLScheduler's own draw (:func:`rlscheduler_starts`) also leaves out the first ``length`` and
    the last ``length + 1`` jobs of the trace; inside a split that would waste most of its jobs.

    Raises:
        WorkloadError: The range holds fewer than ``length`` jobs.
    """
    room = stop - first - length + 1
    if room < 1:
        raise WorkloadError(
            f"jobs [{first}, {stop}) hold {stop - first} jobs, fewer than one {length}-job "
            "sequence; use shorter sequences or a larger split"
        )
    rng = gym_legacy_rng(seed)
    return [first + int(rng.randint(0, room)) for _ in range(count)]


RLSCHED_SETS = {
    "rlsched/lublin256-v0": ("lublin_256.swf.gz", "lublin_256 as RLScheduler reads it, 256 nodes"),
    "rlsched/sdsc-sp2-v0": (
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "SDSC SP2 (cleaned) as RLScheduler reads it: every record, 128 nodes",
    ),
    "rlsched/hpc2n-v0": (
        "hpc2n.swf.gz",
        "the bundled HPC2N sample as RLScheduler reads it: every record, 240 nodes of 1 processor",
    ),
}
"""Workload sets of RLScheduler's job lists: name -> (trace file, description)."""


def _rlsched_set(name: str, file: str, description: str) -> WorkloadSet:
    def build(seed: int, opts: object) -> Workload:
        t = read_rlscheduler_trace(resolve_file(file))
        # RLScheduler's list is in job-number order; a Workload must be in submission order.
        # On the bundled traces the two agree (tested), so the sequences' indices are the same.
        return Workload(name, t.jobs, t.platform)

    return WorkloadSet(name, description, build, {}, file)


for _name, (_file, _text) in RLSCHED_SETS.items():
    register(_rlsched_set(_name, _file, _text))
