from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcgym.workloads.registry import workloads_dir


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared workloads folder, found the way the package finds it."""
    return workloads_dir()


def readme_table(folder: Path) -> dict[str, tuple[int, str, str]]:
    """``file -> (jobs, machine, notes)`` from the folder's README table."""
    out = {}
    for line in (folder / "README.md").read_text().splitlines():
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([\d,]+)\s*\|([^|]*)\|([^|]*)\|", line)
        if m:
            out[m.group(1)] = (int(m.group(2).replace(",", "")), m.group(3), m.group(4))
    return out


@pytest.fixture(scope="session")
def traces(shared_dir: Path) -> dict[str, tuple[int, str, str]]:
    table = readme_table(shared_dir)
    assert table, "the shared workloads README lists no traces"
    return table
