"""``metrics.episode_summary`` (the env's episode end) computes the summary without the per-job
table when the C core is there (``_batchcore.column_stats``); it must give the same floats, bit
for bit, as ``sim.result().summary``."""

from __future__ import annotations

import contextlib
import math
import struct
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import hpcgym  # noqa: F401
from hpcgym.errors import CapacityError
from hpcgym.sim import Platform, Simulator, metrics
from hpcgym.sim.spec import JobKind, JobSpec

_needs_core = pytest.mark.skipif(
    metrics._SUMMARY_READERS is None, reason="pure-Python install: no C summary"
)


def _bits(summary: dict[str, float]) -> list[tuple[str, bytes]]:
    return [(k, struct.pack("<d", v)) for k, v in summary.items()]


@_needs_core
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("hpcgym/Rigid-v0", {"kill_on_walltime": True}),
        ("hpcgym/Rigid-v0", {"selection": "reserve", "reserve_backfill": True}),
        ("hpcgym/Malleable-v1", {}),
        ("hpcgym/Evolving-v0", {}),
        ("hpcgym/Shared-v1", {}),
        ("hpcgym/MultiCluster-v0", {}),
    ],
)
def test_episode_summary_equals_the_result_summary(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **kwargs)
    sim_of = env.unwrapped
    rng = np.random.default_rng(3)
    _, info = env.reset(seed=3)
    checked = ended = 0
    for step in range(3000):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if step % 25 == 0 or term or trunc:  # mid-episode (unfinished jobs) and at the end
            sim = sim_of.sim
            assert _bits(metrics.episode_summary(sim)) == _bits(sim.result().summary)
            checked += 1
        if term or trunc:
            ended += 1
            _, info = env.reset()
    assert checked > 20


@_needs_core
def test_episode_summary_with_kills_rejections_and_zero_work() -> None:
    """Killed jobs' lost work (a rigid and an evolving job), a rejected job, an infinite stretch."""
    jobs = [
        JobSpec(1, 0.0, work=30.0, nodes=2, walltime=20.0),
        JobSpec(
            2,
            0.0,
            work=0.0,
            nodes=1,
            kind=JobKind.EVOLVING,
            evolution=((10.0, 1), (10.0, 2)),
            walltime=15.0,
        ),
        JobSpec(3, 1.0, work=0.0, nodes=1),
        JobSpec(4, 2.0, work=5.0, nodes=9),
        JobSpec(5, 3.0, work=7.5, nodes=1),
    ]
    sim = Simulator(Platform.single(4), jobs)
    seen = 0
    while sim.advance():
        for job_id in list(sim.queue):
            if sim.free_nodes() >= sim.queue[job_id].spec.nodes:
                sim.start(job_id)
        for job in list(sim.running.values()):
            if job.request:
                with contextlib.suppress(CapacityError):  # it waits for nodes
                    sim.grant(job.id)
        assert _bits(metrics.episode_summary(sim)) == _bits(sim.result().summary)
        seen += 1
    summary = metrics.episode_summary(sim)
    assert _bits(summary) == _bits(sim.result().summary)
    assert (summary["killed"], summary["rejected"]) == (2.0, 1.0)
    assert summary["lost_work"] > 0.0
    assert seen > 3


_floats = st.one_of(
    st.floats(-1e9, 1e9, allow_nan=False),
    st.sampled_from([0.0, 1.0, 9.5, 10.0, 10.5, math.nan, math.inf]),
)


@_needs_core
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_floats, _floats, _floats, _floats, _floats), min_size=1, max_size=400),
    st.sampled_from([1.0, 10.0, 60.0]),
)
# Ends at +0.0 and -0.0: numpy's maximum kept -0.0, the C core +0.0 (a zero makespan is +0.0).
@example([(0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0), (1.0, 1.0, -0.0, 0.0, 0.0)], 1.0)
def test_column_stats_equal_numpy(rows: list[tuple[float, ...]], tau: float) -> None:
    """The per-job statistics against ``derive_columns`` and ``summary_of``'s numpy code."""
    from hpcgym.sim import _batchcore

    submit, start, end, work, waste = ([r[i] for r in rows] for i in range(5))
    n = len(rows)
    base = {
        "id": np.arange(n),
        "kind": np.zeros(n),
        "state": np.zeros(n),
        "submit": np.array(submit),
        "start": np.array(start),
        "end": np.array(end),
        "requested_nodes": np.ones(n, dtype=np.int64),
        "max_nodes_held": np.ones(n, dtype=np.int64),
        "work": np.array(work),
        "waste": np.array(waste),
        "reconfigurations": np.zeros(n, dtype=np.int64),
        "preemptions": np.zeros(n, dtype=np.int64),
        "migrations": np.zeros(n, dtype=np.int64),
        "lost_work": np.zeros(n),
    }
    with np.errstate(all="ignore"):
        columns = metrics.derive_columns(base, tau)
        totals = metrics.EpisodeTotals(n, n, 0, 0, 1.0, 0.0, 0.0, 0.0, 0.0)
        try:
            want = metrics.summary_of(columns, totals, metrics.SimConfig())
        except metrics.SpecError:
            return  # an infinite statistic: the summary refuses it either way
    got = _batchcore.column_stats(submit, start, end, work, waste, tau)
    if got is None:  # a statistic of a started job is -0.0: left to numpy
        started = ~np.isnan(columns["start"])
        values = np.concatenate([columns[name][started] for name in metrics._MEANS])
        assert bool(np.any((values == 0.0) & np.signbit(values)))
        return
    for i, name in enumerate(metrics._MEANS):
        assert struct.pack("<d", got[2 * i]) == struct.pack("<d", want[f"mean_{name}"]), name
        assert struct.pack("<d", got[2 * i + 1]) == struct.pack("<d", want[f"max_{name}"]), name
    first, last = got[-2], got[-1]
    makespan = (first if math.isnan(last) else last) - first + 0.0  # as ``_finish`` does
    assert (math.isnan(makespan) and math.isnan(want["makespan"])) or struct.pack(
        "<d", makespan
    ) == struct.pack("<d", want["makespan"])
