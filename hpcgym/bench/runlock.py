"""One bench run per run folder at a time.

A run holds an exclusive lock on its folder (``flock`` on the folder itself, so nothing is added
to it) from choosing the folder to writing its report; a second ``hpcgym bench`` into the same
folder, a new run or a ``--resume``, is refused while the lock is held. The lock goes with the
process: a run that crashes or is killed leaves no stale lock behind. Without ``fcntl`` (not a
POSIX system) there is no lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hpcgym.folder_lock import exclusive


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold the run folder's exclusive lock in the block; never wait for it.

    Raises:
        SpecError: Another process (or another block of this one) holds the lock.
    """
    with exclusive(
        folder,
        lambda: (
            f"{folder} is in use by another hpcgym bench (it holds the folder's lock): "
            "wait until that run ends, or choose another --run-dir"
        ),
    ):
        yield


def empty_folder(folder: Path) -> None:
    """Delete what ``folder`` holds, keeping the folder itself (and so its lock)."""
    import shutil

    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
