"""From SWF records to jobs and back.

A record becomes a rigid job: its size is the allocated processors (field 5, else the requested
ones, field 8); its work is the run time (field 4); its walltime the requested time (field 9)
when given; submit times are shifted so the first record submits at 0. Records that cannot run
in a simulation (missing run time, size or submit time) are not jobs; they are counted by reason
in ``Workload.skipped``.

The unit of allocation is the processor, as in SWF: the machine is ``MaxProcs`` one-processor
units and each job asks for its processor count. ``allocation="node"`` allocates whole nodes
instead: each job's processors are divided by the processors per node and rounded up, which
adds core-seconds (a job on 3 of 8 cores holds all 8) and raises the offered load.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import Literal

import numpy as np

from hpcgym._version import __version__
from hpcgym.errors import SpecError, WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec, rigid_specs, rigid_valid
from hpcgym.workloads.batsim import batsim_document, write_batsim
from hpcgym.workloads.formats import SUFFIXES, read_trace
from hpcgym.workloads.header import HPCGYM_PREFIX, MAX_MACHINE_UNITS, SwfHeader
from hpcgym.workloads.swf import (
    COL,
    FIELDS,
    INT64_LIMIT,
    N_FIELDS,
    SwfTrace,
    write_swf,
)
from hpcgym.workloads.workload import JsonValue, ProvenanceStep, Workload


def record_procs(rows: np.ndarray) -> np.ndarray:
    """Processors of each record: allocated (field 5) when known, else requested (field 8)."""
    alloc = rows[:, COL["alloc_procs"]]
    return np.where(alloc > 0, alloc, rows[:, COL["req_procs"]])


Allocation = Literal["processor", "node"]
"""The unit a trace's jobs are allocated in: processors (SWF's unit), or whole nodes."""

ALLOCATIONS: tuple[Allocation, ...] = ("processor", "node")
DEFAULT_ALLOCATION: Allocation = "processor"
"""Processors, the unit SWF records count."""


def check_allocation(value: object) -> Allocation:
    """``value`` as an :data:`Allocation`, or a :class:`WorkloadError` saying what is accepted."""
    if value not in ALLOCATIONS:
        raise WorkloadError(
            f"allocation must be 'processor' or 'node', got {value!r}: 'processor' gives each "
            "job its SWF processor count on a machine of MaxProcs one-processor units; 'node' "
            "rounds each job up to whole nodes of MaxProcs / MaxNodes processors"
        )
    return value


def unit_sizes(procs: np.ndarray, allocation: Allocation, procs_per_node: int) -> np.ndarray:
    """Job sizes in units: processors (rounded up to whole ones), or whole nodes (rounded up)."""
    per_unit = 1 if allocation == "processor" else procs_per_node
    return np.ceil(procs / per_unit).astype(np.int64)


BAD_LINE = "bad SWF line (unreadable; see the reader's report)"
"""``Workload.skipped`` reason of the lines a lenient read skipped."""

BAD_LINES_LISTED = 20
"""How many of those lines the provenance lists by number."""


def _where(trace: SwfTrace, i: int) -> str:
    """``path:line`` of record ``i`` (``path: record i`` for records made in memory)."""
    line = int(trace.lines[i]) if i < len(trace.lines) else 0
    return f"{trace.path}:{line}" if line else f"{trace.path}: record {i + 1}"


def _check_whole(trace: SwfTrace, rows: np.ndarray, names: tuple[str, ...]) -> None:
    """Refuse a fraction in an integer field (an id) of ``rows``: it would be truncated."""
    for name in names:
        values = trace.data[rows, COL[name]]
        frac = values != np.floor(values)
        if frac.any():
            i = int(rows[int(np.argmax(frac))])
            raise WorkloadError(
                f"{_where(trace, i)}: field {COL[name] + 1} ({name}) is "
                f"{trace.data[i, COL[name]]:g}; ids are whole numbers. Fix the record."
            )


def _check_unique_ids(trace: SwfTrace, rows: np.ndarray) -> None:
    """Refuse a repeated job id among ``rows`` (record indices), naming it and both lines."""
    ids = trace.data[rows, COL["job_id"]]
    if len(np.unique(ids)) == len(ids):
        return
    first: dict[float, int] = {}
    for i in sorted(int(x) for x in rows):
        jid = float(trace.data[i, COL["job_id"]])
        if jid in first:
            j = first[jid]
            earlier = f"line {trace.lines[j]}" if trace.lines[j] else f"record {j + 1}"
            raise WorkloadError(
                f"{_where(trace, i)}: job id {jid:g} is already used on {earlier}; job ids "
                "(field 1) must be unique. Renumber one of them."
            )
        first[jid] = i


def _check_header(trace: SwfTrace) -> None:
    """Refuse a header ``MaxProcs`` or ``MaxNodes`` below 1."""
    header = trace.header
    for key, value in (("MaxProcs", header.max_procs), ("MaxNodes", header.max_nodes)):
        if value is not None and value < 1:
            raise WorkloadError(
                f"{trace.path}: header {key}: {value}; a machine has at least one node and "
                "processor. Fix the header, or give the platform."
            )


def _machine_units(
    trace: SwfTrace, ppn: int, allocation: Allocation, sizes: np.ndarray, source: np.ndarray
) -> tuple[int, str]:
    """The machine's size in units, from the header, and where it comes from (for errors).

    Processors: ``MaxProcs``, else ``MaxNodes`` nodes of ``ppn``; a header with neither is an
    error (the machine is unknown). Nodes: ``MaxProcs / ppn``, else ``MaxNodes``, else the
    largest job (the behaviour of node allocation before processors became the default).
    A machine of more than :data:`MAX_MACHINE_UNITS` units is an error.
    """
    header = trace.header
    _check_header(trace)
    if allocation == "processor":
        if header.max_procs and header.max_procs > MAX_MACHINE_UNITS:
            raise WorkloadError(
                f"{trace.path}: header MaxProcs {header.max_procs:,} is more than the "
                f"{MAX_MACHINE_UNITS:,} processors hpcgym simulates. Fix the header, or pass "
                "allocation='node'."
            )
        if header.max_procs:
            return header.max_procs, f"header MaxProcs {header.max_procs}"
        if header.max_nodes:
            units = header.max_nodes * ppn
            if units > MAX_MACHINE_UNITS:
                raise WorkloadError(
                    f"{trace.path}: header MaxNodes {header.max_nodes} x {ppn} processors per "
                    f"node is {units:,} processors, more than the {MAX_MACHINE_UNITS:,} hpcgym "
                    "simulates. Fix the header or procs_per_node, or pass allocation='node'."
                )
            return units, f"header MaxNodes {header.max_nodes} x {ppn}"
        raise WorkloadError(
            f"{trace.path}: the header gives neither MaxProcs nor MaxNodes, so the machine's "
            "size is unknown. Add a '; MaxProcs: N' line to the header, give the platform "
            "(platform=Platform.single(N) for N processors), or pass allocation='node', which "
            "sizes the machine by its largest job."
        )
    for key, value in (("MaxProcs", header.max_procs), ("MaxNodes", header.max_nodes)):
        if value and value > MAX_MACHINE_UNITS * (ppn if key == "MaxProcs" else 1):
            raise WorkloadError(
                f"{trace.path}: header {key} {value:,} makes more than the "
                f"{MAX_MACHINE_UNITS:,} nodes hpcgym simulates. Fix the header."
            )
    if header.max_procs:
        size = header.max_procs // ppn
        if size < 1:
            raise WorkloadError(
                f"{trace.path}: header MaxProcs {header.max_procs} is fewer than the "
                f"{ppn} processors of one node. Fix the header, or give procs_per_node."
            )
        return size, f"header MaxProcs {header.max_procs} / {ppn}"
    if header.max_nodes:
        return header.max_nodes, f"header MaxNodes {header.max_nodes}"
    if not len(sizes):
        return 1, "largest job"
    k = int(np.argmax(sizes))
    if sizes[k] > MAX_MACHINE_UNITS:
        i = int(source[k])
        raise WorkloadError(
            f"{_where(trace, i)}: job {trace.data[i, COL['job_id']]:g} needs {sizes[k]:,} nodes, "
            f"and with neither MaxProcs nor MaxNodes in the header the machine is sized by its "
            f"largest job: more than the {MAX_MACHINE_UNITS:,} nodes hpcgym simulates. Fix the "
            "record, or add a '; MaxNodes: N' line to the header."
        )
    return int(sizes[k]), "largest job"


def _check_fit(
    trace: SwfTrace,
    source: np.ndarray,
    procs: np.ndarray,
    sizes: np.ndarray,
    allocation: Allocation,
    ppn: int,
    platform: Platform,
    machine: str,
) -> None:
    """Refuse a job larger than the platform's largest cluster: it could never start."""
    largest = platform.largest_cluster
    over = sizes > largest
    if not over.any():
        return
    k = int(np.argmax(over))
    i = int(source[k])
    jid = int(trace.data[i, COL["job_id"]])
    if allocation == "processor":
        asks = f"asks for {procs[k]:g} processors; the machine has {largest} ({machine})"
    else:
        asks = (
            f"needs {sizes[k]} nodes of {ppn} processors for its {procs[k]:g} processors; "
            f"the machine has {largest} nodes ({machine})"
        )
    raise WorkloadError(
        f"{_where(trace, i)}: job {jid} {asks}, so it could never start. Fix the header or the "
        f"record, or give a platform that holds it ({int((sizes > largest).sum())} job(s) "
        "too large)."
    )


def trace_to_workload(
    trace: SwfTrace,
    *,
    name: str | None = None,
    procs_per_node: int | None = None,
    platform: Platform | None = None,
    allocation: Allocation = DEFAULT_ALLOCATION,
) -> Workload:
    """Turn SWF records into a workload of rigid jobs.

    Args:
        trace: The records.
        name: Workload name; defaults to the file name.
        procs_per_node: Processors per node of the machine; defaults to the header's
            ``MaxProcs / MaxNodes`` (1 when the header does not say). With node allocation it
            is the unit; with processor allocation it only sizes a machine whose header gives
            ``MaxNodes`` without ``MaxProcs``.
        platform: The machine, in units of ``allocation``; defaults to one cluster of
            ``MaxProcs`` one-processor units (processor allocation; else ``MaxNodes`` x
            ``procs_per_node``), or of ``MaxProcs / procs_per_node`` nodes with
            ``procs_per_node`` cores (node allocation; else ``MaxNodes``, else the largest job).
        allocation: ``"processor"`` (default): each job asks for its processors, as in SWF.
            ``"node"``: each job asks for whole nodes, its processors divided by
            ``procs_per_node`` and rounded up (more core-seconds, a higher offered load).

    Returns:
        The workload; ``rows`` holds the records of the kept jobs.

    Raises:
        WorkloadError: An unknown allocation; a header with neither ``MaxProcs`` nor
            ``MaxNodes`` under processor allocation and no platform; a job larger than the
            machine; a bad record (naming its file and line).
    """
    allocation = check_allocation(allocation)
    ppn = procs_per_node or trace.header.procs_per_node
    if ppn < 1:
        raise WorkloadError(f"procs_per_node must be >= 1, got {ppn}")
    rows = trace.data
    # (Two reductions first: the elementwise test builds a temporary as large as the records.)
    if len(rows) and (rows.max() >= INT64_LIMIT or rows.min() <= -INT64_LIMIT):
        i, k = (int(x[0]) for x in np.nonzero(np.abs(rows) >= INT64_LIMIT))
        raise WorkloadError(
            f"{_where(trace, i)}: field {k + 1} ({FIELDS[k]}) is {rows[i, k]:g}, beyond the "
            "int64 range SWF values stay in"
        )
    procs = record_procs(rows)
    run = rows[:, COL["run_time"]]
    submit = rows[:, COL["submit_time"]]
    # Each skipped record counts under one reason: the first of submit, run time, size it lacks.
    no_submit = submit < 0
    no_run = (run < 0) & ~no_submit
    no_size = (procs <= 0) & ~no_submit & ~no_run
    ok = ~(no_submit | no_run | no_size)
    skipped = Counter(
        {
            reason: int(mask.sum())
            for reason, mask in (
                ("missing size (fields 5 and 8)", no_size),
                ("missing run time (field 4)", no_run),
                ("missing submit time (field 2)", no_submit),
            )
            if mask.any()
        }
    )
    source = np.flatnonzero(ok)
    source = source[np.argsort(submit[source], kind="stable")]
    kept = rows[source]  # one copy of the kept records, in submission order
    _check_whole(trace, source, ("job_id", "user_id", "group_id"))
    _check_unique_ids(trace, source)
    shift = float(kept[0, COL["submit_time"]]) if len(kept) else 0.0
    kept_procs = record_procs(kept)
    nodes = unit_sizes(kept_procs, allocation, ppn)
    req_time = kept[:, COL["req_time"]]
    ids = kept[:, COL["job_id"]].astype(np.int64)
    submits = kept[:, COL["submit_time"]] - shift
    works = kept[:, COL["run_time"]]
    walltimes = np.where(req_time > 0, req_time, np.nan)
    valid = rigid_valid(submits, works, nodes, walltimes)
    for i in np.flatnonzero(~valid).tolist():
        try:  # the first record JobSpec refuses, named by file and line
            JobSpec(
                id=int(ids[i]),
                submit=float(submits[i]),
                work=float(works[i]),
                nodes=int(nodes[i]),
                walltime=float(walltimes[i]) if walltimes[i] > 0 else None,
            )
        except SpecError as e:
            raise WorkloadError(f"{_where(trace, int(source[i]))}: {e}") from None
    jobs = rigid_specs(
        ids,
        submits,
        works,
        nodes,
        walltimes,
        kept[:, COL["user_id"]].astype(np.int64),
        kept[:, COL["group_id"]].astype(np.int64),
    )
    if platform is None:
        units, machine = _machine_units(trace, ppn, allocation, nodes, source)
        platform = Platform.single(units, cores=1 if allocation == "processor" else ppn)
    else:
        _check_header(trace)
        machine = "the platform given"
    _check_fit(trace, source, kept_procs, nodes, allocation, ppn, platform, machine)
    params: dict[str, JsonValue] = {}
    bad = trace.report.skipped if trace.report is not None else ()
    if bad:
        skipped[BAD_LINE] = len(bad)
        params["bad_lines"] = [p.line for p in bad[:BAD_LINES_LISTED]]
    step = ProvenanceStep.make(
        "from_swf",
        path=Path(trace.path).name,
        allocation=allocation,
        procs_per_node=ppn,
        time_shift=shift,
        records=len(rows) + len(bad),
        skipped=dict(sorted(skipped.items())),
        **params,
    )
    # Sorted by submission time and ids checked unique above: no per-job checks again.
    return Workload._checked(
        name=name or Path(trace.path).name,
        jobs=tuple(jobs),
        platform=platform,
        header=trace.header,
        provenance=(step,),
        rows=np.ascontiguousarray(kept, dtype=np.float64).reshape(-1, N_FIELDS),
        skipped=tuple(sorted(skipped.items())),
    )


def read_workload(
    path: str | os.PathLike[str],
    *,
    strict: bool = True,
    procs_per_node: int | None = None,
    name: str | None = None,
    allocation: Allocation = DEFAULT_ALLOCATION,
    max_bytes: int | None = None,
) -> Workload:
    """Read a workload file into a workload (its records, then :func:`trace_to_workload`).

    SWF, a ``sacct --parsable2`` dump or a Batsim JSON workload, recognized by
    :func:`hpcgym.workloads.formats.file_format` and read with that format's defaults
    (:func:`hpcgym.workloads.formats.read_trace`).

    ``allocation`` is ``"processor"`` (default, as in SWF) or ``"node"`` (whole nodes of
    ``procs_per_node`` processors, rounded up); see :func:`trace_to_workload`. ``max_bytes``
    bounds the text read (see :func:`hpcgym.workloads.swf.read_swf`).
    """
    allocation = check_allocation(allocation)
    trace = read_trace(path, strict=strict, max_bytes=max_bytes)
    return trace_to_workload(trace, name=name, procs_per_node=procs_per_node, allocation=allocation)


def workload_to_trace(workload: Workload) -> SwfTrace:
    """SWF records for a workload's jobs.

    Fields the jobs define (id, submit, run time, requested time, user, group) come from the
    jobs; the others from the workload's source records when it has them, else ``-1``. Sizes are
    the source records' processors when present, else ``nodes * cores`` of the platform's first
    cluster. Elasticity annotations have no SWF field: they are recorded in the provenance.
    """
    n = len(workload)
    if workload.rows is not None:
        data = workload.rows.copy()
    else:
        data = np.full((n, N_FIELDS), -1.0)
        procs = np.array([j.nodes for j in workload.jobs], dtype=np.float64)
        procs *= workload.platform.clusters[0].cores
        data[:, COL["alloc_procs"]] = procs
        data[:, COL["req_procs"]] = procs
        data[:, COL["status"]] = 1
    jobs = workload.jobs
    data[:, COL["job_id"]] = [j.id for j in jobs]
    data[:, COL["submit_time"]] = [j.submit for j in jobs]
    data[:, COL["run_time"]] = [j.work for j in jobs]
    data[:, COL["req_time"]] = [-1.0 if j.walltime is None else j.walltime for j in jobs]
    data[:, COL["user_id"]] = [j.user for j in jobs]
    data[:, COL["group_id"]] = [j.group for j in jobs]
    return SwfTrace(workload.header, data)


def provenance_header(workload: Workload, command: str | None = None) -> SwfHeader:
    """The workload's header plus ``hpcgym-*`` lines: version, command, seed and provenance.

    ``command`` defaults to the running process's command line.
    """
    base = workload.header.without_prefix(HPCGYM_PREFIX)
    argv = sys.argv or ["python"]
    cmd = command if command is not None else shlex.join([Path(argv[0]).name, *argv[1:]])
    pairs = [
        (f"{HPCGYM_PREFIX}-version", __version__),
        (f"{HPCGYM_PREFIX}-workload", workload.name),
        (f"{HPCGYM_PREFIX}-command", cmd),
        (f"{HPCGYM_PREFIX}-seed", str(workload.seed)),
    ]
    pairs += [(f"{HPCGYM_PREFIX}-step", s.to_json()) for s in workload.provenance]
    if workload.header.max_nodes is None and workload.header.max_procs is None:
        nodes = workload.platform.total_nodes
        pairs += [
            ("MaxNodes", str(nodes)),
            ("MaxProcs", str(nodes * workload.platform.clusters[0].cores)),
        ]
    return base.with_entries(pairs)


def is_batsim_path(path: str | os.PathLike[str]) -> bool:
    """Whether a workload written to ``path`` is a Batsim JSON workload (its name ends .json)."""
    return str(path).lower().endswith(SUFFIXES["batsim"][0])


def write_workload(
    workload: Workload,
    path: str | os.PathLike[str],
    *,
    command: str | None = None,
    profile: str = "delay",
    speed: float | None = None,
) -> Path:
    """Write a workload as SWF, or as a Batsim JSON workload when ``path`` ends in ``.json``.

    The SWF header (kept in the JSON's ``hpcgym`` object) records version, command, seed and
    provenance. Reading the file back with :func:`read_workload` gives the same rigid jobs
    (sizes, times, estimates, users); elasticity annotations are re-made from the provenance (a
    named set and its seed), since neither format has a field for them. ``profile`` and
    ``speed`` choose the Batsim profiles (see :func:`hpcgym.workloads.batsim.batsim_document`).
    """
    trace = workload_to_trace(workload)
    header = provenance_header(workload, command)
    if not is_batsim_path(path):
        return write_swf(SwfTrace(header, trace.data), path)
    sizes = np.array([j.nodes for j in workload.jobs], dtype=np.int64)
    document = batsim_document(
        SwfTrace(header, trace.data, path=workload.name),
        sizes,
        workload.platform.total_nodes,
        profile=profile,
        speed=speed,
        command=command,
    )
    return write_batsim(document, path)
