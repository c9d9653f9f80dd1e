"""Which of hpcgym's modules run compiled, and a warning when a compiled one is stale.

``setup.py`` compiles the simulator's and the env step's hot modules with mypyc where it can
(``COMPILED`` there lists the files of ``COMPILED_MODULES`` here; a test keeps the two lists
equal). The pure-Python modules behave the same, only slower.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

COMPILED_MODULES = (
    "hpcgym.sim.engine",
    "hpcgym.sim.simulator",
    "hpcgym.sim.job",
    "hpcgym.sim.joblist",
    "hpcgym.sim.nodes",
    "hpcgym.baselines.classic",
    "hpcgym.baselines.availability",
    "hpcgym.sim.batch",
    "hpcgym.envs.ledger",
    "hpcgym.envs.observations",
    "hpcgym.envs.menu",
    "hpcgym.envs.commands",
    "hpcgym.envs.capacity",
    "hpcgym.envs.sizes",
    "hpcgym.envs.reserve",
    "hpcgym.envs.rewards",
    "hpcgym.sim.planning",
)

FORMERLY_COMPILED = ("hpcgym.baselines.profile",)
"""Modules once compiled, now pure-Python aliases of a renamed one (``profile`` became
``availability``). An extension of theirs left over from an older build would be imported
instead of the alias, and its code is no longer in the group's library: it is reported stale."""

GROUP_LIBRARY = "hpcgym__mypyc"
"""The shared library of the mypyc group (``setup.py``'s ``group_name``), beside the package."""

NATIVE_MODULES = {
    "hpcgym.sim._batchcore": "hpcgym/sim/_batchcore.c",
    "hpcgym.sim._idleruns": "hpcgym/sim/_idleruns.c",
    "hpcgym.sim._eventheap": "hpcgym/sim/_eventheap.c",
}
"""C extensions written in C (not by mypyc), by module, with their source file."""

_ROOT = Path(__file__).resolve().parent.parent


def compiled() -> dict[str, bool]:
    """For each module ``setup.py`` compiles, whether the imported one is a C extension."""
    out = {}
    for name in COMPILED_MODULES:
        path = getattr(importlib.import_module(name), "__file__", None) or ""
        out[name] = not path.endswith(".py")
    for name in NATIVE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            out[name] = False
        else:
            out[name] = True
    return out


def stale_extensions(root: Path = _ROOT) -> list[str]:
    """Modules whose ``.py`` source is newer than a compiled extension beside it.

    Python imports the extension, not the source, so an edit there has no effect until the
    package is built again. A module of :data:`FORMERLY_COMPILED` with an extension beside it
    is stale too, whatever the times.
    """
    stale = []
    sources = {n: root.joinpath(*n.split(".")).with_suffix(".py") for n in COMPILED_MODULES}
    sources.update({name: root / path for name, path in NATIVE_MODULES.items()})
    # A mypyc module's code lives in the group's shared library beside the package; its own
    # extension is a small shim that a rebuild leaves as it was when its text did not change.
    groups = [root / f"{GROUP_LIBRARY}{suffix}" for suffix in EXTENSION_SUFFIXES]
    group_built = max((g.stat().st_mtime for g in groups if g.exists()), default=0.0)
    for name, source in sources.items():
        for suffix in EXTENSION_SUFFIXES:
            ext = source.with_name(name.rsplit(".", 1)[1] + suffix)
            if not (ext.exists() and source.exists()):
                continue
            built = ext.stat().st_mtime
            if name in COMPILED_MODULES:
                built = max(built, group_built)
            if source.stat().st_mtime > built:
                stale.append(name)
                break
    for name in FORMERLY_COMPILED:
        folder = root.joinpath(*name.split(".")[:-1])
        leaf = name.rsplit(".", 1)[1]
        if any((folder / f"{leaf}{suffix}").exists() for suffix in EXTENSION_SUFFIXES):
            stale.append(name)
    return stale


def warn_if_stale(root: Path = _ROOT) -> None:
    """Warn, naming the modules, when edited sources hide behind older compiled extensions."""
    stale = stale_extensions(root)
    leftover = [name for name in stale if name in FORMERLY_COMPILED]
    stale = [name for name in stale if name not in FORMERLY_COMPILED]
    if leftover:
        warnings.warn(
            f"hpcgym: {', '.join(leftover)} is no longer compiled, but an extension of it is "
            "left over from an older build and Python imports it instead of the source: "
            "delete that extension file",
            RuntimeWarning,
            stacklevel=2,
        )
    if stale:
        warnings.warn(
            f"hpcgym: {', '.join(stale)} changed since it was compiled, and Python runs the "
            "compiled extension, not the edited source: reinstall (`pip install -e .`), or "
            "reinstall with HPCGYM_COMPILE=0 to work on pure Python",
            RuntimeWarning,
            stacklevel=2,
        )
