"""Named, versioned workload sets: the same name, seed and options give the same jobs anywhere.

A set is a recipe: which trace file or generator, then which transforms, with a fixed order of
random draws. Names are ``family/name-vN``; a recipe never changes once published, a changed
recipe gets a new version. Options a set accepts are listed in its ``options`` with defaults;
they and the seed are recorded in the workload's provenance. Each set declares the unit its
sizes count, ``allocation``: ``"processor"`` (SWF's unit, the default) or ``"node"`` (whole
nodes, where the set's source or paper used them).

Trace files are looked up by :func:`hpcgym.workloads.catalog.find`. Anywhere a set name is
accepted, the path (or trace file name) of a workload file works too (SWF, a sacct dump, a
Batsim JSON workload): it loads as an ad-hoc set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hpcgym.errors import WorkloadError
from hpcgym.workloads import catalog
from hpcgym.workloads.convert import DEFAULT_ALLOCATION, Allocation, check_allocation
from hpcgym.workloads.formats import FORMATS, SUFFIXES
from hpcgym.workloads.workload import ProvenanceStep, Workload

ENV_VAR = catalog.WORKLOADS_ENV
"""Environment variable naming a folder of trace files searched before the bundled ones."""

Builder = Callable[[int, Mapping[str, Any]], Workload]


def workloads_dir() -> Path:
    """The first folder trace files are looked up in.

    ``$HPCGYM_WORKLOADS`` when set (it must exist), else the traces bundled with the package.
    :func:`hpcgym.workloads.catalog.search_dirs` lists every folder searched, in order.
    """
    user = catalog.user_dir()
    return user if user is not None else catalog.bundled_dir()


def resolve_file(file: str | Path) -> Path:
    """The trace file ``file`` names.

    An absolute path as it is, a relative path from the current folder, or a bare file name
    looked up with :func:`catalog.find` (in the trace folders).

    Raises:
        WorkloadError: A path (with a folder in it) that names no file.
    """
    p = Path(file).expanduser()
    if p.is_absolute():
        return p
    if len(p.parts) > 1 or str(file).startswith("."):
        if not p.is_file():
            where = "is a folder, not a file" if p.is_dir() else "does not exist"
            raise WorkloadError(
                f"no such trace file: {file} ({p.resolve()} {where}); check the path, or "
                "give a bare file name to look it up in the trace folders"
            )
        return p.resolve()
    return catalog.find(str(file))


def is_trace_path(name: str) -> bool:
    """Whether ``name`` names a workload file rather than a workload set.

    An existing file, or a name ending in ``.swf``, ``.sacct`` or ``.json`` (each also with
    ``.gz``; found as a path or in the trace folders): SWF, a sacct dump, a Batsim workload.
    """
    endings = tuple(e for fmt in FORMATS for e in SUFFIXES[fmt])
    return name.lower().endswith(endings) or Path(name).expanduser().is_file()


@dataclass(frozen=True, slots=True)
class WorkloadSet:
    """A named recipe for a workload.

    Attributes:
        name: ``family/name-vN``.
        description: One line.
        build: ``build(seed, options) -> Workload``.
        options: Accepted options and their defaults.
        file: The trace file it reads, if any (a name in the workloads folder, or a path).
        allocation: The unit its job sizes count: ``"processor"`` (one processor per unit of
            the platform) or ``"node"`` (whole nodes). An ad-hoc file set takes it as an
            option instead.
    """

    name: str
    description: str
    build: Builder
    options: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    allocation: Allocation = DEFAULT_ALLOCATION

    def __post_init__(self) -> None:
        check_allocation(self.allocation)

    def load(self, seed: int = 0, **options: Any) -> Workload:
        """Build the workload for ``seed`` and ``options`` (unknown options are an error)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise WorkloadError(
                f"workload set {self.name!r} has no option(s) {unknown}; it accepts "
                f"{sorted(self.options) or 'none'}"
            )
        merged = {**self.options, **options}
        w = self.build(seed, merged)
        step = ProvenanceStep.make("set", seed=seed, name=self.name, **merged)
        return replace(w, name=self.name, provenance=(*w.provenance, step))


_SETS: dict[str, WorkloadSet] = {}


_path_sets: list[Callable[[str], WorkloadSet]] = []
"""The maker of ad-hoc sets over a path (``hpcgym.workloads.sets.file_set`` registers itself)."""


def register_path_sets(make: Callable[[str], WorkloadSet]) -> None:
    """Make :func:`get` answer a trace path with ``make(path)`` (the set module's file set)."""
    _path_sets[:] = [make]


def register(ws: WorkloadSet) -> WorkloadSet:
    """Add a set; its name must be new and look like ``family/name-vN``."""
    family, _, rest = ws.name.partition("/")
    if not family or "-v" not in rest or not rest.rsplit("-v", 1)[1].isdigit():
        raise WorkloadError(f"workload set name {ws.name!r} must look like family/name-vN")
    if ws.name in _SETS:
        raise WorkloadError(f"workload set {ws.name!r} is already registered")
    _SETS[ws.name] = ws
    return ws


def get(name: str) -> WorkloadSet:
    """The set called ``name``, or an ad-hoc set reading the workload file ``name`` (a path)."""
    try:
        return _SETS[name]
    except KeyError:
        if is_trace_path(name) and _path_sets:
            return _path_sets[0](name)
        raise WorkloadError(
            f"no workload set {name!r}; known sets: {', '.join(sorted(_SETS))} (or give the "
            "path of a workload file: SWF, a sacct --parsable2 dump or a Batsim JSON workload)"
        ) from None


def names() -> list[str]:
    """Every registered set name, sorted."""
    return sorted(_SETS)


def load(name: str, seed: int = 0, **options: Any) -> Workload:
    """Build the named set's workload: ``load("swf/sdsc-sp2-v0")``, ``load(name, seed=3)``."""
    return get(name).load(seed, **options)
