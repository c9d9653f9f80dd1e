"""Atomic file writes: a result file is either its old self or complete, never half-written.

Every writer goes to a temporary name in the target's own folder (same file system), and the
finished file is renamed over the target (``os.replace``, atomic on POSIX and Windows). An
interrupted write leaves at most a ``.<name>.<random>.tmp`` file behind, never a truncated
result, and the data reaches the disk before the rename (``fsync``), so a power cut cannot
leave an empty file under the result's name either.

Only regular files are ever replaced. A symlink stays a symlink: the file it points to is
written (atomically, in that file's folder). A FIFO or a character device (``/dev/null``,
``/dev/stdout``, a terminal) is written *through*: the finished output is copied into it, so
``--out /dev/stdout`` prints the table. Anything else (a folder, a socket, a block device) is
refused with an :class:`~hpcgym.errors.OutputError`, and nothing is written.

A disk that fills up (or a quota reached) during the write is an
:class:`~hpcgym.errors.OutputError` naming the file (its ``errno`` kept); the temporary file is
removed and the target left as it was.

```python
from hpcgym.atomic import atomic_path, write_text
write_text(folder / "run.json", text)
with atomic_path(folder / "results.csv") as tmp:
    table.to_csv(tmp, index=False)
```
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hpcgym.errors import OutputError

NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""Errors of a write that found no room: a full disk, a quota reached, a file too large."""


@contextlib.contextmanager
def _no_room_is_an_output_error(target: Path) -> Iterator[None]:
    """Turn a full disk in the block into an :class:`OutputError` naming ``target``."""
    try:
        yield
    except OutputError:
        raise
    except OSError as e:
        if e.errno not in NO_ROOM:
            raise
        err = OutputError(
            f"cannot write {target}: {e.strerror or e}; free some space there or write elsewhere"
        )
        err.errno = e.errno
        raise err from e


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def output_kind(path: str | Path) -> str:
    """How an output at ``path`` is written: ``"replace"``, ``"through"`` or ``"refuse"``.

    ``replace``: nothing there yet, or a regular file (also behind symlinks): written to a
    temporary file and renamed over the real file. ``through``: a FIFO or character device,
    opened and written in place. ``refuse``: a folder, socket or block device.
    """
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except FileNotFoundError:
        return "replace"  # nothing there, or a dangling symlink: its target is created
    if stat.S_ISREG(mode):
        return "replace"
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return "through"
    return "refuse"


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"  # pragma: no cover (every other kind is written)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path to write to; moved to ``path`` when the block ends without error.

    The parent folder is created. On an error (or Ctrl-C) the temporary file is removed and
    ``path`` is left as it was. A symlink at ``path`` is kept and its target written; a FIFO or
    character device is written through; a folder, socket or block device is refused.

    Raises:
        OutputError: ``path`` is a folder, a socket or a block device, or the disk is full
            (then the temporary file is removed).
    """
    given = Path(path)
    kind = output_kind(given)
    if kind == "refuse":
        what = _describe(os.stat(given).st_mode)
        raise OutputError(f"{given} is {what}, not a file: give a file name to write to")
    if kind == "through":
        with _no_room_is_an_output_error(given), _through(given) as tmp:
            yield tmp
        return
    # A symlink (or a chain of them) is resolved so the link itself is never replaced.
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    with _no_room_is_an_output_error(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; results are ordinary files
        try:
            yield tmp
            _commit(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _commit(tmp: Path, target: Path) -> None:
    """Move the finished ``tmp`` over ``target``, durably: on disk before and after the move.

    The data is flushed to disk before the rename (so a power cut never leaves an empty file
    under the target's name), and the folder after it, where the system allows. Every atomic
    write ends here, once (the bench's tests count writes by it).
    """
    fd = os.open(tmp, os.O_RDWR)
    try:
        os.fsync(fd)  # a full disk that write() did not report is reported here
    finally:
        os.close(fd)
    os.replace(tmp, target)
    if os.name == "posix":
        with contextlib.suppress(OSError):  # some file systems cannot sync a folder
            folder = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)


@contextlib.contextmanager
def _through(target: Path) -> Iterator[Path]:
    """Write to a private temporary file, then copy it into the FIFO or device ``target``."""
    fd, name = tempfile.mkstemp(prefix="hpcgym-out.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_csv(path: str | Path, table: Any, **kwargs: Any) -> Path:
    """``table.to_csv(path, **kwargs)`` (a pandas DataFrame), atomically; return ``path``."""
    with atomic_path(path) as tmp:
        table.to_csv(tmp, **kwargs)
    return Path(path)
