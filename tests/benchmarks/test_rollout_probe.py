"""The lookahead probe's forward plays are F1's reserve modes, exactly, when they know the future.

``benchmarks/rollout_probe.py`` scores a candidate by playing F1's reserve rule (with or
without backfilling) forward over the queue and sampled arrivals. Its claims rest on those
forward plays being the engine's rules: played from an empty machine over a whole sequence's
true arrivals (run times exact on lublin_256), the total bounded slowdown must be the engine's
``f1-reserve`` (``f1-reserve-bf``) schedule's, to rounding.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import rollout_probe as rp  # noqa: E402

from hpcgym.baselines.base import runtime_estimate  # noqa: E402
from hpcgym.baselines.priority import f1_score  # noqa: E402
from hpcgym.sim import JobSpec  # noqa: E402


@pytest.mark.parametrize(
    ("where", "index", "backfill"),
    [
        ("rlsched-lublin-test-v0", 0, False),
        ("tune", 3, False),
        ("rlsched-lublin-bf-test-v0", 0, True),
        ("rlsched-lublin-bf-test-v0", 2, True),
        ("tune", 5, True),
    ],
)
def test_forward_play_of_a_whole_sequence_is_the_engine_schedule(
    where: str, index: int, backfill: bool
) -> None:
    name, starts, _ = rp.setup(where, "lublin")
    workload = rp._workload(name)
    jobs = workload.jobs[starts[index] : starts[index] + rp.LENGTH]
    items = [rp.item(j.submit, runtime_estimate(j), j.nodes) for j in jobs]
    nodes = workload.platform.clusters[0].nodes
    forward = rp.forward_cost_backfill if backfill else rp.forward_cost
    total = forward(items[0][1], nodes, [], items[:1], 0, items[1:])
    engine = rp.play((where, "lublin", index, backfill, None))
    assert total / len(jobs) == pytest.approx(engine, rel=1e-9)


@pytest.mark.parametrize("forward", [rp.forward_cost, rp.forward_cost_backfill])
def test_a_different_first_choice_changes_the_forward_play(forward) -> None:  # type: ignore[no-untyped-def]
    # Two jobs queued on a 4-node machine, both needing all of it: the order decides who waits.
    queue = [rp.item(0.0, 100.0, 4), rp.item(0.0, 1000.0, 4)]
    short_first = forward(0.0, 4, [], queue, 0, [])
    long_first = forward(0.0, 4, [], queue, 1, [])
    assert short_first == pytest.approx(1.0 + 1100.0 / 1000.0)
    assert long_first == pytest.approx(1.0 + 1100.0 / 100.0)


def test_backfilling_forward_play_starts_a_job_that_ends_before_the_reservation() -> None:
    # 4 nodes, 2 busy until t=100; the committed job needs 4 (reserved at 100). A 2-node job of
    # 50 s backfills at 0 (bsld 5.0); one of 150 s would not (it waits for the first).
    running = [(100.0, 2)]
    short = [rp.item(0.0, 100.0, 4), rp.item(0.0, 50.0, 2)]
    assert rp.forward_cost_backfill(0.0, 2, running, short, 0, []) == pytest.approx(2.0 + 1.0)
    assert rp.forward_cost(0.0, 2, running, short, 0, []) == pytest.approx(2.0 + 250.0 / 50.0)
    long = [rp.item(0.0, 100.0, 4), rp.item(0.0, 150.0, 2)]
    assert rp.forward_cost_backfill(0.0, 2, running, long, 0, []) == pytest.approx(
        2.0 + 350.0 / 150.0
    )


def test_item_keys_are_f1_scores() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        submit = float(rng.choice([0.0, rng.uniform(0, 1e7)]))
        run = float(rng.choice([0.0, 0.05, rng.uniform(0, 1e5)]))
        n = int(rng.integers(1, 257))
        spec = JobSpec(id=0, submit=submit, work=run, nodes=n)
        assert math.isclose(rp.item(submit, run, n)[0], f1_score(spec, 0.0, 0.0), abs_tol=1e-9)


def test_sampled_runs_never_touch_the_sequence_played() -> None:
    pool = [(float(i), 10.0, 1) for i in range(200)]
    planner = rp.SampledLookahead(pool, 4, 16, 8, seed=0, skip=(50, 120))
    assert len(planner.starts) > 0
    for i in planner.starts:
        assert i + 16 <= 50 or i - 1 >= 120
    for run in planner._futures(1000.0):
        assert len(run) == 16
        assert all(a[1] > 1000.0 for a in run)


@pytest.mark.parametrize(
    ("backfill", "at", "blocked"),
    [(False, 40, True), (False, 200, False), (True, 40, True), (True, 200, True)],
)
def test_forward_play_from_a_mid_episode_state_is_the_engine_schedule(
    backfill: bool, at: int, blocked: bool
) -> None:
    """From the state at the ``at``-th choice (busy machine, queue; ``blocked``: the choice does
    not fit, so the play starts by reserving for it), F1's choice played forward over the true
    arrivals gives the engine's remaining schedule."""
    name, starts, _ = rp.setup("rlsched-lublin-test-v0", "lublin")
    workload = rp._workload(name)
    jobs = workload.jobs[starts[1] : starts[1] + rp.LENGTH]
    seen: dict[str, object] = {}

    class Capture(rp.PriorityReserve):
        calls = 0

        def choose(self, sim, free):  # type: ignore[no-untyped-def]
            choice = super().choose(sim, free)
            Capture.calls += 1
            if Capture.calls == at:
                ranked = sorted(sim.queue.values(), key=lambda j: self._rank.key(j, sim.now))
                assert ranked[0].spec.id == choice
                seen["blocked"] = ranked[0].spec.nodes > free
                seen["ids"] = [j.spec.id for j in ranked] + [
                    j.id for j in jobs if j.submit > sim.now
                ]
                seen["cost"] = (rp.forward_cost_backfill if backfill else rp.forward_cost)(
                    sim.now,
                    free,
                    [(rp.estimated_end(sim, j), j.size) for j in sim.running.values()],
                    [rp.item(j.spec.submit, j.spec.work, j.spec.nodes) for j in ranked],
                    0,
                    [rp.item(j.submit, j.work, j.nodes) for j in jobs if j.submit > sim.now],
                )
            return choice

    sim = rp.Simulator(workload.platform, jobs, rp.CONFIG)
    Capture("f1", backfill).run(sim)
    columns = sim.result().columns
    bsld = dict(zip(columns["id"].tolist(), columns["bsld"].tolist(), strict=True))
    assert seen["blocked"] is blocked
    assert len(seen["ids"]) > 10  # type: ignore[arg-type]
    expected = sum(bsld[i] for i in seen["ids"])  # type: ignore[attr-defined]
    assert seen["cost"] == pytest.approx(expected, rel=1e-9)
