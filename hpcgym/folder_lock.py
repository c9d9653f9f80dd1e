"""An exclusive, non-waiting lock on a folder, held by one process at a time.

``flock`` on the folder itself, so nothing is added to it. The lock goes with the process: one
that crashes or is killed leaves no stale lock behind. Without ``fcntl`` (not a POSIX system)
there is no lock. Bench runs (``hpcgym.bench.runlock``) and trainings
(``hpcgym.agents.runrecord``) each hold their run folder's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from hpcgym.errors import SpecError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def exclusive(folder: Path, busy: Callable[[], str]) -> Iterator[None]:
    """Hold ``folder``'s exclusive lock in the block; never wait for it.

    Raises:
        SpecError: Another process (or another block of this one) holds the lock; its message
            is ``busy()``.
    """
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SpecError(busy()) from None
        yield
    finally:
        os.close(fd)


def is_locked(folder: Path) -> bool:
    """Whether another process (or another block of this one) holds ``folder``'s lock now.

    ``False`` for a folder that is gone, and always without ``fcntl``. Taken and released at
    once: nothing waits.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        if fcntl is None:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
