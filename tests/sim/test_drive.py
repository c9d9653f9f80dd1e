"""``Simulator.drive``: the library's event loop, compiled, the same as a loop written by hand."""

from __future__ import annotations

import numpy as np
import pytest

import hpcgym.workloads as W
from hpcgym.baselines import make
from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator
from hpcgym.workloads import transforms


def _window(n: int) -> tuple[Platform, list[JobSpec]]:
    w = transforms.first(W.load("swf/lublin256-v0"), n)
    return w.platform, list(w.jobs)


class _Recording:
    """Wraps a scheduler; records the time and the happened events of every call."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.calls: list[tuple[float, tuple[tuple[str, int | None], ...]]] = []

    def schedule(self, sim: Simulator) -> None:
        seen = tuple((e.value, None if j is None else j.id) for e, j in sim.happened)
        self.calls.append((sim.now, seen))
        self.inner.schedule(sim)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["fcfs", "easy", "sjf", "conservative"])
def test_drive_makes_the_calls_and_the_schedule_of_a_loop_by_hand(name: str) -> None:
    platform, jobs = _window(300)
    by_hand, driven = _Recording(make(name)), _Recording(make(name))
    a = Simulator(platform, jobs)
    while a.advance():
        by_hand.schedule(a)
    b = Simulator(platform, jobs)
    b.drive(driven)
    assert driven.calls == by_hand.calls and len(driven.calls) > 300
    ra, rb = a.result(), b.result()
    assert ra.summary == rb.summary
    for key, column in ra.columns.items():
        assert np.array_equal(rb.columns[key], column, equal_nan=column.dtype.kind == "f")


class _Stepping(Simulator):
    """A Python subclass whose ``advance`` counts its calls."""

    def __init__(self, platform: Platform, jobs: list[JobSpec], config: SimConfig) -> None:
        super().__init__(platform, jobs, config)
        self.advances = 0

    def advance(self) -> bool:
        self.advances += 1
        return super().advance()


def test_drive_calls_a_subclass_advance_and_the_event_loop_without_the_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    platform, jobs = _window(200)
    sim = _Stepping(platform, jobs, SimConfig())
    sched = _Recording(make("fcfs"))
    sim.drive(sched)
    assert sim.done and sim.advances == len(sched.calls) + 1  # the last one returns False
    # run() and a scheduler's run() without the batch core: drive's loop, same schedule.
    monkeypatch.setenv("HPCGYM_BATCH_CORE", "0")
    other = _Stepping(platform, jobs, SimConfig())
    make("fcfs").run(other)
    assert other._batch_out is None and other.advances == sim.advances
    third = _Stepping(platform, jobs, SimConfig())
    result = third.run(make("fcfs"))
    assert third.advances == sim.advances
    assert np.array_equal(result.columns["start"], sim.result().columns["start"], equal_nan=True)
