"""What produced a result: the git commit, the library versions, the machine, the time.

Shared by ``hpcgym bench`` (``run.json`` of a bench run, :mod:`hpcgym.bench.runinfo`) and
``hpcgym train`` (``run.json`` of a training run and the agent card's ``training`` record).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from hpcgym._version import __version__

LIBRARIES = (
    "numpy",
    "pandas",
    "gymnasium",
    "matplotlib",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "ray",
    "pyarrow",
)
"""Libraries whose versions a record names (``None`` when not installed)."""


def git_commit() -> str | None:
    """The commit of the git checkout hpcgym is imported from (``+dirty`` when changed)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def versions() -> dict[str, str | None]:
    """Python's and the libraries' versions (``None``: not installed); nothing is imported."""
    out: dict[str, str | None] = {"python": sys.version.split()[0], "hpcgym": __version__}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict[str, Any]:
    """The machine: operating system, architecture, processor and CPU count."""
    return {
        "system": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpus": os.cpu_count(),
    }


def now_utc() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
