"""Distilled planners (``hpcgym.agents.engine.distill``, ``hpcgym.agents.rl.distill_fit``):
features, the recorder, fitting, cards, bench."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hpcgym.agents.engine.distill as ds
import hpcgym.agents.rl.distill_fit as fitting
from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.engine.distill import (
    WIDTH,
    DistilledCard,
    DistilledReserve,
    Recorder,
    choice_features,
)
from hpcgym.agents.engine.lookahead import LookaheadReserve
from hpcgym.agents.rl.distill_fit import fit
from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.priority import PriorityReserve, f1_score
from hpcgym.baselines.rlsched_setting import CONFIG
from hpcgym.bench import scenarios
from hpcgym.bench.episode import run_episode, score_scheduler
from hpcgym.cli import main
from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, Platform, Simulator
from hpcgym.workloads.registry import load

LUBLIN = "rlsched/lublin256-v0"


@cache
def _lublin() -> Any:
    return load(LUBLIN)


def _sequence(index: int, where: str = "rlsched-lublin-test-v0", length: int = 300) -> list:
    start = scenarios.get(where).env_kwargs["window_starts"][index]
    return list(_lublin().jobs[start : start + length])


def _starts(sched: Any, jobs: list[JobSpec]) -> np.ndarray:
    jobs_, config = sched.setting(jobs, CONFIG)
    sim = Simulator(_lublin().platform, jobs_, config)
    sched.run(sim)
    return np.asarray(sim.result().columns["start"])


def test_choice_features_by_hand() -> None:
    # 10 nodes, every job submitted at 0. At t=0, C (2 nodes, 10 s) and D (4 nodes, 300 s)
    # start; at t=10 C has ended: 6 nodes idle, D ends at 300, queued A (6 x 100 s),
    # B (8 x 50 s), E (1 x 5 s), given in that order.
    specs = {
        name: JobSpec(id=i + 1, submit=0.0, work=work, nodes=n)
        for i, (name, work, n) in enumerate(
            [("A", 100.0, 6), ("B", 50.0, 8), ("C", 10.0, 2), ("D", 300.0, 4), ("E", 5.0, 1)]
        )
    }
    seen: dict[str, np.ndarray] = {}

    class Capture(BaseScheduler):
        name = "capture"

        def schedule(self, sim: Simulator) -> None:
            if sim.now == 0.0:
                sim.start(specs["C"].id)
                sim.start(specs["D"].id)
                return
            if "x" not in seen:
                queued = [sim.queue[specs[k].id] for k in "ABE"]
                keys = [f1_score(j.spec, sim.now, 0.0) for j in queued]
                seen["x"] = choice_features(sim, sim.pool.free[0], queued, keys, 4)
                seen["keys"] = np.array(keys)
            for jid, job in list(sim.queue.items()):
                if job.spec.nodes <= sim.pool.free[0]:
                    sim.start(jid)

    sim = Simulator(Platform.single(10), list(specs.values()), CONFIG)
    Capture().run(sim)
    x, keys = seen["x"], seen["keys"]
    assert x.shape == (3, WIDTH)
    lg = math.log10
    wait = lg(11) / 6
    dkey = [math.asinh((k - keys[0]) / 100) / 5 for k in keys]
    expected = [
        [0, lg(100) / 5, 0.6, 1, lg(61) / 5, 0, wait, 0, 0],
        [1 / 3, lg(50) / 5, 0.8, 0, lg(41) / 5, lg(291) / 5, wait, math.log2(3) / 8, dkey[1]],
        [2 / 3, lg(5) / 5, 0.1, 1, lg(1.5) / 5, 0, wait, 0, dkey[2]],
    ]
    day = 2 * math.pi * 10 / 86_400
    state = [0.6, 0.2, lg(101.5) / 6, lg(117) / 6, math.sin(day), math.cos(day)]
    for row, want in zip(x, expected, strict=True):
        np.testing.assert_allclose(row, want + state, rtol=1e-12, atol=1e-15)


def _rank_network(sign: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """One linear layer scoring ``sign * rank``: -1 plays F1's order, +1 the reverse."""
    w = np.zeros((WIDTH, 1))
    w[0, 0] = sign
    return [(w, np.zeros(1))]


@pytest.mark.parametrize("backfill", [False, True])
def test_a_network_preferring_f1_order_plays_f1(backfill: bool) -> None:
    jobs = _sequence(2)
    f1 = _starts(PriorityReserve("f1", backfill), jobs)
    assert np.array_equal(_starts(DistilledReserve(_rank_network(-1.0), 4, backfill), jobs), f1)
    assert np.array_equal(_starts(DistilledReserve(_rank_network(1.0), 1, backfill), jobs), f1)
    assert not np.array_equal(_starts(DistilledReserve(_rank_network(1.0), 4, backfill), jobs), f1)


def test_choices_are_among_f1s_best_candidates() -> None:
    ranks: list[int] = []

    class Watch(DistilledReserve):
        def choose(self, sim: Simulator, free: int) -> int:
            choice = super().choose(sim, free)
            order = sorted(sim.queue.values(), key=lambda j: self._rank.key(j, sim.now))
            ranks.append([j.spec.id for j in order].index(choice))
            return choice

    _starts(Watch(_rank_network(1.0), 3), _sequence(3))
    assert max(ranks) == 2 and ranks.count(2) > 10


def test_the_recorder_plays_as_the_planner_and_records_each_choice() -> None:
    jobs = _sequence(4)
    pool = list(_lublin().jobs[:2000])
    opts: dict[str, Any] = {"candidates": 3, "horizon": 8, "samples": 2, "backfill": True}
    planner = _starts(LookaheadReserve(pool, 256, **opts), jobs)
    rec = Recorder(pool, 256, **opts)
    assert np.array_equal(_starts(rec, jobs), planner)
    assert len(rec.rows) > 20
    for x, costs in rec.rows:
        assert x.shape == (min(3, len(costs)), WIDTH) and len(costs) >= 2
        assert all(c >= 1.0 for c in costs)  # a bounded slowdown is at least 1 per job


def test_a_recorder_following_a_network_plays_as_the_network() -> None:
    jobs = _sequence(5)
    pool = list(_lublin().jobs[:2000])
    opts: dict[str, Any] = {"candidates": 3, "horizon": 8, "samples": 2, "backfill": True}
    net = _rank_network(1.0)  # the reverse of F1's order among the 3 best
    played = _starts(DistilledReserve(net, 3, True), jobs)
    rec = Recorder(pool, 256, follow=net, **opts)
    assert np.array_equal(_starts(rec, jobs), played)
    assert not np.array_equal(played, _starts(LookaheadReserve(pool, 256, **opts), jobs))
    # The planner's costs are noted at each of the network's choices; the network (the last
    # candidate) is often not the planner's cheapest.
    assert len(rec.rows) > 20
    assert all(len(c) >= 2 and min(c) >= 1.0 for _, c in rec.rows)
    assert sum(ds.cheapest(c) != len(c) - 1 for _, c in rec.rows) > 5
    with pytest.raises(SpecError, match="do not chain"):
        Recorder(pool, 256, follow=[(np.zeros((3, 1)), np.zeros(1))], **opts)


def _synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Choices whose best candidate is the one with the largest feature 3 (zero-padded)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 4, WIDTH))
    costs = 10.0 - 5.0 * x[:, :, 3] + rng.normal(0, 0.05, (n, 4))
    absent = rng.random(n) < 0.3
    x[absent, 3] = 0.0
    costs[absent, 3] = np.nan
    return x, costs


@pytest.mark.parametrize("loss", ["regret", "choice"])
def test_fitting_learns_the_rule_behind_the_choices(loss: str) -> None:
    x, costs = _synthetic(4000, 0)
    layers, report = fit(x, costs, hidden=16, epochs=15, seed=0, loss=loss)
    assert report["held_agreement"] > 0.9
    assert report["held_regret"] < 0.2 * report["held_regret_f1"]
    assert report["losses"][-1] < report["losses"][0]
    again, _ = fit(x, costs, hidden=16, epochs=15, seed=0, loss=loss)
    for (w, b), (w2, b2) in zip(layers, again, strict=True):
        assert np.array_equal(w, w2) and np.array_equal(b, b2)


def test_a_merged_network_scores_the_members_mean() -> None:
    rng = np.random.default_rng(3)

    def net() -> list[tuple[np.ndarray, np.ndarray]]:
        shapes = [(WIDTH, 6), (6, 6), (6, 1)]
        return [(rng.normal(size=s), rng.normal(size=s[1])) for s in shapes]

    members = [net() for _ in range(3)]
    x = rng.normal(size=(50, WIDTH))
    merged = ds.merge(members)
    assert [w.shape for w, _ in merged] == [(WIDTH, 18), (18, 18), (18, 1)]
    mean = np.mean([ds.scores(m, x) for m in members], axis=0)
    np.testing.assert_allclose(ds.scores(merged, x), mean, rtol=1e-12)
    with pytest.raises(SpecError, match="different shapes"):
        ds.merge([members[0], members[1][:1] + members[1][1:2] + [(np.zeros((5, 1)), np.zeros(1))]])


def _card(backfill: bool, layers: list[tuple[np.ndarray, np.ndarray]] | None = None) -> Any:
    kwargs = dict(scenarios.get("rlsched-lublin-test-v0").env_kwargs, reserve_backfill=backfill)
    net = layers if layers is not None else _rank_network(-1.0)
    return DistilledCard("hpcgym/Rigid-v0", kwargs, [[[w.tolist(), b.tolist()] for w, b in net]])


def test_a_card_round_trips_and_plays_through_the_benchmark(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "distilled.json").write_text(_card(True).to_json())
    card = load_engine_card(folder)
    assert isinstance(card, DistilledCard) and card.backfill and card.candidates == 4
    assert card == DistilledCard.from_json(card.to_json())
    sc = scenarios.get("rlsched-lublin-bf-v0")
    assert isinstance(score_scheduler(str(folder), sc.env_id, sc.env_kwargs), DistilledReserve)
    # A network preferring F1's order is F1, through the benchmark too.
    mine = run_episode(str(folder), sc.env_id, sc.seeds[0], sc.env_kwargs).summary
    f1 = run_episode("f1-reserve-bf", sc.env_id, sc.seeds[0], sc.env_kwargs).summary
    assert mine == f1
    other = scenarios.get("rlsched-lublin-v0")
    with pytest.raises(SpecError, match="without backfilling"):
        score_scheduler(str(folder), other.env_id, other.env_kwargs)


def test_bad_cards_and_networks_are_refused() -> None:
    raw = json.loads(_card(False).to_json())
    for bad in (
        {"format": "x"},
        {"features": ["rank"]},
        {"candidates": 2.5},
        {"members": [[[[[1.0]], [0.0]]]]},
        {"members": "x"},
        {"members": []},
    ):
        with pytest.raises(SpecError, match="not a distilled planner card"):
            DistilledCard.from_json(json.dumps(raw | bad))
    with pytest.raises(SpecError, match="do not chain"):
        DistilledCard.from_json(json.dumps(raw | {"members": [[[[[1.0]], [0.0]]]]}))
    with pytest.raises(SpecError, match="reserve mode"):
        DistilledCard("hpcgym/Rigid-v0", {"n_jobs": 64}, raw["members"])
    nan = _rank_network(1.0)
    nan[0][0][3, 0] = np.nan
    with pytest.raises(SpecError, match="not a finite number"):
        DistilledReserve(nan)
    with pytest.raises(SpecError, match="one output"):
        DistilledReserve([(np.zeros((WIDTH, 2)), np.zeros(2))])
    with pytest.raises(SpecError, match="candidates"):
        DistilledReserve(_rank_network(1.0), 0)


def test_build_records_fits_resumes_and_never_overwrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "distilled"
    argv = ["--out", str(out), "--seeds", "0", "--sequences", "2", "--length", "64"]
    assert (
        main(["distill", *argv, "--epochs", "2", "--workers", "1", "--backfill", "--members", "2"])
        == 0
    )
    card = load_engine_card(out / "s0")
    assert isinstance(card, DistilledCard) and card.backfill
    assert card.training["sequences"] == 2 and card.training["members"] == 2
    assert [r["choices"] > 10 for r in card.training["reports"]] == [True, True]
    assert [np.array(m[0][0]).shape for m in card.members] == [(WIDTH, 32)] * 2
    choices = (out / "s0" / "choices.npz").read_bytes()
    before = (out / "s0" / "distilled.json").read_text()
    assert (
        main(["distill", *argv, "--epochs", "2", "--workers", "1", "--backfill", "--members", "2"])
        == 2
    )
    assert "not overwritten" in capsys.readouterr().err
    assert (out / "s0" / "distilled.json").read_text() == before
    # Resumed: the recorded choices are reused, not recorded again.
    (out / "s0" / "distilled.json").unlink()

    def no_recording(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("recorded again")

    monkeypatch.setattr(fitting, "record", no_recording)
    assert (
        main(["distill", *argv, "--epochs", "2", "--workers", "1", "--backfill", "--members", "2"])
        == 0
    )
    assert (out / "s0" / "distilled.json").read_text() == before
    assert (out / "s0" / "choices.npz").read_bytes() == choices
    (out / "s0" / "distilled.json").unlink()
    assert main(["distill", *argv, "--epochs", "2", "--workers", "1"]) == 2
    assert "other settings" in capsys.readouterr().err


def test_dagger_rounds_record_where_the_networks_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dagger"
    argv = ["--out", str(out), "--seeds", "0", "--sequences", "2", "--length", "64"]
    opts = ["--epochs", "2", "--workers", "1", "--backfill", "--members", "2"]
    assert main(["distill", *argv, *opts, "--rounds", "2"]) == 0
    folder = out / "s0"
    card = load_engine_card(folder)
    assert isinstance(card, DistilledCard)
    round0 = np.load(folder / "choices.npz")
    round1 = np.load(folder / "choices-r1.npz")
    settings = json.loads(str(round1["settings"]))
    assert settings["round"] == 1 and len(settings["follow"]) == 64
    (dagger,) = card.training["dagger"]
    assert card.training["rounds"] == 2 and dagger["choices"] == len(round1["x"])
    costs = round1["costs"]
    best = np.nanmin(costs, axis=1)
    assert dagger["regret_f1"] == pytest.approx(np.mean(costs[:, 0] - best) / 32)
    assert dagger["regret"] >= 0.0
    # The last ensemble is fitted to both rounds' choices (10% held out).
    total = len(round0["x"]) + len(round1["x"])
    assert card.training["reports"][0]["choices"] == total
    # Round 0 is the one-round build's recording, byte for byte.
    assert main(["distill", "--out", str(tmp_path / "plain"), *argv[2:], *opts]) == 0
    plain = tmp_path / "plain" / "s0" / "choices.npz"
    assert plain.read_bytes() == (folder / "choices.npz").read_bytes()
    # Resumed from both rounds' recordings: the same card, nothing recorded again.
    before = (folder / "distilled.json").read_text()
    (folder / "distilled.json").unlink()

    def no_recording(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("recorded again")

    monkeypatch.setattr(fitting, "record", no_recording)
    assert main(["distill", *argv, *opts, "--rounds", "2"]) == 0
    assert (folder / "distilled.json").read_text() == before
    assert main(["distill", "--out", str(tmp_path / "x"), *argv[2:], *opts, "--rounds", "0"]) == 2
    assert "rounds must be" in capsys.readouterr().err
