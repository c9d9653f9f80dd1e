"""Which format a workload file is in, and reading any of them as SWF records.

Three formats load wherever a workload file is accepted: SWF, ``sacct --parsable2`` dumps
(:mod:`hpcgym.workloads.slurm`) and Batsim JSON workloads (:mod:`hpcgym.workloads.batsim`).
The name decides first (``.swf``, ``.sacct``, ``.json``, each also with ``.gz``); a file with
another name is recognized by its first line: ``{`` opens JSON, a ``|``-separated line naming a
``JobID`` column is sacct's header, anything else is read as SWF (whose reader then says what is
wrong, by line).
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from hpcgym.workloads.batsim import read_batsim
from hpcgym.workloads.slurm import read_sacct
from hpcgym.workloads.swf import SwfTrace, read_swf
from hpcgym.workloads.swf_input import GZIP_MAGIC

FORMATS = ("swf", "sacct", "batsim")

SUFFIXES = {
    "swf": (".swf", ".swf.gz"),
    "sacct": (".sacct", ".sacct.gz"),
    "batsim": (".json", ".json.gz"),
}
"""The file name endings of each format."""

SNIFF_BYTES = 1 << 16
"""Bytes looked at to recognize a file whose name does not say its format."""


def _head(path: Path) -> bytes:
    """The first bytes of the file (inflated when gzip), or ``b""`` when it cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            if not head.startswith(GZIP_MAGIC):
                return head
            f.seek(0)
            with gzip.GzipFile(fileobj=f, mode="rb") as inflated:
                return inflated.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return b""  # the reader reports it, with the path


def file_format(path: str | os.PathLike[str]) -> str:
    """``"swf"``, ``"sacct"`` or ``"batsim"``: by the name's ending, else by the first line."""
    name = Path(path).name.lower()
    for fmt, endings in SUFFIXES.items():
        if name.endswith(endings):
            return fmt
    text = _head(Path(path)).decode("utf-8", errors="replace").lstrip("\ufeff")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("{"):
        return "batsim"
    if "|" in first and any(f.strip().lower() in ("jobid", "jobidraw") for f in first.split("|")):
        return "sacct"
    return "swf"


def read_trace(
    path: str | os.PathLike[str], *, strict: bool = True, max_bytes: int | None = None
) -> SwfTrace:
    """The records of a workload file in any of :data:`FORMATS`, read with their defaults.

    A sacct dump is read in CPUs, times in UTC, the machine sized by its peak use; a Batsim
    workload's ``parallel_homogeneous`` profiles need the speed its file records. For other
    settings read with :func:`~hpcgym.workloads.slurm.read_sacct` or
    :func:`~hpcgym.workloads.batsim.read_batsim` (or ``hpcgym workloads import``).
    """
    fmt = file_format(path)
    if fmt == "sacct":
        return read_sacct(path, strict=strict, max_bytes=max_bytes)
    if fmt == "batsim":
        return read_batsim(path, max_bytes=max_bytes)
    return read_swf(path, strict=strict, max_bytes=max_bytes)
