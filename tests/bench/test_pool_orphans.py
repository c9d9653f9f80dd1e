"""A bench killed from outside leaves no pool worker behind (``runner.watch_parent``).

Pool workers block on a task queue whose write end they hold themselves, so without the watcher
a ``SIGTERM``/``SIGKILL`` of ``hpcgym bench`` left its workers and their fork server running
forever. These tests kill the parent and poll ``/proc`` until its workers are gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

GONE_WITHIN_S = 30.0  # generous: the watcher polls once a second


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a live process; None when it is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    state, ppid = text.rsplit(")", 1)[1].split()[:2]
    return None if state in ("Z", "X") else (state, int(ppid))


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[1] == pid:
                kids.append(int(entry.name))
    return kids


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for kid in _children(todo.pop()):
            found.append(kid)
            todo.append(kid)
    return found


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [p for p in alive if _stat(p) is not None]
    return alive


def test_watch_parent_exits_when_the_parent_dies(tmp_path):
    """A child that runs the watcher leaves once its parent is killed; it does not before."""
    grandchild = (
        "import sys, time; from hpcgym.bench.runner import watch_parent; "
        "watch_parent(int(sys.argv[1]), 0.05); print('ready', flush=True); time.sleep(120)"
    )
    parent_code = (
        "import os, subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', {grandchild!r}, str(os.getpid())],"
        " stdout=subprocess.PIPE, text=True)\n"
        "p.stdout.readline()\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True
    )
    try:
        child = int(parent.stdout.readline())
        time.sleep(0.5)  # ten polls: the watcher must not fire while the parent lives
        assert _stat(child) is not None
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_gone([child]) == []
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_bench_leaves_no_worker(tmp_path, sig):
    """``hpcgym bench --workers 2`` killed mid-run: its fork server and workers all exit."""
    hpcgym = Path(sys.executable).parent / "hpcgym"
    argv = [str(hpcgym), "bench", "--scenario", "malleable-small-v3", "--policy", "fcfs"]
    argv += ["--policy", "easy", "--run-dir", str(tmp_path / "run"), "--workers", "2"]
    bench = subprocess.Popen(
        [*argv, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        family: list[int] = []
        while time.monotonic() < deadline and bench.poll() is None:
            family = _descendants(bench.pid)
            workers = [p for p in family if _stat(p) and _stat(p)[1] != bench.pid]
            if len(workers) >= 2:
                break
            time.sleep(0.2)
        assert bench.poll() is None, "the bench finished before its workers were seen"
        assert len(workers) >= 2, f"no pool workers seen under the bench: {family}"
        os.kill(bench.pid, sig)
        bench.wait()
        assert _wait_gone(family) == [], "processes left running after the bench was killed"
    finally:
        bench.kill()
        bench.wait()
