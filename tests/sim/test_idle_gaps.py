"""An empty machine crosses an idle gap in one step, under every registered scheduler.

Issue 39, N5: DFRS's periodic ticks ran through the gap before an epoch-time submission, one
decision point per 600 s tick (2.8 million for 1.7e9 s: 84 s; days for epoch milliseconds).
Seen failing before the fix (the count of decision points below was in the millions).
"""

from __future__ import annotations

import pytest

from hpcgym.baselines import make, names
from hpcgym.errors import HpcGymError
from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator
from hpcgym.sim.engine import EXACT_TICK_SKIP, _first_tick_from

GAPS = [1.7e9, 1.7e12, 1e12]


def _jobs(gap: float) -> list[JobSpec]:
    return [
        JobSpec(1, 0.0, work=100.0, nodes=2, walltime=200.0),
        JobSpec(2, 50.0, work=100.0, nodes=2, walltime=200.0),
        JobSpec(3, gap, work=100.0, nodes=2, walltime=200.0),
        JobSpec(4, gap + 30.0, work=100.0, nodes=8, walltime=200.0),
    ]


@pytest.mark.parametrize("gap", GAPS)
def test_every_scheduler_crosses_an_idle_gap_in_a_few_decision_points(gap: float) -> None:
    ran = []
    for name in names():
        sched = make(name)
        calls = 0
        inner = sched.schedule

        def counted(sim: Simulator, inner: object = inner) -> None:
            nonlocal calls
            calls += 1
            inner(sim)  # type: ignore[operator]

        sched.schedule = counted  # type: ignore[method-assign]
        jobs, config = sched.setting(_jobs(gap), SimConfig())
        sim = Simulator(Platform.single(8), jobs, config)
        try:
            sched.run(sim)
        except HpcGymError:  # the scheduler refuses rigid jobs on one cluster (evolving, KOALA)
            continue
        assert sim.done and sim.result().summary["completed"] == 4.0, name
        assert calls <= 60, (name, calls)
        ran.append(name)
    assert {"dfrs", "easy", "mebf", "sd-policy", "asap-min"} <= set(ran)


def test_dfrs_ticks_after_a_gap_fall_where_they_always_did() -> None:
    """Skipped ticks are added one at a time, so the later tick times are the same floats."""
    t, tick = 37.0, 600.0
    slow = t
    until = 1.7e7 + 0.25
    while slow < until:
        slow += tick
    assert _first_tick_from(t, tick, until) == slow
    assert _first_tick_from(t, tick, 10.0) == t  # nothing to skip
    far = 1e9 * tick
    assert (far - 37.0) / tick > EXACT_TICK_SKIP
    got = _first_tick_from(t, tick, far)
    assert far <= got < far + tick
