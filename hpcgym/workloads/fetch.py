"""``hpcgym workloads fetch``: download an archive log, check its pinned SHA-256, keep it.

Downloads go through pooch, which writes to a temporary name in the target folder, checks the
checksum and only then renames the file into place: a failed or corrupted download leaves
nothing where a trace is expected. ``file://`` addresses are read with the standard library
(for mirrors on a shared file system, and for offline tests).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from hpcgym.errors import WorkloadError
from hpcgym.workloads import catalog

MIRROR_ENV = "HPCGYM_PWA_MIRROR"
"""Environment variable: a base address that replaces the Parallel Workloads Archive's."""


def sha256(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_url(trace: catalog.Trace, mirror: str | None = None) -> str:
    """Where ``trace`` is downloaded from: ``mirror/<file>`` when a mirror is given or set."""
    base = mirror or os.environ.get(MIRROR_ENV)
    if base:
        return base.rstrip("/") + "/" + trace.file
    if trace.url is None:
        raise WorkloadError(f"trace {trace.key!r} has no download address")
    return trace.url


def _copy_file_url(url: str, output_file: str, _pooch: Any) -> None:
    """A pooch downloader for ``file://`` addresses."""
    path = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
    with open(path, "rb") as src, open(output_file, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _resolve(name: str) -> catalog.Trace:
    trace = catalog.lookup(name)
    if trace is None:
        keys = ", ".join(t.key for t in (*catalog.BUNDLED, *catalog.ARCHIVE))
        raise WorkloadError(f"no known trace {name!r}; known: {keys} (`hpcgym workloads list`)")
    if trace.url is None:
        raise WorkloadError(
            f"trace {trace.key!r} ({trace.file}) ships with hpcgym and has no download address; "
            "it is already installed"
        )
    return trace


def _expected_sha256(trace: catalog.Trace, given: str | None) -> str:
    if given is not None:
        given = given.strip().lower()
        if len(given) != 64 or any(c not in "0123456789abcdef" for c in given):
            raise WorkloadError(f"--sha256 must be 64 hex digits, got {given!r}")
        if trace.sha256 is not None and given != trace.sha256:
            raise WorkloadError(
                f"{trace.file} has the pinned SHA-256 {trace.sha256}; --sha256 is for the logs "
                "without one"
            )
        return given
    if trace.sha256 is None:
        raise WorkloadError(
            f"no SHA-256 is pinned for {trace.file} (none could be checked from here); get its "
            f"checksum from a source you trust and pass it: "
            f"`hpcgym workloads fetch {trace.key} --sha256 HEX`"
        )
    return trace.sha256


def fetch(
    name: str, to: Path | None = None, mirror: str | None = None, sha256_hex: str | None = None
) -> Path:
    """Download the known trace ``name`` (key or file name) into ``to`` and return its path.

    ``to`` defaults to :func:`hpcgym.workloads.catalog.cache_dir`, where trace lookups find it
    afterwards. A file already there with the expected checksum is kept as it is. The expected
    checksum is the pinned one, or ``sha256_hex`` for a log that has none pinned.

    Raises:
        WorkloadError: Unknown trace; no checksum to check against; no network (the message
            names the address and the manual alternative); the download's checksum differs from
            the expected one (nothing is kept).
    """
    trace = _resolve(name)
    expected = _expected_sha256(trace, sha256_hex)
    folder = (to if to is not None else catalog.cache_dir()).expanduser()
    target = folder / trace.file
    if target.is_file() and sha256(target) == expected:
        return target
    url = source_url(trace, mirror)
    manual = (
        f"download {url} yourself (check its SHA-256 is {expected}), put it in a folder and "
        f"set ${catalog.WORKLOADS_ENV} to that folder"
    )
    downloader = _copy_file_url if url.startswith("file:") else None
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # removed again on failure
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _retrieve(url, trace.file, expected, folder, downloader, manual)
    except BaseException:
        _remove_empty(made)
        raise
    return target


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a failed fetch made (deepest first), each only while it is empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _retrieve(
    url: str, fname: str, expected: str, folder: Path, downloader: Any, manual: str
) -> None:
    """``pooch.retrieve`` into ``folder``, its errors as one-line ``WorkloadError``s."""
    import pooch
    import requests

    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{expected}",
            fname=fname,
            path=folder,
            downloader=downloader,
            progressbar=False,
        )
    except ValueError as e:  # pooch's checksum mismatch; the temporary file is gone
        raise WorkloadError(
            f"{url} does not have the expected SHA-256 of {fname} ({e}); nothing was kept. "
            f"The archive may have changed the file, or the download was corrupted: try again, "
            f"or {manual}"
        ) from e
    except (OSError, requests.exceptions.RequestException) as e:
        raise WorkloadError(f"cannot download {url}: {e}. Without network, {manual}") from e
