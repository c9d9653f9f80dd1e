"""The SWF reader streams its input and stops at a size limit (issue "Hardening III", N4).

The reader held the whole decompressed file: a 4 MB gzip inflating to 4 GiB reached
MemoryError, ``read_workload('/dev/zero')`` read until MemoryError. Here the bombs are small
and the limits smaller; what a read costs is counted (bytes a writer got through a FIFO, the
peak of traced memory), never timed.
"""

from __future__ import annotations

import gzip
import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.errors import WorkloadError
from hpcgym.workloads import read_swf, read_workload
from hpcgym.workloads.swf_input import DEFAULT_MAX_BYTES, MAX_BYTES_ENV, max_bytes_limit

MiB = 1 << 20
HEADER = b"; MaxProcs: 4\n"
RECORD = b"1 0 0 10 1 -1 -1 1 20 -1 1 3 4 -1 -1 -1 -1 -1\n"


def zero_bomb(path: Path, mib: int) -> Path:
    """A gzip stream of ``mib`` members of 1 MiB of zeros each (about 1 KB per member)."""
    member = gzip.compress(b"\0" * MiB, mtime=0)
    path.write_bytes(member * mib)
    return path


def test_a_gzip_bomb_is_refused_within_the_limit_in_memory(tmp_path):
    bomb = zero_bomb(tmp_path / "bomb.swf.gz", 64)
    assert bomb.stat().st_size < 128 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(WorkloadError) as info:
            read_swf(bomb, max_bytes=MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert str(bomb) in message and "more than 1,048,576 bytes" in message
    assert MAX_BYTES_ENV in message and "max_bytes" in message and "\n" not in message
    assert peak < 8 * MiB  # the 64 MiB it inflates to were never held


def test_a_gzip_of_blank_lines_is_read_or_refused_by_the_limit(tmp_path, monkeypatch):
    p = tmp_path / "blanks.swf.gz"
    p.write_bytes(gzip.compress(HEADER + RECORD + b"\n" * (6 * MiB)))
    monkeypatch.setenv(MAX_BYTES_ENV, str(4 * MiB))
    with pytest.raises(WorkloadError, match="more than 4,194,304 bytes"):
        read_workload(p)
    assert len(read_workload(p, max_bytes=8 * MiB)) == 1
    monkeypatch.setenv(MAX_BYTES_ENV, str(8 * MiB))
    assert len(read_workload(p)) == 1


def test_the_limit_is_inclusive(tmp_path):
    text = HEADER + RECORD
    p = tmp_path / "exact.swf"
    p.write_bytes(text)
    assert len(read_swf(p, max_bytes=len(text))) == 1
    with pytest.raises(WorkloadError, match=f"more than {len(text) - 1} bytes"):
        read_swf(p, max_bytes=len(text) - 1)
    gz = tmp_path / "exact.swf.gz"
    gz.write_bytes(gzip.compress(text))
    assert len(read_swf(gz, max_bytes=len(text))) == 1
    with pytest.raises(WorkloadError, match=f"more than {len(text) - 1} bytes"):
        read_swf(gz, max_bytes=len(text) - 1)


def test_the_default_and_bad_settings(monkeypatch):
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    assert max_bytes_limit() == DEFAULT_MAX_BYTES == 1 << 30
    monkeypatch.setenv(MAX_BYTES_ENV, "2_000_000")
    assert max_bytes_limit() == 2_000_000 and max_bytes_limit(5) == 5
    for bad in ("lots", "-3", "0", "1.5e9"):
        monkeypatch.setenv(MAX_BYTES_ENV, bad)
        with pytest.raises(WorkloadError, match=f"\\${MAX_BYTES_ENV} is '{bad}'; set it"):
            max_bytes_limit()
    for bad_arg in (0, -1, 2.5, True):
        with pytest.raises(WorkloadError, match="max_bytes must be a positive whole number"):
            max_bytes_limit(bad_arg)  # type: ignore[arg-type]


def test_dev_zero_is_refused_at_the_limit(limit):
    with limit(20), pytest.raises(WorkloadError, match="/dev/zero holds more than 1,048,576"):
        read_workload("/dev/zero", max_bytes=MiB)


def _feed(fifo: Path, payload: bytes, repeat: int, written: list[int]) -> None:
    """Write ``payload`` ``repeat`` times into ``fifo`` until the reader goes away."""
    with open(fifo, "wb") as f:
        try:
            for _ in range(repeat):
                f.write(payload)
                f.flush()
                written[0] += len(payload)
        except BrokenPipeError:
            pass


def _read_fifo(tmp_path: Path, payload: bytes, repeat: int, **kw: int):
    fifo = tmp_path / "pipe.swf"
    os.mkfifo(fifo)
    written = [0]
    writer = threading.Thread(target=_feed, args=(fifo, payload, repeat, written), daemon=True)
    writer.start()
    try:
        return read_swf(fifo, **kw), written
    finally:
        try:  # unblock a writer still waiting for a reader
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        finally:
            writer.join(10)
            assert not writer.is_alive()


def test_a_fifo_reader_takes_no_more_than_the_limit_and_a_block(tmp_path, limit):
    fifo = tmp_path / "pipe.swf"
    os.mkfifo(fifo)
    written = [0]
    writer = threading.Thread(
        target=_feed, args=(fifo, b"\n" * (64 * 1024), 1024, written), daemon=True
    )
    writer.start()
    with limit(30), pytest.raises(WorkloadError, match="holds more than 1,048,576 bytes"):
        read_swf(fifo, max_bytes=MiB)
    writer.join(10)
    assert not writer.is_alive()
    # What the writer got through: the limit, one read block and the pipe's buffer at most.
    assert written[0] <= 3 * MiB, written[0]


def test_a_fifo_carrying_a_trace_is_read(tmp_path, limit):
    with limit(30):
        trace, written = _read_fifo(tmp_path, HEADER + RECORD, 1)
    assert len(trace) == 1 and written[0] == len(HEADER + RECORD)


def test_the_cli_prints_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(MAX_BYTES_ENV, str(MiB))
    bomb = tmp_path / "bomb.swf.gz"
    bomb.write_bytes(gzip.compress(HEADER + RECORD + b"\n" * (2 * MiB)))
    assert main(["workloads", "show", str(bomb)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hpcgym: error: ") and str(bomb) in err and "\n" not in err


def test_megabytes_of_blank_lines_before_the_header(tmp_path):
    p = tmp_path / "lead.swf"
    p.write_bytes(b" \n" * MiB + HEADER + b"\n\t\n" + RECORD)
    trace = read_swf(p)
    assert trace.header.max_procs == 4 and list(trace.lines) == [MiB + 4]
