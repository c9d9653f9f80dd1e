"""Order agents (:mod:`hpcgym.agents.order`): zero weights are Klein and Perez's heuristic job
for job, the order is the documented one, the fast offline play is the engine's schedule, the
search is deterministic and never worse than the heuristic on its own episodes, cards refuse
what they cannot play, the command keeps results, and the benchmark plays the agent as its
scheduler runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.order import (
    ENV_ID,
    FEATURES,
    LinearOrder,
    OrderCard,
    features,
    list_order,
    objective,
    play,
    search,
)
from hpcgym.baselines.evolving.online import EvolvingListScheduler
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.policy_names import make_env_policy, policy_kind, policy_label
from hpcgym.cli import main
from hpcgym.envs.episodes import episode_for
from hpcgym.errors import SpecError
from hpcgym.sim import EvolutionStep, JobKind, JobSpec, Simulator

TRAIN = {"split": "train"}
ZERO = (0.0,) * len(FEATURES)
LONGEST_FIRST = (-1.0, *ZERO[1:])


def _evolving(job_id: int, steps: list[tuple[float, int]], submit: float = 0.0) -> JobSpec:
    evolution = tuple(EvolutionStep(d, n) for d, n in steps)
    return JobSpec(id=job_id, submit=submit, kind=JobKind.EVOLVING, evolution=evolution)


def _schedule(scheduler: EvolvingListScheduler, seed: int) -> tuple[pd.DataFrame, dict]:
    ep = episode_for(ENV_ID, TRAIN, seed)
    sim = Simulator(ep.platform, ep.jobs)
    scheduler.run(sim)
    result = sim.result()
    return result.jobs[["id", "start", "end"]].sort_values("id").reset_index(drop=True), dict(
        result.summary
    )


def test_features_and_order_of_a_hand_made_case() -> None:
    jobs = [
        _evolving(1, [(1000.0, 10)]),  # D 1000, A 10,000
        _evolving(2, [(500.0, 5), (1500.0, 20)]),  # D 2000, A 32,500, rises 15
        _evolving(3, [(3000.0, 75), (1000.0, 25)]),  # D 4000, A 250,000
    ]
    f = features(jobs, 75)
    assert f.shape == (3, len(FEATURES))
    assert f[1, 0] == pytest.approx((np.log10(2000) - 3.8) / 0.4)
    assert f[1, 3] == pytest.approx(32_500 / 2000 / 75)  # mean width
    assert f[1, 4] == pytest.approx(0.2) and f[1, 6] == pytest.approx(15 / 75)
    assert f[2, 2] == 1.0 and f[2, 5] == 1.0 and f[2, 7] == pytest.approx(25 / 75)
    assert f[2, 8] == pytest.approx(75 * 4000 / 250_000 - 1)
    assert f[0, 8] == 0.0  # a rectangle
    assert list_order(jobs, LONGEST_FIRST, 75) == [2, 1, 0]
    assert list_order(jobs, (1.0, *ZERO[1:]), 75) == [0, 1, 2]
    assert list_order(jobs, ZERO, 75) == [0, 1, 2]  # ties: submission, then id
    late = [_evolving(1, [(1000.0, 10)], submit=5.0), *jobs[1:]]
    assert list_order(late, ZERO, 75) == [1, 2, 0]
    with pytest.raises(SpecError, match="is rigid"):
        features([JobSpec(id=9, submit=0.0, work=10.0, nodes=3)], 75)


def test_zero_weights_are_the_heuristic_job_for_job_and_other_weights_are_not() -> None:
    for seed in (0, 1, 2):
        mine, _ = _schedule(LinearOrder(ZERO), seed)
        theirs, _ = _schedule(EvolvingListScheduler("infX"), seed)
        pd.testing.assert_frame_equal(mine, theirs)
    other, _ = _schedule(LinearOrder(LONGEST_FIRST), 0)
    assert not other.equals(_schedule(EvolvingListScheduler("infX"), 0)[0])


@pytest.mark.parametrize(
    "weights", [ZERO, LONGEST_FIRST, (0.3, -1.2, 0.5, 2.0, -0.4, 1.0, 0.2, -0.7, 0.9)]
)
def test_the_offline_play_is_the_engine_schedule(weights: tuple[float, ...]) -> None:
    for seed in range(4):
        ep = episode_for(ENV_ID, TRAIN, seed)
        _, summary = _schedule(LinearOrder(weights), seed)
        makespan, worst = play(weights, ep.platform, ep.jobs, "infX")
        assert makespan == pytest.approx(summary["makespan"], rel=1e-9)
        assert worst == pytest.approx(summary["max_bsld"], rel=1e-9)


def test_jobs_submitted_later_are_played_on_the_engine() -> None:
    ep = episode_for(ENV_ID, TRAIN, 0)
    jobs = [
        JobSpec(id=s.id, submit=100.0 * i, kind=s.kind, evolution=s.evolution)
        for i, s in enumerate(ep.jobs)
    ]
    sim = Simulator(ep.platform, jobs)
    LinearOrder(LONGEST_FIRST).run(sim)
    summary = sim.result().summary
    assert play(LONGEST_FIRST, ep.platform, jobs, "infX") == (
        summary["makespan"],
        summary["max_bsld"],
    )


def test_the_objective_weighs_each_episodes_log_gain_and_its_worst_job() -> None:
    base = np.array([[100.0, 10.0], [200.0, 30.0]])
    better = np.array([[90.0, 10.0], [180.0, 20.0]])
    assert objective(better, base) == pytest.approx(np.log(0.9))  # a lower tail earns nothing
    worse_tail = np.array([[90.0, 40.0], [180.0, 20.0]])
    assert objective(worse_tail, base, guard=2.0) == pytest.approx(np.log(0.9) + np.log(4))
    assert objective(worse_tail, base, guard=0.0) == pytest.approx(np.log(0.9))


def test_the_search_is_deterministic_whatever_the_workers_and_never_worse() -> None:
    one, curve1 = search({}, seed=3, generations=2, episodes=4, workers=1)
    two, curve2 = search({}, seed=3, generations=2, episodes=4, workers=2)
    assert one.weights == two.weights and curve1 == curve2 and len(curve1) == 2
    assert {**one.training, "seconds": 0} == {**two.training, "seconds": 0}
    t = one.training
    assert t["best_objective"] <= 0.0 and t["episode_seeds"] == [300_000, 300_003]
    if t["best_objective"] == 0.0:
        assert one.weights == ZERO
    # The objective is replayable from the card on the engine.
    mine, base = [], []
    for s in range(300_000, 300_004):
        for sched, rows in ((one.scheduler(), mine), (EvolvingListScheduler("infX"), base)):
            ep = episode_for(ENV_ID, TRAIN, s)
            sim = Simulator(ep.platform, ep.jobs)
            sched.run(sim)
            rows.append((sim.result().summary["makespan"], sim.result().summary["max_bsld"]))
    replayed = objective(np.array(mine), np.array(base), t["guard"])
    assert replayed == pytest.approx(t["best_objective"], abs=1e-9)
    with pytest.raises(SpecError, match="unknown variant 'rigid'"):
        search({}, variant="rigid")
    with pytest.raises(SpecError, match="guard >= 0"):
        search({}, guard=-1.0)


def test_cards_round_trip_and_refuse_what_they_cannot_play(tmp_path: Path) -> None:
    card = OrderCard(ENV_ID, {}, LONGEST_FIRST, "2X", 2, {"note": 1})
    assert OrderCard.from_json(card.to_json()) == card
    raw = json.loads(card.to_json())
    assert raw["weights"]["log10(D)"] == -1 and raw["format"] == "hpcgym-order/1"
    assert repr(card.scheduler()) == f"LinearOrder({list(LONGEST_FIRST)}, '2X')"
    with pytest.raises(SpecError, match="not hpcgym/Rigid-v0"):
        OrderCard("hpcgym/Rigid-v0", {}, ZERO)
    with pytest.raises(SpecError, match="9 finite weights"):
        OrderCard(ENV_ID, {}, (float("inf"), *ZERO[1:]))
    for bad in (
        "[",
        json.dumps({**raw, "format": "hpcgym-score/1"}),
        json.dumps({**raw, "features": raw["features"][::-1]}),
        json.dumps({**raw, "weights": {"steps/10": 1}}),
    ):
        with pytest.raises(SpecError, match="not an order agent card"):
            OrderCard.from_json(bad, "x.json")
    (tmp_path / "order.json").write_text(card.to_json())
    assert load_engine_card(tmp_path) == card


def test_the_command_writes_the_agent_and_keeps_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "orders"
    argv = ["search-score", "--env", ENV_ID, "--generations", "2", "--episodes", "3"]
    argv += ["--seeds", "0-1", "--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    for seed in (0, 1):
        card = load_engine_card(out / f"s{seed}")
        assert isinstance(card, OrderCard) and card.seed == seed and card.variant == "infX"
        assert not (out / f"s{seed}" / "score.json").exists()
        curve = pd.read_csv(out / f"s{seed}" / "search.csv")
        assert list(curve["generation"]) == [0, 1]
    before = (out / "s0" / "order.json").read_bytes()
    assert main(argv) == 2  # never replaced silently
    assert "already holds a run" in capsys.readouterr().err
    (out / "s1" / "order.json").unlink()  # as if seed 1 had been interrupted
    assert main([*argv, "--resume"]) == 0
    assert "seed 0: finished before, kept" in capsys.readouterr().out
    assert (out / "s0" / "order.json").read_bytes() == before
    assert main([*argv, "--overwrite"]) == 0
    again = json.loads((out / "s0" / "order.json").read_text())
    assert again["weights"] == json.loads(before)["weights"]  # the same search: the same agent
    # Options of the other kind of agent are refused before any work.
    assert main([*argv[:-2], "--out", str(tmp_path / "x"), "--objective", "log-ratio"]) == 2
    assert "--objective applies to job scores" in capsys.readouterr().err
    assert main(["search-score", "--guard", "1", "--out", str(tmp_path / "y")]) == 2
    assert "--guard and --variant apply to order agents" in capsys.readouterr().err
    assert main([*argv[:-2], "--out", str(tmp_path / "z"), "--variant", "rigid"]) == 2
    assert "unknown variant 'rigid'" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in "xyz")


def test_the_bench_plays_an_order_agent_as_its_scheduler_runs(tmp_path: Path) -> None:
    card = OrderCard(ENV_ID, {}, (0.3, -1.2, 0.5, 2.0, -0.4, 1.0, 0.2, -0.7, 0.9))
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "order.json").write_text(card.to_json())
    assert policy_kind(str(folder)) == "score" == policy_kind(str(folder / "order.json"))
    assert policy_label(str(folder)) == "mine"
    with pytest.raises(SpecError, match="runs on the bare engine"):
        make_env_policy(str(folder))
    sc = scenarios.get("evolving-klein-v1")
    run = tmp_path / "run"
    assert run_bench([sc], [str(folder)], run_dir=run, executor="serial", progress=False) == 0
    results = pd.read_csv(run / "results.csv").sort_values("seed")
    assert list(results["seed"]) == list(sc.seeds) and (results["path"] == "engine").all()
    for seed, value in zip(results["seed"][:3], results["makespan"][:3], strict=True):
        ep = episode_for(sc.env_id, sc.env_kwargs, int(seed))
        sim = Simulator(ep.platform, ep.jobs)
        card.scheduler().run(sim)
        assert sim.result().summary["makespan"] == value
    recorded = json.loads((run / "run.json").read_text())["config"]["agents"]
    assert recorded[str(folder)]["card"]["weights"]["A/D/N"] == 2.0
    # On another preset: refused before any episode runs.
    rigid = scenarios.get("rigid-lublin-v1")
    with pytest.raises(SpecError, match="orders evolving jobs"):
        run_bench(
            [rigid], [str(folder)], run_dir=tmp_path / "r2", executor="serial", progress=False
        )
    assert not (tmp_path / "r2").exists()
