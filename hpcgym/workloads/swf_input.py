"""The bytes of an SWF file, read as a stream and never more than a limit.

A gzip file is inflated block by block, a pipe or a device is read block by block, and reading
stops with a :class:`WorkloadError` once the text passes the limit: a decompression bomb, a
file of endless blank lines or ``/dev/zero`` cost at most the limit in memory, not all of it.

The limit counts decompressed bytes. By default it is :data:`DEFAULT_MAX_BYTES` (1 GiB); the
``max_bytes`` argument of the readers, else the ``HPCGYM_SWF_MAX_BYTES`` environment variable,
sets another.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO, cast

from hpcgym.errors import WorkloadError

DEFAULT_MAX_BYTES = 1 << 30
"""1 GiB of SWF text. SWF lines take about 95 bytes, so this is some 11 million records: RICC,
the largest log ``hpcgym workloads fetch`` knows (447,794 records), is about 45 MB, and an
archive log of 5 million records about 500 MB."""

MAX_BYTES_ENV = "HPCGYM_SWF_MAX_BYTES"
"""Environment variable overriding :data:`DEFAULT_MAX_BYTES` (a number of bytes)."""

BLOCK_BYTES = 1 << 20
"""Bytes read (or inflated) at once."""

GZIP_MAGIC = b"\x1f\x8b"


def max_bytes_limit(max_bytes: int | None = None) -> int:
    """The limit in force: ``max_bytes`` if given, else ``$HPCGYM_SWF_MAX_BYTES``, else 1 GiB.

    Raises:
        WorkloadError: The argument or the variable is not a positive whole number of bytes.
    """
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise WorkloadError(
                f"max_bytes must be a positive whole number of bytes, got {max_bytes!r}"
            )
        return max_bytes
    env = os.environ.get(MAX_BYTES_ENV)
    if env is None or not env.strip():
        return DEFAULT_MAX_BYTES
    try:
        value = int(env.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise WorkloadError(
            f"${MAX_BYTES_ENV} is {env!r}; set it to a positive whole number of bytes "
            f"(e.g. {MAX_BYTES_ENV}={4 << 30} for 4 GiB), or unset it for the default 1 GiB"
        )
    return value


class _Prefixed:
    """A stream whose first bytes were already read: they come first again."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            out = self.head if n < 0 else self.head[:n]
            self.head = self.head[len(out) :]
            return out
        return self.rest.read(n)


def _too_large(path: Path, limit: int) -> WorkloadError:
    return WorkloadError(
        f"{path} holds more than {limit:,} bytes of SWF text (decompressed), the reader's "
        "limit; reading stopped there. If it is a real trace, raise the limit (max_bytes=N, "
        f"or {MAX_BYTES_ENV}=N in the environment); otherwise it is not a trace (a "
        "decompression bomb, a device, a damaged file)."
    )


def _read_stream(stream: BinaryIO, path: Path, limit: int, head: bytes = b"") -> bytes:
    """``head`` and every byte of ``stream``, block by block, or an error past ``limit`` bytes."""
    blocks = [head]
    total = len(head)
    while True:
        block = stream.read(min(BLOCK_BYTES, limit + 1 - total))
        if not block:
            return b"".join(blocks)
        blocks.append(block)
        total += len(block)
        if total > limit:
            raise _too_large(path, limit)


def read_limited(path: Path, max_bytes: int | None = None) -> bytes:
    """The text of an SWF file, gzip inflated (detected from its first bytes).

    Regular files, pipes and devices alike; at most the limit (:func:`max_bytes_limit`).

    Raises:
        WorkloadError: The file cannot be read or inflated, or holds more than the limit.
    """
    limit = max_bytes_limit(max_bytes)
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            head = f.read(2)
            if head != GZIP_MAGIC:
                if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                    raise _too_large(path, limit)
                return _read_stream(f, path, limit, head)
            try:
                stream = cast(BinaryIO, _Prefixed(head, f))
                with gzip.GzipFile(fileobj=stream, mode="rb") as inflated:
                    return _read_stream(cast(BinaryIO, inflated), path, limit)
            except (gzip.BadGzipFile, EOFError, zlib.error) as e:
                raise WorkloadError(
                    f"cannot decompress {path}: {e}. The gzip file is damaged; fetch it again."
                ) from e
    except OSError as e:
        raise WorkloadError(
            f"cannot read workload file {path}: {e.strerror or e}. Check the path and its "
            "permissions (named sets look in $HPCGYM_WORKLOADS)."
        ) from e
