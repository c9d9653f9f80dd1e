"""Atomic writes: a result file is complete or untouched, never half-written."""

from __future__ import annotations

import errno
import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from hpcgym.atomic import atomic_path, output_kind, write_text
from hpcgym.errors import OutputError


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


@pytest.mark.parametrize("where", ["write", "replace"])
def test_a_full_disk_is_an_output_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    target = tmp_path / "results.csv"
    write_text(target, "old\n")
    full = OSError(errno.ENOSPC, "No space left on device")

    def no_room(*args: object) -> None:
        raise full

    if where == "replace":
        monkeypatch.setattr(os, "replace", no_room)
    with pytest.raises(OutputError) as info, atomic_path(target) as tmp:
        tmp.write_text("half of the new")
        if where == "write":
            raise full
    message = str(info.value)
    assert message.startswith(f"cannot write {target}: No space left on device")
    assert "free some space" in message and "\n" not in message
    assert info.value.errno == errno.ENOSPC and info.value.__cause__ is full
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]


def test_other_errors_of_the_block_pass_unchanged(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), atomic_path(tmp_path / "out.csv"):
        (tmp_path / "missing-input.csv").read_text()
    assert list(tmp_path.iterdir()) == []


def test_a_full_device_written_through_is_an_output_error() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with pytest.raises(OutputError, match="cannot write /dev/full: No space left on device"):
        write_text("/dev/full", "x\n")


def test_the_data_is_on_disk_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39, L9: a cell or run.json renamed into place before its data reached the disk
    could be an empty file after a power cut; and a full disk that only the sync reports must
    leave the old file, not a truncated one."""
    target = tmp_path / "results.csv"
    write_text(target, "old\n")
    events: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.fstat(fd).st_ino))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(("replace", os.stat(src).st_ino))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_text(target, "new\n")
    inode = target.stat().st_ino
    assert events.index(("fsync", inode)) < events.index(("replace", inode))

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_text(target, "newer\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]


# ---------------------------------------------------------------- targets that are not files
# Outputs never replace what is not a regular file (issue 39, N1). Seen failing before the fix:
# every "stays" assertion below failed, the link or node having become a regular file.


def _char_device(folder: Path) -> Path:
    """A ``/dev/null``-like node made by the test itself (``/dev/null`` when mknod is refused:
    then the user cannot replace ``/dev/null`` either, so the check is still safe)."""
    node = folder / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        return Path(os.devnull)
    return node


def _fifo_reader(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


def test_a_symlink_stays_a_symlink_and_its_file_gets_the_output(tmp_path: Path) -> None:
    real = tmp_path / "real" / "out.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    chain = tmp_path / "chain.csv"
    chain.symlink_to(link)
    write_text(chain, "new\n")
    assert chain.is_symlink() and link.is_symlink()
    assert real.read_text() == "new\n" and not real.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.csv", "link.csv", "real"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["out.csv"]


def test_a_dangling_symlink_gets_its_file_created(tmp_path: Path) -> None:
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "new" / "target.csv")
    write_text(link, "x\n")
    assert link.is_symlink() and (tmp_path / "new" / "target.csv").read_text() == "x\n"


def test_a_character_device_is_written_through_never_replaced(tmp_path: Path) -> None:
    node = _char_device(tmp_path)
    link = tmp_path / "to-null"
    link.symlink_to(node)
    for target in (node, link):
        write_text(target, "discarded\n")
        assert stat.S_ISCHR(os.stat(node).st_mode)
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) in (["null", "to-null"], ["to-null"])


def test_a_fifo_is_written_through_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader, got = _fifo_reader(fifo)
    write_text(fifo, "through the pipe\n")
    reader.join(timeout=30)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.parametrize("kind", ["folder", "socket"])
def test_a_folder_or_socket_is_refused_and_nothing_is_written(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    if kind == "folder":
        target.mkdir()
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    try:
        with pytest.raises(OutputError, match=f"{target} is a {kind}"):
            write_text(target, "x\n")
        assert output_kind(target) == "refuse"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
        assert stat.S_ISDIR(os.stat(target).st_mode) == (kind == "folder")
    finally:
        if kind == "socket":
            sock.close()


@pytest.mark.parametrize(
    "make",
    ["file", "symlink", "dangling", "fifo", "device", "folder"],
)
def test_simulate_out_keeps_every_kind_of_target(tmp_path: Path, make: str) -> None:
    """The command line's ``--out`` through every kind of target (``simulate``, as the issue's
    report did; ``evaluate``, ``workloads convert`` and ``generate`` write through the same
    :func:`atomic_path`)."""
    from hpcgym.cli import main

    target = tmp_path / "out.csv"
    real = tmp_path / "real.csv"
    reader = None
    if make == "file":
        target.write_text("old\n")
    elif make == "symlink":
        real.write_text("old\n")
        target.symlink_to(real)
    elif make == "dangling":
        target.symlink_to(real)
    elif make == "fifo":
        os.mkfifo(target)
        reader, got = _fifo_reader(target)
    elif make == "device":
        target.symlink_to(_char_device(tmp_path))
    else:
        target.mkdir()
    argv = ["simulate", "--scheduler", "fcfs", "--workload", "swf/lublin256-v0", "--jobs", "5"]
    code = main([*argv, "--out", str(target)])
    if make == "folder":
        assert code == 2 and target.is_dir() and not any(target.iterdir())
        return
    assert code == 0
    if make in ("symlink", "dangling"):
        assert target.is_symlink() and real.read_text().count("\n") == 6  # header + 5 jobs
    elif make == "fifo":
        assert reader is not None
        reader.join(timeout=30)
        assert stat.S_ISFIFO(os.stat(target).st_mode) and got[0].count(b"\n") == 6
    elif make == "device":
        assert target.is_symlink() and stat.S_ISCHR(os.stat(target).st_mode)
    else:
        assert target.read_text().count("\n") == 6
