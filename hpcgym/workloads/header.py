"""SWF header comments: ``; Key: value`` lines, kept verbatim and readable by key.

The header of a trace carries its machine description (``MaxNodes``, ``MaxProcs``, ...) and its
acknowledgements; anything derived from a trace keeps the lines and adds its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hpcgym.errors import WorkloadError

_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]*)\s*:\s?(.*)$")

HPCGYM_PREFIX = "hpcgym"
"""Header keys written by hpcgym start with this (``hpcgym-command``, ``hpcgym-seed``, ...)."""

MAX_MACHINE_UNITS = 2**24
"""The largest machine a header may describe: 16,777,216 processors (or nodes).

The largest machines built have about ten million cores; each unit costs the simulator a few
bytes of state, so a header announcing a billion would only end in a failed allocation."""

MACHINE_KEYS = ("maxnodes", "maxprocs")
"""The header keys that size the machine (lower case; keys match case-insensitively)."""

_WHOLE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True)
class SwfHeader:
    """The comment lines of an SWF file, without their leading ``;``.

    Keys are matched case-insensitively. A line without a key that follows a keyed line (an
    indented continuation) extends that key's value. Repeated keys (``Queue``, ``Note``) keep
    every value in order.
    """

    lines: tuple[str, ...] = ()

    @classmethod
    def from_lines(cls, lines: list[str] | tuple[str, ...]) -> SwfHeader:
        """A header from comment lines (leading ``;`` already removed)."""
        return cls(tuple(lines))

    def entries(self) -> list[tuple[str, str]]:
        """``(key, value)`` pairs in file order, continuation lines joined with newlines."""
        out: list[tuple[str, str]] = []
        for line in self.lines:
            m = _KEY.match(line)
            if m and not line.startswith(("   ", "\t")):
                out.append((m.group(1), m.group(2).strip()))
            elif out and line.strip():
                key, value = out[-1]
                out[-1] = (key, f"{value}\n{line.strip()}")
        return out

    def get_all(self, key: str) -> list[str]:
        """Every value of ``key``, in order."""
        k = key.lower()
        return [v for name, v in self.entries() if name.lower() == k]

    def get(self, key: str) -> str | None:
        """The first value of ``key``, or ``None``."""
        values = self.get_all(key)
        return values[0] if values else None

    def get_int(self, key: str) -> int | None:
        """The first value of ``key`` as an integer, or ``None`` when absent or not a number."""
        value = self.get(key)
        if value is None:
            return None
        try:
            return int(value.split()[0])
        except (ValueError, IndexError):
            return None

    @property
    def max_nodes(self) -> int | None:
        """``MaxNodes``: the machine's node count."""
        return self.get_int("MaxNodes")

    @property
    def max_procs(self) -> int | None:
        """``MaxProcs``: the machine's processor count."""
        return self.get_int("MaxProcs")

    @property
    def max_records(self) -> int | None:
        """``MaxRecords``: the number of records the full log has."""
        return self.get_int("MaxRecords")

    @property
    def max_jobs(self) -> int | None:
        """``MaxJobs``: the number of jobs the full log has."""
        return self.get_int("MaxJobs")

    @property
    def unix_start_time(self) -> int | None:
        """``UnixStartTime``: epoch seconds of time 0."""
        return self.get_int("UnixStartTime")

    @property
    def time_zone_string(self) -> str | None:
        """``TimeZoneString``: the site's time zone name."""
        return self.get("TimeZoneString")

    @property
    def procs_per_node(self) -> int:
        """``MaxProcs / MaxNodes`` when both are given and divide exactly, else 1."""
        nodes, procs = self.max_nodes, self.max_procs
        if nodes and procs and nodes > 0 and procs > 0 and procs % nodes == 0:
            return procs // nodes
        return 1

    def with_entries(self, pairs: list[tuple[str, str]]) -> SwfHeader:
        """A copy with ``Key: value`` lines appended (one line per value line)."""
        extra: list[str] = []
        for key, value in pairs:
            first, *rest = str(value).split("\n") or [""]
            extra.append(f" {key}: {first}")
            extra.extend(f"   {line}" for line in rest)
        return SwfHeader(self.lines + tuple(extra))

    def without_prefix(self, prefix: str = HPCGYM_PREFIX) -> SwfHeader:
        """A copy without the keyed lines (and continuations) whose key starts with ``prefix``."""
        kept: list[str] = []
        dropping = False
        for line in self.lines:
            m = _KEY.match(line)
            if m and not line.startswith(("   ", "\t")):
                dropping = m.group(1).lower().startswith(prefix.lower())
            if not dropping:
                kept.append(line)
        return SwfHeader(tuple(kept))


def _is_continuation(line: str) -> bool:
    return line.startswith(("   ", "\t"))


def check_machine_lines(lines: Sequence[str], numbers: Sequence[int], path: str) -> None:
    """Refuse a ``MaxNodes`` or ``MaxProcs`` line that cannot size a machine.

    Its value must start with a whole number (words may follow) of at most
    :data:`MAX_MACHINE_UNITS`, and a key given twice must give the same number both times.
    ``lines`` are header lines (``;`` removed), ``numbers`` their line numbers in ``path``.

    Raises:
        WorkloadError: Naming the file, the line and what to write instead.
    """
    seen: dict[str, tuple[int, int, str]] = {}
    for line, number in zip(lines, numbers, strict=True):
        m = _KEY.match(line)
        if m is None or _is_continuation(line) or m.group(1).lower() not in MACHINE_KEYS:
            continue
        key, value = m.group(1), m.group(2).strip()
        where = f"{path}:{number}: header {key}: {value}"
        tokens = value.split()
        if not tokens or _WHOLE.fullmatch(tokens[0]) is None:
            raise WorkloadError(
                f"{where} is not a whole number, so the machine's size is unknown. Write it as "
                f"a positive integer ('; {key}: 128'), or remove the line and give the platform."
            )
        size = int(tokens[0])
        if size > MAX_MACHINE_UNITS:
            raise WorkloadError(
                f"{where} is more than the {MAX_MACHINE_UNITS:,} processors or nodes hpcgym "
                "simulates (the largest machines built have about ten million cores). Fix the "
                "header."
            )
        first = seen.setdefault(key.lower(), (number, size, value))
        if first[1] != size:
            raise WorkloadError(
                f"{where} contradicts line {first[0]} ({key}: {first[2]}), so the machine's "
                f"size is ambiguous. Keep one {key} line."
            )
