"""Shared builders for the engine tests: job specs, a minimal FCFS scheduler and state snapshots.

Test modules get them through the fixtures at the bottom (``tests/`` is not a package, so the
fixtures are the import-free way to share them).
"""

from __future__ import annotations

import contextlib
import math
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hpcgym.sim import (
    EventType,
    Job,
    JobKind,
    JobSpec,
    Platform,
    SimConfig,
    Simulator,
)
from hpcgym.sim.nodes import idle_ids


def rigid(job_id: int, submit: float, work: float, nodes: int, **kw: Any) -> JobSpec:
    """A rigid job."""
    return JobSpec(job_id, submit, work=work, nodes=nodes, **kw)


def moldable(
    job_id: int, submit: float, work: float, nodes: int, lo: int, hi: int, **kw: Any
) -> JobSpec:
    """A moldable job whose ``work`` is measured at ``nodes`` tasks, sizes in ``[lo, hi]``."""
    return JobSpec(
        job_id,
        submit,
        work=work,
        nodes=nodes,
        kind=JobKind.MOLDABLE,
        min_nodes=lo,
        max_nodes=hi,
        **kw,
    )


def malleable(
    job_id: int, submit: float, work: float, nodes: int, lo: int, hi: int, **kw: Any
) -> JobSpec:
    """A malleable job whose ``work`` is measured at ``nodes`` tasks, sizes in ``[lo, hi]``."""
    return JobSpec(
        job_id,
        submit,
        work=work,
        nodes=nodes,
        kind=JobKind.MALLEABLE,
        min_nodes=lo,
        max_nodes=hi,
        **kw,
    )


def evolving(job_id: int, submit: float, steps: Sequence[tuple[float, int]], **kw: Any) -> JobSpec:
    """An evolving job following ``(duration, nodes)`` steps."""
    return JobSpec(job_id, submit, kind=JobKind.EVOLVING, evolution=tuple(steps), **kw)


@dataclass
class Fcfs:
    """Strict first-come first-served for whole-node jobs: start the queue head while it fits.

    It also grants evolving requests that fit, and records what it saw: the decision times,
    the events of each decision point and where every job started.
    """

    log: list[tuple[float, list[tuple[EventType, int | None]]]] = field(default_factory=list)
    placed: dict[int, tuple[float, tuple[int, ...]]] = field(default_factory=dict)

    def schedule(self, sim: Simulator) -> None:
        self.log.append(
            (sim.now, [(kind, None if job is None else job.id) for kind, job in sim.happened])
        )
        for job in list(sim.running.values()):
            if job.request and sim.free_nodes(job.cluster) >= job.request - job.size:
                sim.grant(job.id)
        while (head := sim.queue_head()) is not None:
            clusters = range(len(sim.platform.clusters))
            if max(sim.free_nodes(k) for k in clusters) < head.spec.nodes:
                break
            sim.start(head.id)
            self.placed[head.id] = (sim.now, tuple(int(n) for n in head.nodes))

    def times(self) -> list[float]:
        return [t for t, _ in self.log]


def run_fcfs(
    platform: Platform, jobs: Sequence[JobSpec], config: SimConfig | None = None
) -> tuple[Simulator, Fcfs]:
    """Run ``jobs`` on ``platform`` under ``Fcfs`` to the end."""
    sim = Simulator(platform, jobs, config)
    fcfs = Fcfs()
    sim.run(fcfs)
    return sim, fcfs


def drive(sim: Simulator, actions: dict[float, Callable[[Simulator], None]]) -> list[Any]:
    """Advance ``sim`` to the end, calling ``actions[now]`` at the decision points it names.

    Returns the log ``[(now, [(event, job id), ...]), ...]`` of every decision point.
    """
    log = []
    while sim.advance():
        log.append((sim.now, [(k, None if j is None else j.id) for k, j in sim.happened]))
        action = actions.get(sim.now)
        if action is not None:
            action(sim)
    return log


def _job_state(sim: Simulator, job: Job) -> tuple[Any, ...]:
    """What a job is, at ``sim.now``, independent of when it was last settled."""
    return (
        job.state,
        tuple(job.nodes.tolist()),
        tuple(job.cpu.tolist()),
        job.cluster,
        round(sim.remaining_work(job), 9),
        job.rate,
        job.yield_,
        job.start_time,
        job.end_time,
        job.step,
        job.request,
        job.busy_until,
        job.reconfigurations,
        job.preemptions,
        job.migrations,
        job.max_size,
    )


def snapshot(sim: Simulator) -> dict[str, Any]:
    """Everything a refused command must leave as it was.

    The future timeline is read from the engine's private heap (entries with jobs replaced by
    their ids); it is the only way to see that no event was added or invalidated.
    """

    def plain(x: Any) -> Any:
        return x.id if isinstance(x, Job) else x

    totals = {name: getattr(sim, name, None) for name in ("_alloc_total", "_useful_total")}
    return {
        "now": sim.now,
        "cpu_used": sim.node_cpu_used.tolist(),
        "mem_used": sim.node_mem_used.tolist(),
        "free": [sim.free_nodes(k) for k in range(len(sim.platform.clusters))],
        "idle runs": [(r.lo[:], r.hi[:]) for r in sim.pool.idle],
        "queue": list(sim.queue),
        "running": list(sim.running),
        "suspended": list(sim.suspended),
        "counts": sim.counts,
        "jobs": {jid: _job_state(sim, job) for jid, job in sim.jobs.items()},
        "heap": sorted(
            tuple(plain(x) for x in (e.time, e.prio, e.seq, e.job, e.version))
            for e in getattr(sim, "_heap", [])
        ),
        "areas": (sim.alloc_area, sim.useful_area, sim.underutilization),
        "totals": totals,
    }


def same(a: Any, b: Any) -> bool:
    """Deep equality where NaN equals NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def check_invariants(sim: Simulator) -> None:
    """Capacity, idle counts and allocation bookkeeping agree with the jobs' allocations."""
    cpu = np.asarray(sim.node_cpu_used)
    mem = np.asarray(sim.node_mem_used)
    assert cpu.max(initial=0.0) <= 1.0 + 1e-9, cpu
    assert mem.max(initial=0.0) <= 1.0 + 1e-9, mem
    assert cpu.min(initial=0.0) >= -1e-9 and mem.min(initial=0.0) >= -1e-9
    cluster_of = sim.platform.cluster_of_nodes()
    for k in range(len(sim.platform.clusters)):
        assert sim.free_nodes(k) == int(np.count_nonzero(cpu[cluster_of == k] == 0.0)), k
        # The idle runs are exactly the idle nodes, sorted, disjoint and never touching.
        runs = sim.pool.idle[k]
        idle = np.flatnonzero((cpu == 0.0) & (cluster_of == k))
        assert np.array_equal(idle_ids(runs), idle), (k, runs.lo, runs.hi)
        assert all(a < b for a, b in zip(runs.lo, runs.hi, strict=True)), k
        assert all(b < a for b, a in zip(runs.hi, runs.lo[1:], strict=False)), k
    n = cpu.size
    want_cpu = np.zeros(n)
    want_mem = np.zeros(n)
    for job in sim.jobs.values():
        if job.size:
            assert job.state.value in ("running", "reconfiguring"), job
            assert job.id in sim.running
            assert np.all(cluster_of[job.nodes] == job.cluster), job
            want_cpu += np.bincount(job.nodes, weights=job.cpu, minlength=n)
            want_mem += np.bincount(job.nodes, minlength=n) * job.spec.mem
        else:
            assert job.id not in sim.running, job
    np.testing.assert_allclose(cpu, want_cpu, rtol=0, atol=1e-9)
    np.testing.assert_allclose(mem, want_mem, rtol=0, atol=1e-9)


@pytest.fixture(scope="session")
def build() -> SimpleNamespace:
    """The job-spec builders: ``build.rigid``, ``.moldable``, ``.malleable``, ``.evolving``."""
    return SimpleNamespace(rigid=rigid, moldable=moldable, malleable=malleable, evolving=evolving)


@pytest.fixture(scope="session")
def fcfs() -> Callable[..., tuple[Simulator, Fcfs]]:
    """``run_fcfs(platform, jobs, config=None) -> (sim, scheduler)``."""
    return run_fcfs


@pytest.fixture(scope="session")
def drive_sim() -> Callable[..., list[Any]]:
    """``drive(sim, {time: action})``: scripted decisions, returns the decision log."""
    return drive


@pytest.fixture(scope="session")
def state() -> SimpleNamespace:
    """State helpers: ``state.snapshot(sim)``, ``state.same(a, b)``, ``state.check(sim)``."""
    return SimpleNamespace(snapshot=snapshot, same=same, check=check_invariants)


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block if it runs longer than ``seconds`` (a hang)."""

    def _expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="session")
def limit() -> Callable[[float], contextlib.AbstractContextManager[None]]:
    """``with limit(seconds):`` fails the block with ``TimeoutError`` if it hangs."""
    return time_limit


@pytest.fixture(scope="session", autouse=True)
def _sb3_folder_in_the_session_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests that call SB3's ``learn`` themselves, without a logger: SB3 would make an empty
    ``SB3-<time>`` folder in the system's temporary directory at each call, never removed."""
    patch = pytest.MonkeyPatch()
    patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
    yield
    patch.undo()
