"""``hpcgym workloads list|fetch|show|convert|generate|import|export``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hpcgym.cli_checks import writable_file
from hpcgym.errors import HpcGymError
from hpcgym.workloads import catalog, cli_formats, registry, transforms
from hpcgym.workloads.convert import (
    ALLOCATIONS,
    BAD_LINE,
    DEFAULT_ALLOCATION,
    read_workload,
    write_workload,
)
from hpcgym.workloads.stats import describe, format_stats
from hpcgym.workloads.workload import Workload


def _options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse, else kept as text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise HpcGymError(f"option {pair!r} must look like key=value")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


_command = cli_formats.command_line


def _load(
    target: str,
    seed: int,
    options: dict[str, Any],
    strict: bool = True,
    allocation: str | None = None,
    procs_per_node: int | None = None,
) -> Workload:
    reading: dict[str, Any] = {}
    if allocation is not None:
        reading["allocation"] = allocation
    if procs_per_node is not None:
        reading["procs_per_node"] = procs_per_node
    if target in registry.names():
        if reading:
            ws = registry.get(target)
            where = f"the file: hpcgym workloads show {ws.file} " if ws.file else "a workload file "
            raise HpcGymError(
                f"{target} declares its unit ({ws.allocation}); --allocation and "
                f"--procs-per-node apply to files: to see another unit, show {where}"
                "--allocation processor|node"
            )
        return registry.load(target, seed, **options)
    if not Path(target).is_file():
        # A trace file name found in the trace folders (or an unknown name: the set's error).
        return registry.load(target, seed, **options, **reading)
    if options:
        raise HpcGymError("--option applies to named sets, not to files")
    return read_workload(target, strict=strict, **reading)


def _print_skipped(w: Workload) -> None:
    """Why records were skipped, and which lines a lenient read could not parse."""
    bad_lines = next(
        (dict(step.params).get("bad_lines") for step in w.provenance if step.op == "from_swf"),
        None,
    )
    for reason, count in w.skipped:
        where = ""
        if reason == BAD_LINE and bad_lines:
            more = ", ..." if count > len(bad_lines) else ""
            where = f" (lines {', '.join(str(n) for n in bad_lines)}{more})"
        print(f"skipped       {count} x {reason}{where}")


def _cmd_list(args: argparse.Namespace) -> int:
    print(
        "Workload sets (`hpcgym workloads show NAME`; the path of an SWF file, a sacct dump "
        "or a Batsim JSON workload works as a name too):"
    )
    width = max(len(n) for n in registry.names())
    for name in registry.names():
        ws = registry.get(name)
        opts = ", ".join(f"{k}={v!r}" for k, v in ws.options.items())
        line = f"  {name:<{width}}  {ws.description}; unit: {ws.allocation}"
        line += f"  [{opts}]" if opts else ""
        if ws.file is not None:
            line += f"  <- {ws.file} ({catalog.where(ws.file)})"
        print(line)
    print()
    print("Trace files (looked up in this order):")
    for folder in catalog.search_dirs():
        print(f"  {folder}")
    traces = (*catalog.BUNDLED, *catalog.ARCHIVE)
    width = max(len(t.key) for t in traces)
    fwidth = max(len(t.file) for t in traces)
    for t in traces:
        jobs = f"{t.jobs:>7,} jobs" if t.jobs else "   ? jobs"
        pin = "" if t.sha256 else ", no pinned SHA-256"
        print(f"  {t.key:<{width}}  {t.file:<{fwidth}}  {jobs}  {catalog.where(t.file)}{pin}")
        print(f"  {'':<{width}}  {t.machine}; from {t.source}")
    print()
    print("Missing traces: `hpcgym workloads fetch KEY`. Please cite the Parallel Workloads")
    print(f"Archive when you use its logs: {catalog.PWA_CITATION}.")
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    from hpcgym.workloads.fetch import fetch

    to = Path(args.to) if args.to else None
    path = fetch(args.name, to=to, mirror=args.mirror, sha256_hex=args.sha256)
    print(f"{path} (SHA-256 checked)")
    if to is not None:
        print(f"use it with --workload {path}, or set ${catalog.WORKLOADS_ENV}={path.parent}")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    w = _load(
        args.target,
        args.seed,
        _options(args.option),
        strict=not args.lenient,
        allocation=args.allocation,
        procs_per_node=args.procs_per_node,
    )
    named = args.target in registry.names()
    print(format_stats(describe(w), registry.get(args.target).allocation if named else None))
    _print_skipped(w)
    if args.provenance:
        for step in w.provenance:
            print(step.to_json())
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    cli_formats.check_paths(args.source, args.dest)  # never over the trace being read
    w = read_workload(
        args.source,
        strict=not args.lenient,
        procs_per_node=args.procs_per_node,
        allocation=args.allocation,
    )
    if args.window is not None:
        w = transforms.window(w, args.window[0], args.window[1])
    if args.random_start is not None:
        w = transforms.random_start(w, args.seed, n_jobs=args.random_start)
    if args.first is not None:
        w = transforms.first(w, args.first)
    if args.load is not None:
        w = transforms.scale_load(w, args.load)
    if args.estimates is not None:
        w = transforms.estimates(w, args.estimates, seed=args.seed)
    existed = Path(args.dest).exists()
    write_workload(w, args.dest, command=_command(args))
    print(format_stats(describe(w)))
    _print_skipped(w)
    print(cli_formats.wrote_message(args.dest, existed))
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    writable_file(args.dest)
    w = registry.load(args.name, args.seed, **_options(args.option))
    existed = Path(args.dest).exists()
    write_workload(w, args.dest, command=_command(args))
    print(format_stats(describe(w)))
    print(cli_formats.wrote_message(args.dest, existed))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``workloads`` command and its sub-commands to a parser's subparsers."""
    raw = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "workloads",
        help="list, inspect, convert and generate workloads (e.g. hpcgym workloads list)",
        description="List, inspect, convert and generate workload sets and SWF files; import "
        "Slurm sacct dumps and Batsim workloads, export Batsim workloads.",
        epilog="examples:\n  hpcgym workloads list\n  hpcgym workloads show swf/kth-sp2-v0\n"
        "  hpcgym workloads convert trace.swf small.swf --first 1000\n"
        "  hpcgym workloads generate elastic/sdsc-sp2-mebf-v0 mebf.swf.gz --seed 1\n"
        "  hpcgym workloads import slurm jobs.sacct jobs.swf\n"
        "  hpcgym workloads export batsim jobs.swf jobs.json",
        formatter_class=raw,
    )
    sub = p.add_subparsers(dest="workloads_command", required=True)

    ls = sub.add_parser(
        "list",
        help="list the named workload sets and the known trace files (e.g. hpcgym workloads list)",
        description="List the named workload sets, with their options, and every known trace "
        "file with where it comes from.",
        epilog="example:\n  hpcgym workloads list",
        formatter_class=raw,
    )
    ls.set_defaults(func=_cmd_list)

    fetch = sub.add_parser(
        "fetch",
        help="download a Parallel Workloads Archive log, checked against its pinned SHA-256 "
        "(e.g. hpcgym workloads fetch ctc-sp2)",
        description="Download a known archive log into the cache folder ($HPCGYM_CACHE, else "
        "the user cache), where workload lookups find it; the SHA-256 is checked before the "
        "file is kept.",
        epilog="examples:\n  hpcgym workloads fetch ctc-sp2\n"
        "  hpcgym workloads fetch ricc --sha256 HEX --to ./traces",
        formatter_class=raw,
    )
    fetch.add_argument("name", help="trace key or file name, as list shows (e.g. ctc-sp2)")
    fetch.add_argument("--to", metavar="DIR", help="download into DIR instead of the cache")
    fetch.add_argument(
        "--mirror",
        metavar="URL",
        help="base address holding the archive's files (also $HPCGYM_PWA_MIRROR), e.g. file:///data",
    )
    fetch.add_argument(
        "--sha256",
        metavar="HEX",
        help="the checksum to expect, for the logs listed without a pinned one",
    )
    fetch.set_defaults(func=_cmd_fetch)

    seed_help = "seed of the set's random choices (default 0; e.g. --seed 3)"
    option_help = "an option of the named set, repeatable (e.g. --option n_jobs=500)"
    lenient_help = "skip malformed SWF lines instead of stopping at the first one"
    allocation_help = (
        f"unit of the jobs' sizes: processor (SWF's; default {DEFAULT_ALLOCATION}) or node "
        "(whole nodes, rounded up: more core-seconds)"
    )
    ppn_help = "processors per node (default: MaxProcs / MaxNodes of the header; e.g. 2)"
    show = sub.add_parser(
        "show",
        help="statistics of a named set or an SWF file (e.g. hpcgym workloads show swf/hpc2n-v0)",
        description="Print the statistics of a named workload set or an SWF file.",
        epilog="examples:\n  hpcgym workloads show swf/kth-sp2-v0 --provenance\n"
        "  hpcgym workloads show trace.swf --lenient",
        formatter_class=raw,
    )
    show.add_argument(
        "target",
        help="a set name (see list) or a workload file (SWF, .sacct dump, Batsim .json), "
        "e.g. swf/kth-sp2-v0",
    )
    show.add_argument("--seed", type=int, default=0, help=seed_help)
    show.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help=option_help
    )
    show.add_argument(
        "--provenance", action="store_true", help="also print how the set was made, step by step"
    )
    show.add_argument("--lenient", action="store_true", help=lenient_help)
    show.add_argument("--allocation", choices=ALLOCATIONS, help=f"{allocation_help} (files only)")
    show.add_argument("--procs-per-node", type=int, metavar="K", help=f"{ppn_help} (files only)")
    show.set_defaults(func=_cmd_show)

    conv = sub.add_parser(
        "convert",
        help="read an SWF file, transform it, write SWF "
        "(e.g. hpcgym workloads convert in.swf out.swf --first 100)",
        description="Read an SWF file, apply the transforms given (in the order listed below), "
        "and write SWF with the command recorded in its header.",
        epilog="examples:\n  hpcgym workloads convert trace.swf first1k.swf --first 1000\n"
        "  hpcgym workloads convert trace.swf.gz loaded.swf --load 0.9 --estimates exact",
        formatter_class=raw,
    )
    conv.add_argument(
        "source", help="the workload file to read: SWF (.gz too), a .sacct dump, a Batsim .json"
    )
    conv.add_argument(
        "dest", help="the SWF file to write (.gz compresses; .json writes a Batsim workload)"
    )
    conv.add_argument(
        "--window",
        type=float,
        nargs=2,
        metavar=("START", "END"),
        help="keep jobs submitted between START and END seconds (e.g. --window 0 86400)",
    )
    conv.add_argument(
        "--random-start",
        type=int,
        metavar="N_JOBS",
        help="keep N_JOBS consecutive jobs from a start drawn with --seed (e.g. 256)",
    )
    conv.add_argument("--first", type=int, metavar="N", help="keep the first N jobs (e.g. 1000)")
    conv.add_argument(
        "--load", type=float, help="scale arrival times to this offered load (e.g. 0.9)"
    )
    conv.add_argument(
        "--estimates",
        choices=["exact", "user", "noisy"],
        help="walltime estimates: exact runtimes, the users' own, or noisy (seeded)",
    )
    conv.add_argument("--seed", type=int, default=0, help=seed_help)
    conv.add_argument("--procs-per-node", type=int, metavar="K", help=ppn_help)
    conv.add_argument(
        "--allocation", choices=ALLOCATIONS, default=DEFAULT_ALLOCATION, help=allocation_help
    )
    conv.add_argument("--lenient", action="store_true", help=lenient_help)
    conv.set_defaults(func=_cmd_convert)

    gen = sub.add_parser(
        "generate",
        help="write a named set as SWF, command and seed recorded "
        "(e.g. hpcgym workloads generate swf/kth-sp2-v0 kth.swf)",
        description="Write a named workload set as SWF, with the command and seed in its header.",
        epilog="example:\n"
        "  hpcgym workloads generate elastic/sdsc-sp2-mebf-v0 mebf.swf.gz --seed 1",
        formatter_class=raw,
    )
    gen.add_argument("name", help="a set name (see list), e.g. elastic/sdsc-sp2-mebf-v0")
    gen.add_argument("dest", help="the SWF file to write (.gz compresses)")
    gen.add_argument("--seed", type=int, default=0, help=seed_help)
    gen.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help=option_help)
    gen.set_defaults(func=_cmd_generate)

    cli_formats.register(sub)
