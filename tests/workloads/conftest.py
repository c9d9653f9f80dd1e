from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcgym.workloads import catalog


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The folder of the traces bundled with the package."""
    return catalog.bundled_dir()


def readme_table(folder: Path) -> dict[str, tuple[int, str, str]]:
    """``file -> (jobs, machine, notes)`` from the folder's README table."""
    out = {}
    for line in (folder / "README.md").read_text().splitlines():
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([\d,]+)\s*\|([^|]*)\|([^|]*)\|", line)
        if m:
            out[m.group(1)] = (int(m.group(2).replace(",", "")), m.group(3), m.group(4))
    return out


@pytest.fixture(scope="session")
def traces(traces_dir: Path) -> dict[str, tuple[int, str, str]]:
    table = readme_table(traces_dir)
    assert table, "the bundled traces README lists no traces"
    return table
