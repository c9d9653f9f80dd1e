"""Named, versioned workload sets: the same name, seed and options give the same jobs anywhere.

A set is a recipe: which trace file or generator, then which transforms, with a fixed order of
random draws. Names are ``family/name-vN``; a recipe never changes once published, a changed
recipe gets a new version. Options a set accepts are listed in its ``options`` with defaults;
they and the seed are recorded in the workload's provenance.

Trace files are found in the workloads folder (see :func:`workloads_dir`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hpcgym.errors import WorkloadError
from hpcgym.workloads.workload import ProvenanceStep, Workload

ENV_VAR = "HPCGYM_WORKLOADS"
"""Environment variable naming the folder of trace files."""
_REPO_ROOT = Path(__file__).resolve().parents[2]

Builder = Callable[[int, Mapping[str, Any]], Workload]


def candidate_dirs() -> list[Path]:
    """Where :func:`workloads_dir` looks, in order, when ``$HPCGYM_WORKLOADS`` is unset."""
    out: list[Path] = []
    for base in (Path.cwd(), _REPO_ROOT):
        for parent in (base, *base.parents):
            for c in (parent / "shared" / "workloads", parent.parent / "shared" / "workloads"):
                if c not in out:
                    out.append(c)
            if (parent / "pyproject.toml").exists():
                break
    return out


def workloads_dir() -> Path:
    """The folder of trace files.

    ``$HPCGYM_WORKLOADS`` when set (it must exist). Otherwise the first existing
    ``shared/workloads`` found from the current directory, then from the hpcgym source tree,
    looking in each folder and beside it (``../shared/workloads``) up to the project root
    (the first folder with a ``pyproject.toml``).

    Raises:
        WorkloadError: No such folder; the message lists the places tried.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise WorkloadError(f"${ENV_VAR} is {env!r}, which is not a folder; fix or unset it")
        return p
    tried = candidate_dirs()
    for c in tried:
        if c.is_dir():
            return c
    raise WorkloadError(
        "cannot find the workloads folder; set $"
        + ENV_VAR
        + " to the folder holding the SWF traces. Tried: "
        + ", ".join(str(c) for c in tried)
    )


def resolve_file(file: str) -> Path:
    """An absolute path, or a file name inside :func:`workloads_dir`."""
    p = Path(file).expanduser()
    if p.is_absolute():
        return p
    return workloads_dir() / p


@dataclass(frozen=True, slots=True)
class WorkloadSet:
    """A named recipe for a workload.

    Attributes:
        name: ``family/name-vN``.
        description: One line.
        build: ``build(seed, options) -> Workload``.
        options: Accepted options and their defaults.
        file: The trace file it reads, if any (a name in the workloads folder, or a path).
    """

    name: str
    description: str
    build: Builder
    options: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None

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
    """The set called ``name``."""
    try:
        return _SETS[name]
    except KeyError:
        raise WorkloadError(
            f"no workload set {name!r}; known sets: {', '.join(sorted(_SETS))}"
        ) from None


def names() -> list[str]:
    """Every registered set name, sorted."""
    return sorted(_SETS)


def load(name: str, seed: int = 0, **options: Any) -> Workload:
    """Build the named set's workload: ``load("swf/sdsc-sp2-v0")``, ``load(name, seed=3)``."""
    return get(name).load(seed, **options)
