"""``hpcgym workloads import slurm|batsim`` and ``hpcgym workloads export batsim``."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from hpcgym._version import __version__
from hpcgym.cli_checks import writable_file
from hpcgym.errors import HpcGymError
from hpcgym.workloads.batsim import DEFAULT_SPEED, PROFILES, read_batsim
from hpcgym.workloads.convert import (
    ALLOCATIONS,
    DEFAULT_ALLOCATION,
    is_batsim_path,
    read_workload,
    trace_to_workload,
    write_workload,
)
from hpcgym.workloads.header import HPCGYM_PREFIX
from hpcgym.workloads.slurm import SACCT_COMMAND, SACCT_FORMAT, UNITS, read_sacct
from hpcgym.workloads.stats import describe, format_stats
from hpcgym.workloads.swf import SwfTrace, write_swf
from hpcgym.workloads.workload import Workload


def command_line(args: argparse.Namespace) -> str:
    """The command line that ran, for the written file's header."""
    argv = getattr(args, "argv", None)
    return shlex.join(["hpcgym", *(sys.argv[1:] if argv is None else argv)])


def check_paths(source: str, dest: str) -> None:
    """Refuse to write over the file being read; check the destination can be written."""
    writable_file(dest)
    if Path(dest).exists() and Path(dest).resolve() == Path(source).resolve():
        raise HpcGymError(f"{dest} is the file being read; write to another file")


def wrote_message(dest: str, existed: bool) -> str:
    """``wrote DEST``, or ``replaced DEST`` when a file was there before."""
    return f"{'replaced' if existed else 'wrote'} {dest}"


def print_skipped(w: Workload) -> None:
    """The records that are not jobs, by reason."""
    for reason, count in w.skipped:
        print(f"skipped       {count} x {reason}")


def _write_trace(trace: SwfTrace, dest: str, args: argparse.Namespace) -> Workload:
    """Check the records make jobs, then write every record (SWF) or the jobs (Batsim JSON)."""
    w = trace_to_workload(trace)
    existed = Path(dest).exists()
    for note in trace.report.notes if trace.report is not None else ():
        print(f"note          {note}")
    if trace.report is not None:
        for problem in trace.report.skipped:
            print(f"bad line      {problem.describe(trace.path)}")
    if is_batsim_path(dest):
        write_workload(w, dest, command=command_line(args))
    else:
        header = trace.header.with_entries(
            [
                (f"{HPCGYM_PREFIX}-version", __version__),
                (f"{HPCGYM_PREFIX}-command", command_line(args)),
            ]
        )
        write_swf(SwfTrace(header, trace.data, trace.lines, trace.path), dest)
    print(format_stats(describe(w)))
    print_skipped(w)
    print(wrote_message(dest, existed))
    return w


def _cmd_import_slurm(args: argparse.Namespace) -> int:
    check_paths(args.dump, args.dest)
    fields = args.fields.split(",") if args.fields else None
    trace = read_sacct(
        args.dump,
        strict=not args.lenient,
        unit=args.unit,
        machine=args.machine,
        timezone_name=args.timezone,
        delimiter=args.delimiter,
        fields=fields,
    )
    _write_trace(trace, args.dest, args)
    return 0


def _cmd_import_batsim(args: argparse.Namespace) -> int:
    check_paths(args.source, args.dest)
    _write_trace(read_batsim(args.source, speed=args.speed), args.dest, args)
    return 0


def _cmd_export_batsim(args: argparse.Namespace) -> int:
    check_paths(args.source, args.dest)
    if not is_batsim_path(args.dest):
        raise HpcGymError(f"{args.dest}: a Batsim workload is a .json file; name it so")
    w = read_workload(
        args.source,
        strict=not args.lenient,
        allocation=args.allocation,
        procs_per_node=args.procs_per_node,
    )
    existed = Path(args.dest).exists()
    write_workload(w, args.dest, command=command_line(args), profile=args.profile, speed=args.speed)
    print(format_stats(describe(w)))
    print_skipped(w)
    print(wrote_message(args.dest, existed))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``import`` and ``export`` to the ``workloads`` command's sub-commands."""
    raw = argparse.RawDescriptionHelpFormatter
    lenient_help = "skip malformed lines (listed) instead of stopping at the first one"
    imp = sub.add_parser(
        "import",
        help="turn a Slurm sacct dump or a Batsim workload into SWF "
        "(e.g. hpcgym workloads import slurm jobs.sacct jobs.swf)",
        description="Read another system's workload and write SWF (or Batsim JSON, for a "
        "DEST ending in .json), every choice recorded in the header.",
        epilog="examples:\n  hpcgym workloads import slurm jobs.sacct jobs.swf\n"
        "  hpcgym workloads import batsim workload.json jobs.swf",
        formatter_class=raw,
    )
    kinds = imp.add_subparsers(dest="import_kind", required=True, metavar="FORMAT")
    slurm = kinds.add_parser(
        "slurm",
        help="a sacct --parsable2 dump (e.g. hpcgym workloads import slurm jobs.sacct jobs.swf)",
        description="Read a Slurm accounting dump, one record per job (steps are parts of "
        "their jobs; array tasks are jobs), and write SWF. Jobs that never ran or had not "
        "ended stay in the SWF with run time -1 and are counted. Make the dump with:\n\n  "
        f"{SACCT_COMMAND}\n\nRequired columns: JobID, State, Submit, Start, End (or Elapsed), "
        "and NCPUS (or NNodes with --unit node); the others are used when present.",
        epilog="examples:\n  hpcgym workloads import slurm jobs.sacct jobs.swf\n"
        "  hpcgym workloads import slurm jobs.sacct jobs.swf --unit node --machine 120 "
        "--timezone Europe/Amsterdam\n"
        "  hpcgym simulate --scheduler easy --workload jobs.swf",
        formatter_class=raw,
    )
    slurm.add_argument("dump", help="the sacct output (.gz is read too), e.g. jobs.sacct")
    slurm.add_argument("dest", help="the SWF file to write (.gz compresses; .json: Batsim)")
    slurm.add_argument(
        "--unit",
        choices=UNITS,
        default="cpu",
        help="what SWF's processors are: the jobs' CPUs (NCPUS, default) or nodes (NNodes)",
    )
    slurm.add_argument(
        "--machine",
        type=int,
        metavar="N",
        help="the machine's CPUs (or nodes with --unit node); default: the most the jobs held "
        "at once, a lower bound (e.g. --machine 4096)",
    )
    slurm.add_argument(
        "--timezone",
        default="UTC",
        metavar="TZ",
        help="the zone sacct printed its times in (default UTC; e.g. Europe/Amsterdam)",
    )
    slurm.add_argument(
        "--delimiter", default="|", help="sacct's --delimiter, if one was given (default |)"
    )
    slurm.add_argument(
        "--fields",
        metavar="LIST",
        help="the --format column names of a dump made with --noheader "
        f"(e.g. {SACCT_FORMAT.split(',NNodes')[0]},...)",
    )
    slurm.add_argument("--lenient", action="store_true", help=lenient_help)
    slurm.set_defaults(func=_cmd_import_slurm)

    speed_help = (
        "flop/s of one host, turning parallel_homogeneous cpu amounts into seconds "
        "(default: the speed the file records)"
    )
    bat = kinds.add_parser(
        "batsim",
        help="a Batsim JSON workload (e.g. hpcgym workloads import batsim w.json w.swf)",
        description="Read a Batsim JSON workload (delay and parallel_homogeneous profiles) "
        "and write SWF.",
        epilog="example:\n  hpcgym workloads import batsim workload.json jobs.swf --speed 1e9",
        formatter_class=raw,
    )
    bat.add_argument("source", help="the Batsim workload, e.g. workload.json")
    bat.add_argument("dest", help="the SWF file to write (.gz compresses)")
    bat.add_argument("--speed", type=float, metavar="FLOPS", help=speed_help)
    bat.set_defaults(func=_cmd_import_batsim)

    exp = sub.add_parser(
        "export",
        help="write a workload file as a Batsim JSON workload "
        "(e.g. hpcgym workloads export batsim jobs.swf jobs.json)",
        description="Write a workload file's jobs in another system's format.",
        epilog="example:\n  hpcgym workloads export batsim jobs.swf jobs.json",
        formatter_class=raw,
    )
    targets = exp.add_subparsers(dest="export_kind", required=True, metavar="FORMAT")
    ebat = targets.add_parser(
        "batsim",
        help="a Batsim JSON workload (e.g. hpcgym workloads export batsim jobs.swf jobs.json)",
        description="Write the jobs of a workload file (SWF, sacct dump or Batsim JSON) as a "
        "Batsim JSON workload: res is each job's size in the platform's units, nb_res the "
        "platform's size; the other SWF fields and the header ride along for the way back.",
        epilog="examples:\n  hpcgym workloads export batsim jobs.swf jobs.json\n"
        "  hpcgym workloads export batsim jobs.swf jobs.json --profile parallel_homogeneous "
        "--speed 1e9",
        formatter_class=raw,
    )
    ebat.add_argument("source", help="the workload file to read, e.g. jobs.swf")
    ebat.add_argument("dest", help="the JSON file to write, e.g. jobs.json")
    ebat.add_argument(
        "--profile",
        choices=PROFILES,
        default="delay",
        help="delay: run times in seconds (default); parallel_homogeneous: flops at --speed",
    )
    ebat.add_argument(
        "--speed",
        type=float,
        metavar="FLOPS",
        help=f"host speed for parallel_homogeneous (default {DEFAULT_SPEED:g} flop/s)",
    )
    ebat.add_argument(
        "--allocation",
        choices=ALLOCATIONS,
        default=DEFAULT_ALLOCATION,
        help="res counts processors (default) or whole nodes",
    )
    ebat.add_argument(
        "--procs-per-node", type=int, metavar="K", help="processors per node (default: header)"
    )
    ebat.add_argument("--lenient", action="store_true", help=lenient_help)
    ebat.set_defaults(func=_cmd_export_batsim)
