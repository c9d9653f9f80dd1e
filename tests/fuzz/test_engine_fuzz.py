"""Fuzzing the engine's commands with odd Python and numpy values (issue 16).

Hypothesis drives a small world through sequences of commands, legal and illegal, whose
arguments are drawn from ints, numpy integers and floats, bools, strings, ``None``, NaN, huge
numbers and ragged or mistyped arrays. Contract: a command either succeeds (the engine's
invariants hold) or raises an ``hpcgym.errors`` exception and changes nothing; ``advance``
returns or raises ``StalledError``; nothing hangs.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.errors import HpcGymError, StalledError
from hpcgym.sim import (
    FixedCost,
    JobKind,
    JobSpec,
    Platform,
    SimConfig,
    Simulator,
    SizeRule,
)

# The default run is derandomized (the same examples every time); the long one explores.
FAST = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    derandomize=True,
)
LONG = settings(
    max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

IDS = (1, 2, 3, 4, 5, 6)


def world(tick: float | None) -> Simulator:
    m, mold = JobKind.MALLEABLE, JobKind.MOLDABLE
    jobs = [
        JobSpec(1, 0.0, 100.0, 2, walltime=150.0),
        JobSpec(2, 0.0, 80.0, 2, kind=m, min_nodes=1, max_nodes=4, reconfig=FixedCost(5.0)),
        JobSpec(
            3, 0.0, 60.0, 2, kind=mold, min_nodes=1, max_nodes=4, size_rule=SizeRule.POWER_OF_TWO
        ),
        JobSpec(4, 5.0, 0.0, 1),
        JobSpec(5, 5.0, 40.0, 1, kind=JobKind.EVOLVING, evolution=((10.0, 1), (10.0, 3))),
        JobSpec(6, 10.0, 30.0, 1, cpu_need=0.5, mem=0.3),
    ]
    return Simulator(Platform.multi([4, 2]), jobs, SimConfig(tick=tick))


def _np_int(x: int) -> object:
    return np.int64(x)


odd_scalars = st.sampled_from(
    [
        None,
        True,
        False,
        np.bool_(True),
        "1",
        "",
        b"1",
        1.5,
        -1,
        0,
        2**70,
        -(2**70),
        math.nan,
        math.inf,
        -math.inf,
        np.float64(2.0),
        np.float32(0.5),
        np.int8(1),
        np.uint64(2),
        1e300,
        complex(1, 0),
        [1],
        (),
        {},
    ]
)
job_ids = st.one_of(st.sampled_from(IDS), st.sampled_from(IDS).map(_np_int), odd_scalars)
sizes = st.one_of(st.integers(-1, 9), st.integers(0, 9).map(np.int32), odd_scalars)
node_lists = st.one_of(
    st.none(),
    st.lists(st.integers(-1, 7), max_size=5),
    st.lists(st.integers(0, 7), max_size=5).map(lambda x: np.array(x, dtype=np.uint8)),
    st.lists(st.floats(0, 7), max_size=4),
    st.lists(st.booleans(), max_size=4),
    st.lists(odd_scalars, max_size=3),
    st.sampled_from(["0 1", [[0, 1], [2]], np.zeros((2, 2), dtype=int), 3, np.array(3.5)]),
)
shares = st.one_of(
    st.none(),
    st.floats(-0.5, 1.5),
    st.lists(st.floats(0, 1.2), max_size=4),
    odd_scalars,
)
times = st.one_of(st.floats(-10, 500), odd_scalars)

commands = st.one_of(
    st.tuples(st.just("start"), job_ids, sizes, node_lists, shares, odd_scalars),
    st.tuples(st.just("start_plain"), job_ids),
    st.tuples(st.just("resize"), job_ids, sizes, node_lists),
    st.tuples(st.just("shrink"), job_ids, sizes, node_lists),
    st.tuples(st.just("expand"), job_ids, sizes, node_lists),
    st.tuples(st.just("grant"), job_ids, node_lists),
    st.tuples(st.just("suspend"), job_ids),
    st.tuples(st.just("resume"), job_ids, node_lists, shares, odd_scalars),
    st.tuples(st.just("migrate"), job_ids, node_lists, shares),
    st.tuples(st.just("set_shares"), job_ids, shares),
    st.tuples(st.just("wake_at"), times),
    st.tuples(st.just("set_walltime"), job_ids, times),
    st.tuples(st.just("reject"), job_ids),
    st.tuples(st.just("advance")),
    st.tuples(st.just("advance")),
)


def issue(sim: Simulator, cmd: tuple) -> None:
    name, *args = cmd
    if name == "start":
        jid, size, nodes, cpu, cluster = args
        kwargs = {"nodes": nodes, "cpu": cpu}
        if cluster is not None:
            kwargs["cluster"] = cluster
        sim.start(jid, size, **kwargs)
    elif name == "start_plain":
        sim.start(args[0])
    elif name == "resize":
        jid, size, nodes = args
        sim.resize(jid, size, nodes=nodes)
    elif name == "shrink":
        jid, size, release = args
        sim.shrink(jid, size, release=release)
    elif name == "expand":
        jid, size, nodes = args
        sim.expand(jid, size, nodes=nodes)
    elif name == "grant":
        sim.grant(args[0], nodes=args[1])
    elif name == "resume":
        jid, nodes, cpu, cluster = args
        sim.resume(jid, nodes=nodes, cpu=cpu, cluster=cluster)
    elif name == "migrate":
        sim.migrate(args[0], args[1], cpu=args[2])
    else:
        getattr(sim, name)(*args)


def run_sequence(cmds: list[tuple], tick: float | None, state, limit) -> None:
    sim = world(tick)
    with limit(20):
        sim.advance()
        for cmd in cmds:
            if cmd[0] == "advance":
                try:
                    if not sim.advance():
                        return
                except StalledError:
                    return
                state.check(sim)
                continue
            before = state.snapshot(sim)
            try:
                issue(sim, cmd)
            except HpcGymError:
                assert state.same(state.snapshot(sim), before), cmd
            except Exception as e:  # the contract: nothing but hpcgym's own errors
                pytest.fail(f"{cmd!r} raised {type(e).__name__}: {e}")
            state.check(sim)
        # Whatever happened, the run can be finished by a plain scheduler.
        for _ in range(10_000):
            for jid in list(sim.queue):
                try:
                    sim.start(jid)
                except HpcGymError:
                    break
            for jid, job in list(sim.jobs.items()):
                if job.state.value == "suspended":
                    with contextlib.suppress(HpcGymError):
                        sim.resume(jid)
                elif job.request:
                    with contextlib.suppress(HpcGymError):
                        sim.grant(jid)
            try:
                if not sim.advance():
                    break
            except StalledError:
                for jid in list(sim.queue):
                    sim.reject(jid)
        summary = sim.result().summary
    assert all(math.isfinite(v) for v in summary.values()), summary


@FAST
@given(cmds=st.lists(commands, max_size=25), tick=st.sampled_from([None, 7.0]))
def test_commands_with_odd_values_succeed_or_refuse_cleanly(cmds, tick, state, limit):
    run_sequence(cmds, tick, state, limit)


@pytest.mark.slow
@LONG
@given(cmds=st.lists(commands, max_size=60), tick=st.sampled_from([None, 7.0, 600.0]))
def test_commands_with_odd_values_long(cmds, tick, state, limit):
    run_sequence(cmds, tick, state, limit)
