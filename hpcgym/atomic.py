"""Atomic file writes: a result file is either its old self or complete, never half-written.

Every writer goes to a temporary name in the target's own folder (same file system), and the
finished file is renamed over the target (``os.replace``, atomic on POSIX and Windows). An
interrupted write leaves at most a ``.<name>.<random>.tmp`` file behind, never a truncated
result.

```python
from hpcgym.atomic import atomic_path, write_text
write_text(folder / "run.json", text)
with atomic_path(folder / "results.csv") as tmp:
    table.to_csv(tmp, index=False)
```
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path to write to; renamed to ``path`` when the block ends without error.

    The parent folder is created. On an error (or Ctrl-C) the temporary file is removed and
    ``path`` is left as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; results are ordinary files
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
