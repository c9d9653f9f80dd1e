"""Planner agents (``hpcgym.agents.engine.lookahead``): exact forward plays, sampling, cards, bench.

A planner scores a candidate by playing F1's reserve rule (with or without backfilling)
forward over the queue and sampled arrivals. Its claims rest on those forward plays being the
engine's rules: played over a sequence's true arrivals (run times exact on lublin_256), from
an empty machine or from a busy mid-episode state, the total bounded slowdown must be the
engine's ``f1-reserve`` (``f1-reserve-bf``) schedule's, to rounding.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hpcgym.agents.engine.lookahead as rp
from hpcgym.agents.engine.lookahead import LookaheadReserve, PlannerCard
from hpcgym.baselines.base import estimated_end, runtime_estimate
from hpcgym.baselines.priority import PriorityReserve, f1_score
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench import scenarios
from hpcgym.bench.episode import run_episode, score_scheduler
from hpcgym.cli import main
from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, Simulator
from hpcgym.workloads.registry import load

LENGTH = 1024
LUBLIN = "rlsched/lublin256-v0"
TEST = "rlsched-lublin-test-v0"


@cache
def _lublin() -> Any:
    return load(LUBLIN)


def _sequence(index: int, where: str = TEST) -> list[JobSpec]:
    start = scenarios.get(where).env_kwargs["window_starts"][index]
    return list(_lublin().jobs[start : start + LENGTH])


def _f1(jobs: list[JobSpec], backfill: bool) -> float:
    sim = Simulator(_lublin().platform, jobs, CONFIG)
    PriorityReserve("f1", backfill).run(sim)
    return float(sim.result().summary["mean_bsld"])


@pytest.mark.parametrize(
    ("where", "index", "backfill"),
    [
        (TEST, 0, False),
        ("rlsched-lublin-v0", 3, False),
        ("rlsched-lublin-bf-test-v0", 0, True),
        ("rlsched-lublin-bf-test-v0", 2, True),
        ("rlsched-lublin-bf-v0", 5, True),
    ],
)
def test_forward_play_of_a_whole_sequence_is_the_engine_schedule(
    where: str, index: int, backfill: bool
) -> None:
    jobs = _sequence(index, where)
    items = [rp.item(j.submit, runtime_estimate(j), j.nodes) for j in jobs]
    forward = rp.forward_cost_backfill if backfill else rp.forward_cost
    total = forward(items[0][1], 256, [], items[:1], 0, items[1:])
    assert total / len(jobs) == pytest.approx(_f1(jobs, backfill), rel=1e-9)


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
    jobs = _sequence(1)
    seen: dict[str, object] = {}

    class Capture(PriorityReserve):
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
                    [(estimated_end(sim, j), j.size) for j in sim.running.values()],
                    [rp.item(j.spec.submit, j.spec.work, j.spec.nodes) for j in ranked],
                    0,
                    [rp.item(j.submit, j.work, j.nodes) for j in jobs if j.submit > sim.now],
                )
            return choice

    sim = Simulator(_lublin().platform, jobs, CONFIG)
    Capture("f1", backfill).run(sim)
    columns = sim.result().columns
    bsld = dict(zip(columns["id"].tolist(), columns["bsld"].tolist(), strict=True))
    assert seen["blocked"] is blocked
    assert len(seen["ids"]) > 10  # type: ignore[arg-type]
    expected = sum(bsld[i] for i in seen["ids"])  # type: ignore[attr-defined]
    assert seen["cost"] == pytest.approx(expected, rel=1e-9)


def _planner(pool: list[JobSpec], **kw: Any) -> LookaheadReserve:
    opts: dict[str, Any] = {"candidates": 3, "horizon": 8, "samples": 2}
    opts.update(kw)
    return LookaheadReserve(pool, 256, **opts)


def _play(sched: Any, jobs: list[JobSpec]) -> np.ndarray:
    jobs_, config = sched.setting(jobs, CONFIG)
    sim = Simulator(_lublin().platform, jobs_, config)
    sched.run(sim)
    return np.asarray(sim.result().columns["start"])


def test_one_candidate_is_f1_and_more_change_the_schedule() -> None:
    jobs = _sequence(4)[:300]
    pool = list(_lublin().jobs[:2000])
    f1 = _play(PriorityReserve("f1"), jobs)
    assert np.array_equal(_play(_planner(pool, candidates=1), jobs), f1)
    assert not np.array_equal(_play(_planner(pool), jobs), f1)


def test_an_episode_plays_the_same_whatever_ran_before() -> None:
    pool = list(_lublin().jobs[:2000])
    a, b = _sequence(4)[:300], _sequence(7)[:300]
    sched = _planner(pool)
    first = _play(sched, a)
    _play(sched, b)
    assert np.array_equal(_play(sched, a), first)
    assert np.array_equal(_play(_planner(pool), a), first)
    assert not np.array_equal(_play(_planner(pool, seed=1), a), first)


def test_sampled_runs_never_hold_a_job_of_the_episode() -> None:
    trace = list(_lublin().jobs)
    jobs = trace[1500:1800]
    sched = _planner(trace[:3000], horizon=16, skip_own=True)
    _play(sched, jobs)
    assert len(sched._starts) > 0
    for i in sched._starts:
        assert i + 16 <= 1500 or i - 1 >= 1800
    # Without the rule, runs through the episode are sampled from.
    free = _planner(trace[:3000], horizon=16)
    _play(free, jobs)
    assert any(1500 <= i < 1800 for i in free._starts)
    for run in sched._futures(jobs[10].submit):
        assert len(run) == 16
        assert all(a[1] > jobs[10].submit for a in run)


def test_pool_nodes_are_scaled_to_the_episode_machine() -> None:
    pool = [
        JobSpec(id=i + 1, submit=float(i), work=10.0, nodes=n) for i, n in enumerate((1, 64, 100))
    ]
    sched = LookaheadReserve(pool * 1, 100, candidates=2, horizon=1, samples=1)
    jobs = _sequence(0)[:50]
    _play(sched, jobs)  # a 256-node machine: 100 pool nodes are 256
    assert [x[2] for x in sched._items] == [3, 164, 256]


def test_bad_settings_are_refused() -> None:
    pool = list(_lublin().jobs[:100])
    with pytest.raises(SpecError, match="candidates"):
        LookaheadReserve(pool, 256, candidates=0)
    with pytest.raises(SpecError, match="too few"):
        LookaheadReserve(pool, 256, horizon=100)
    with pytest.raises(SpecError, match="samples"):
        LookaheadReserve(pool, 256, samples=1.5)  # type: ignore[arg-type]


def _card(tmp_path: Path, backfill: bool = False, **kw: Any) -> Path:
    kwargs = dict(scenarios.get(TEST).env_kwargs, reserve_backfill=backfill)
    card = PlannerCard("hpcgym/Rigid-v0", kwargs, LUBLIN, "train", 3, 8, 2, **kw)
    folder = tmp_path / ("planner-bf" if backfill else "planner")
    folder.mkdir()
    (folder / "planner.json").write_text(card.to_json())
    return folder


def test_a_card_round_trips_and_plays_through_the_benchmark(tmp_path: Path) -> None:
    folder = _card(tmp_path, backfill=True)
    card = PlannerCard.from_json((folder / "planner.json").read_text())
    assert card.backfill and (card.candidates, card.horizon, card.samples) == (3, 8, 2)
    sc = scenarios.get("rlsched-lublin-bf-v0")
    sched = score_scheduler(str(folder), sc.env_id, sc.env_kwargs)
    assert isinstance(sched, LookaheadReserve) and sched.skip_own and sched.backfill
    other = scenarios.get("rlsched-sdsc-sp2-bf-v0")
    assert not score_scheduler(str(folder), other.env_id, other.env_kwargs).skip_own
    out = run_episode(str(folder), sc.env_id, sc.seeds[0], sc.env_kwargs)
    again = run_episode(str(folder), sc.env_id, sc.seeds[0], sc.env_kwargs)
    assert out.summary == again.summary
    assert (
        out.summary["mean_bsld"]
        != run_episode("f1-reserve-bf", sc.env_id, sc.seeds[0], sc.env_kwargs).summary["mean_bsld"]
    )


def test_a_card_of_another_mode_or_a_bad_card_is_refused(tmp_path: Path) -> None:
    folder = _card(tmp_path)
    sc = scenarios.get("rlsched-lublin-bf-test-v0")
    with pytest.raises(SpecError, match="without backfilling"):
        score_scheduler(str(folder), sc.env_id, sc.env_kwargs)
    with pytest.raises(SpecError, match="reserve mode"):
        PlannerCard("hpcgym/Rigid-v0", {"n_jobs": 64}, LUBLIN)
    raw = json.loads((folder / "planner.json").read_text())
    for bad in ({"format": "x"}, {"horizon": 2.5}, {"pool_workload": None} | {"env_id": 3}):
        with pytest.raises(SpecError, match="not a planner card"):
            PlannerCard.from_json(json.dumps(raw | bad))
    del raw["pool_workload"]
    with pytest.raises(SpecError, match="not a planner card"):
        PlannerCard.from_json(json.dumps(raw))


def test_cards_are_written_per_seed_and_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "planners"
    argv = ["--out", str(out), "--seeds", "0-1", "--backfill", "--horizon", "16", "--note", "x"]
    assert main(["write-planners", *argv]) == 0
    assert capsys.readouterr().out.split() == [str(out / f"s{s}" / "planner.json") for s in (0, 1)]
    cards = [PlannerCard.from_json((out / f"s{s}" / "planner.json").read_text()) for s in (0, 1)]
    assert [c.seed for c in cards] == [0, 1]
    assert all(c.backfill and c.horizon == 16 and c.training == {"note": "x"} for c in cards)
    before = (out / "s1" / "planner.json").read_text()
    assert main(["write-planners", "--out", str(out), "--seeds", "1-2", "--horizon", "64"]) == 2
    assert "hpcgym: error: planner cards exist, not overwritten" in capsys.readouterr().err
    assert (out / "s1" / "planner.json").read_text() == before
    assert not (out / "s2").exists()
    assert main(["write-planners", "--out", str(tmp_path / "bad"), "--candidates", "0"]) == 2
    assert "hpcgym: error: " in (err := capsys.readouterr().err) and "candidates" in err
    assert not (tmp_path / "bad").exists()
