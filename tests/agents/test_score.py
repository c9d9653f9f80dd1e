"""Score agents (:mod:`hpcgym.agents.score`): F1 is a point of the family, the search is
deterministic and only improves on F1, cards refuse what they cannot play, the command keeps
results, and the benchmark plays an agent exactly as its scheduler runs on the episode."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.score import (
    F1_WEIGHTS,
    LinearEasy,
    LinearReserve,
    ScoreCard,
    ranked_by_features,
    search,
)
from hpcgym.baselines.priority import EasyPriority, PriorityReserve
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.policy_names import make_env_policy, policy_kind, policy_label
from hpcgym.cli import main
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.errors import SpecError
from hpcgym.sim import Job, SimConfig, Simulator

RIGID = "hpcgym/Rigid-v0"
RESERVE = {
    "workload": "rlsched/lublin256-v0",
    "platform": None,
    "n_jobs": 256,
    "selection": "reserve",
    "queue_slots": 128,
    "kill_on_walltime": False,
}
EASY = {"n_jobs": 64}


def _schedule(scheduler: object, kwargs: dict[str, object], seed: int) -> pd.DataFrame:
    ep = episode_for(RIGID, {**kwargs, "split": "train"}, seed)
    sim = Simulator(ep.platform, ep.jobs, SimConfig(kill_on_walltime=False))
    scheduler.run(sim)  # type: ignore[attr-defined]
    return sim.result().jobs[["id", "start"]].sort_values("id").reset_index(drop=True)


@pytest.mark.parametrize(
    ("mine", "theirs", "kwargs"),
    [
        (LinearReserve(F1_WEIGHTS), PriorityReserve("f1"), RESERVE),
        (LinearReserve(F1_WEIGHTS, True), PriorityReserve("f1", True), RESERVE),
        (LinearEasy(F1_WEIGHTS), EasyPriority("f1"), EASY),
    ],
)
def test_f1_weights_give_f1_schedules_job_for_job(
    mine: object, theirs: object, kwargs: dict[str, object]
) -> None:
    for seed in (0, 1, 2):
        pd.testing.assert_frame_equal(
            _schedule(mine, kwargs, seed), _schedule(theirs, kwargs, seed)
        )
    sjf_like = LinearReserve((0, 1, 0, 0, 0, 0, 0, 0)) if kwargs is RESERVE else None
    if sjf_like is not None:
        assert not _schedule(sjf_like, kwargs, 0).equals(_schedule(theirs, kwargs, 0))


class _RankedByFeatureMatrix(LinearEasy):
    """LinearEasy ranking by the definition (the feature matrix), not its split score."""

    def ranked(self, sim: Simulator) -> list[Job]:
        return ranked_by_features(self, sim)


def test_easy_scores_split_into_submission_and_waiting_parts_rank_as_the_features_do() -> None:
    rng = np.random.default_rng(5)
    differ = 0
    for _ in range(4):
        weights = tuple(float(w) for w in rng.normal(0, 3, size=8))
        for seed in (0, 1):
            mine = _schedule(LinearEasy(weights), EASY, seed)
            pd.testing.assert_frame_equal(
                mine, _schedule(_RankedByFeatureMatrix(weights), EASY, seed)
            )
            differ += not mine.equals(_schedule(LinearEasy(F1_WEIGHTS), EASY, seed))
    assert differ > 0  # the weights matter on these episodes: the check is not vacuous


def test_the_search_is_deterministic_whatever_the_workers_and_never_worse_than_f1() -> None:
    one, curve1 = search(RIGID, EASY, seed=3, generations=3, episodes=4, workers=1)
    two, curve2 = search(RIGID, EASY, seed=3, generations=3, episodes=4, workers=2)
    assert one.weights == two.weights and curve1 == curve2 and len(curve1) == 3
    assert {**one.training, "seconds": 0} == {**two.training, "seconds": 0}
    t = one.training
    assert t["best_objective"] <= t["f1_objective"]
    assert t["episode_seeds"] == [300_000, 300_003] and one.seed == 3
    if t["best_objective"] == t["f1_objective"]:
        assert one.weights == F1_WEIGHTS
    other, _ = search(RIGID, EASY, seed=4, generations=3, episodes=4, workers=1)
    assert other.weights != one.weights  # another seed, other episodes and draws
    # The objective is the training episodes' mean bounded slowdown, replayable from the card.
    train = {**EASY, "split": "train"}
    episodes = [episode_for(RIGID, train, s) for s in range(300_000, 300_004)]
    kill = SimConfig(kill_on_walltime=env_config(RIGID, train).kill_on_walltime)
    values = [Simulator(ep.platform, ep.jobs, kill) for ep in episodes]
    for sim in values:
        one.scheduler().run(sim)
    replayed = float(np.mean([sim.result().summary["mean_bsld"] for sim in values]))
    assert replayed == pytest.approx(t["best_objective"], rel=1e-12)


def test_the_log_ratio_objective_is_each_episodes_log_gain_over_f1_replayable() -> None:
    card, curve = search(RIGID, EASY, seed=5, generations=3, episodes=4, objective="log-ratio")
    t = card.training
    assert t["objective_name"] == "log-ratio" and t["f1_objective"] == 0.0
    assert t["best_objective"] <= 0.0 and len(curve) == 3
    train = {**EASY, "split": "train"}
    kill = SimConfig(kill_on_walltime=env_config(RIGID, train).kill_on_walltime)
    ratios = []
    for s in range(500_000, 500_004):
        ep = episode_for(RIGID, train, s)
        mine, f1 = (Simulator(ep.platform, ep.jobs, kill) for _ in range(2))
        card.scheduler().run(mine)
        EasyPriority("f1").run(f1)
        ratios.append(mine.result().summary["mean_bsld"] / f1.result().summary["mean_bsld"])
    assert float(np.mean(np.log(ratios))) == pytest.approx(t["best_objective"], abs=1e-12)
    with pytest.raises(SpecError, match="unknown objective 'median'"):
        search(RIGID, EASY, objective="median")


def test_a_search_on_generated_lublin_traces_plays_a_new_trace_per_episode() -> None:
    """Training on the Lublin model (one generated trace per episode), as the
    ``score-synlublin-*`` agents: the card keeps those arguments and still plays reserve mode."""
    synthetic = {
        **RESERVE,
        "workload": "synthetic/lublin-256-v0",
        "workload_options": {"n_jobs": 256, "arrival_scale": 0.83},
        "episode": "seeded",
        "n_seeds": 100_000,
        "reserve_backfill": True,
    }
    card, _ = search(RIGID, synthetic, seed=1, generations=1, episodes=3, workers=1)
    assert card.env_kwargs == synthetic and type(card.scheduler()) is LinearReserve
    assert card.scheduler().backfill
    train = {**synthetic, "split": "train"}
    eps = [episode_for(RIGID, train, s) for s in range(100_000, 100_003)]
    assert len({ep.workload_seed for ep in eps}) == 3  # three generated traces
    assert all(ep.workload_seed < 70_000 and ep.start == 0 for ep in eps)  # the train share


def test_cards_round_trip_and_refuse_what_they_cannot_play(tmp_path: Path) -> None:
    card = ScoreCard(RIGID, RESERVE, (0.5, 1, 0, 0, 0, 0, 1, -1), 2, {"note": 1})
    assert ScoreCard.from_json(card.to_json()) == card
    raw = json.loads(card.to_json())
    assert raw["weights"]["fits"] == -1 and raw["format"] == "hpcgym-score/1"
    with pytest.raises(SpecError, match="rigid jobs on one cluster"):
        ScoreCard("hpcgym/Malleable-v0", {}, F1_WEIGHTS)
    with pytest.raises(SpecError, match="8 finite weights"):
        ScoreCard(RIGID, RESERVE, (1.0, float("nan"), 0, 0, 0, 0, 1, 0))
    for bad in (
        "{",
        json.dumps({**raw, "format": "hpcgym-agent/1"}),
        json.dumps({**raw, "features": raw["features"][::-1]}),
        json.dumps({**raw, "weights": {"fits": 1}}),
    ):
        with pytest.raises(SpecError, match="not a score agent card"):
            ScoreCard.from_json(bad, "x.json")
    with pytest.raises(SpecError, match="no score agent"):
        load_engine_card(tmp_path)


def test_the_command_writes_the_agent_and_keeps_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep"
    argv = ["search-score", "--env-kwargs", json.dumps(EASY), "--generations", "2"]
    argv += ["--episodes", "3", "--seeds", "0-1", "--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    for seed in (0, 1):
        card = load_engine_card(out / f"s{seed}")
        assert card.seed == seed and card.env_kwargs == EASY
        curve = pd.read_csv(out / f"s{seed}" / "search.csv")
        assert list(curve["generation"]) == [0, 1]
        (segment,) = json.loads((out / f"s{seed}" / "run.json").read_text())["segments"]
        assert segment["status"] == "finished" and segment["command"] == ["hpcgym", *argv]
    before = (out / "s0" / "score.json").read_bytes()
    assert main(argv) == 2  # never replaced silently
    assert "already holds a run" in capsys.readouterr().err
    (out / "s1" / "score.json").unlink()  # as if seed 1 had been interrupted
    assert main([*argv, "--resume"]) == 0
    assert "seed 0: finished before, kept" in capsys.readouterr().out
    assert (out / "s0" / "score.json").read_bytes() == before
    assert load_engine_card(out / "s1").seed == 1
    segments = json.loads((out / "s1" / "run.json").read_text())["segments"]
    assert [s["command"][-1] for s in segments] == [str(out), "--resume"]  # both attempts
    assert main([*argv, "--overwrite"]) == 0
    assert (
        json.loads((out / "s0" / "score.json").read_text())["weights"]
        == json.loads(before)["weights"]
    )  # the same search again: the same agent


def test_the_bench_plays_a_score_agent_as_its_scheduler_runs(tmp_path: Path) -> None:
    card = ScoreCard(RIGID, {"n_jobs": 256}, (1.2, 0.1, 0.3, -0.2, 0.1, 0.0, 0.8, 0.4))
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "score.json").write_text(card.to_json())
    assert policy_kind(str(folder)) == "score" == policy_kind(str(folder / "score.json"))
    assert policy_label(str(folder)) == "mine"
    with pytest.raises(SpecError, match="score, planner or distilled agent"):
        make_env_policy(str(folder))
    sc = scenarios.get("rigid-lublin-v1")
    run = tmp_path / "run"
    code = run_bench([sc], [str(folder)], run_dir=run, executor="serial", progress=False)
    assert code == 0
    results = pd.read_csv(run / "results.csv").sort_values("seed")
    assert list(results["seed"]) == list(sc.seeds) and (results["path"] == "engine").all()
    for seed, value in zip(results["seed"][:3], results["mean_bsld"][:3], strict=True):
        ep = episode_for(sc.env_id, sc.env_kwargs, int(seed))
        sim = Simulator(ep.platform, ep.jobs, SimConfig(kill_on_walltime=True))
        card.scheduler().run(sim)
        assert sim.result().summary["mean_bsld"] == value
    recorded = json.loads((run / "run.json").read_text())["config"]["agents"]
    assert recorded[str(folder)]["card"]["weights"]["fits"] == 0.4
    # Trained in another mode than the scenario's: refused before any episode runs.
    reserve = tmp_path / "reserve"
    reserve.mkdir()
    (reserve / "score.json").write_text(ScoreCard(RIGID, RESERVE, F1_WEIGHTS).to_json())
    with pytest.raises(SpecError, match="reserve mode without backfilling; this scenario plays"):
        run_bench([sc], [str(reserve)], run_dir=tmp_path / "r2", executor="serial", progress=False)
    assert not (tmp_path / "r2").exists()
