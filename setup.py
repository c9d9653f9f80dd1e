"""Build hpcgym; the simulator's hot modules are compiled to C with mypyc where possible.

The modules in ``COMPILED`` (listed once, in ``hpcgym/_build.py``) are plain, fully typed
Python: mypyc (part of mypy) turns each into a C extension at install time, which runs the same
code 1.5-2x faster. ``NATIVE`` lists two small C extensions of their own: the batch core (whole
FCFS and EASY runs of rigid jobs; without it those runs take the event loop, with the same
results) and the idle runs of ``hpcgym.sim.nodes`` (without it, its Python twin).
``HPCGYM_COMPILE`` in the environment chooses: unset (or ``auto``), compile where possible and
otherwise install pure Python, which behaves the same, only slower; ``1``, compile or fail (CI
uses it); ``0``, pure Python. ``hpcgym.compiled()`` tells which you have.

After editing a compiled module, reinstall (``pip install -e .``): Python imports the built
extension before the ``.py`` beside it, and ``hpcgym`` warns when a source is newer than its
extension.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from setuptools import Extension, setup


def _build_lists() -> tuple[list[str], dict[str, str]]:
    """The compiled modules' source files, read from ``hpcgym/_build.py`` (their one list).

    The file is loaded by path, not imported as ``hpcgym._build``: importing the package would
    run ``hpcgym/__init__.py``, and the build must not depend on what the package imports.
    """
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("_hpcgym_build", here / "hpcgym" / "_build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    files = [name.replace(".", "/") + ".py" for name in build.COMPILED_MODULES]
    return files, dict(build.NATIVE_MODULES)


COMPILED, NATIVE = _build_lists()
"""The mypyc-compiled modules' files, and the C extensions written in C by module with their
source (the batch core, ``hpcgym.sim.batch``, and the idle runs, ``hpcgym.sim.nodes``)."""


# setuptools runs this file several times per install; only these commands build extensions
# (the others, for metadata, need not pay for a type check and C generation).
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "install", "develop"}


def ext_modules() -> list:
    """The mypyc extensions, or none (pure Python) when compilation is off or impossible."""
    mode = os.environ.get("HPCGYM_COMPILE", "auto").strip().lower()
    if mode not in ("auto", "", "0", "1"):
        sys.exit(f"hpcgym: HPCGYM_COMPILE is {mode!r}; use 1 (compile), 0 (pure Python) or auto")
    if mode == "0" or not BUILDS.intersection(sys.argv[1:]):
        return []
    required = mode == "1"
    try:
        from mypyc.build import mypycify
    except ImportError as e:  # a build without the build-system requirements
        if required:
            raise
        print(f"hpcgym: mypyc is not available ({e}); installing pure Python", file=sys.stderr)
        return []
    try:
        # The compiled modules are checked without numpy, gymnasium, pandas or torch: only
        # their own errors count (``mypy`` in CI checks the whole package with everything).
        # ``--no-site-packages`` keeps it so when they are installed, as in a second install
        # (the README's test command after the main job's): following the imports into their
        # stubs took mypyc from 3 s to 70 s there, and the C it writes is then the same
        # whatever the environment holds.
        flags = [
            "--no-warn-unused-ignores",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--no-site-packages",
        ]
        exts = mypycify(
            [*flags, *COMPILED],
            group_name="hpcgym",
        )
    except (Exception, SystemExit) as e:  # mypyc exits on type errors
        if required:
            raise
        print(f"hpcgym: mypyc could not compile ({e}); installing pure Python", file=sys.stderr)
        return []
    # No contraction of ``a + b * c`` into one fused rounding: the core's areas must round as
    # the engine's Python arithmetic does (GCC and Clang contract by default where FMA exists).
    strict_fp = [] if sys.platform == "win32" else ["-ffp-contract=off"]
    for name, source in NATIVE.items():
        exts.append(Extension(name, [source], extra_compile_args=["-O2", *strict_fp]))
    for ext in exts:
        # Unless required, a missing or failing C compiler leaves the pure Python modules.
        ext.optional = not required
    return exts


setup(ext_modules=ext_modules())
