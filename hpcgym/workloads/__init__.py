"""Workloads: SWF traces in, elastic workloads out.

Read a trace with :func:`read_workload`, or build a named set with :func:`load`; transform with
:mod:`hpcgym.workloads.transforms`, annotate with :func:`annotate_elastic` and the DFRS rules,
generate with the Lublin-Feitelson, Klein-Perez and KOALA generators. See ``docs/workloads.md``.
"""

from hpcgym.workloads import rlsched as _rlsched  # noqa: F401  (registers the rlsched/ sets)
from hpcgym.workloads import sets as _sets  # noqa: F401  (registers the built-in sets)
from hpcgym.workloads.convert import (
    read_workload,
    trace_to_workload,
    workload_to_trace,
    write_workload,
)
from hpcgym.workloads.dfrs import annotate_dfrs, hpc2n_dfrs
from hpcgym.workloads.elastic import ElasticConfig, annotate_elastic
from hpcgym.workloads.evolving import KleinParams, generate_klein
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.koala import generate_koala
from hpcgym.workloads.lublin import generate_lublin
from hpcgym.workloads.registry import WorkloadSet, get, load, names, register, workloads_dir
from hpcgym.workloads.stats import describe, format_stats, offered_load
from hpcgym.workloads.swf import FIELDS, ParseReport, SwfTrace, read_swf, write_swf
from hpcgym.workloads.workload import ProvenanceStep, Workload

__all__ = [
    "FIELDS",
    "ElasticConfig",
    "KleinParams",
    "ParseReport",
    "ProvenanceStep",
    "SwfHeader",
    "SwfTrace",
    "Workload",
    "WorkloadSet",
    "annotate_dfrs",
    "annotate_elastic",
    "describe",
    "format_stats",
    "generate_klein",
    "generate_koala",
    "generate_lublin",
    "get",
    "hpc2n_dfrs",
    "load",
    "names",
    "offered_load",
    "read_swf",
    "read_workload",
    "register",
    "trace_to_workload",
    "workload_to_trace",
    "workloads_dir",
    "write_swf",
    "write_workload",
]
