"""Atomic writes: a result file is complete or untouched, never half-written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hpcgym.atomic import atomic_path, write_text


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "results.csv"
    write_text(target, "old\n")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("half of the new")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["results.csv"]


def test_a_finished_write_replaces_the_file_with_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    write_text(target, "old\n")
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp != target
        tmp.write_text("new\n")
        assert target.read_text() == "old\n"  # untouched until the block ends
    assert target.read_text() == "new\n"
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
