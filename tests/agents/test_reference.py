"""Rewards relative to a baseline's schedule (``hpcgym.agents.rl.reference``)."""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from test_resume import crash_at, weights

import hpcgym  # noqa: F401
from hpcgym.agents.rl.imitation import make_ranker
from hpcgym.agents.rl.reference import RelativeReward, _Curve, reference_curves
from hpcgym.agents.rl.train import TrainConfig, resolve_hyperparams, train
from hpcgym.agents.rl.vec import make_mask_vec_env
from hpcgym.envs.episodes import choose_episode
from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, Platform

RESERVE = {"n_jobs": 64, "queue_slots": 32, "selection": "reserve", "kill_on_walltime": False}


def play(env: gym.Env[Any, Any], choose: Any, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """One episode; the rewards and the last info."""
    _, info = env.reset(seed=seed)
    rewards = []
    while True:
        _, r, terminated, truncated, info = env.step(choose(info["action_mask"]))
        rewards.append(float(r))
        if terminated or truncated:
            assert terminated
            return np.array(rewards), info


@pytest.mark.parametrize(
    ("backfill", "reference", "ranker", "reward"),
    [
        (False, "f1-reserve", "rank-f1", "bsld"),
        (True, "sjf-reserve-bf", "rank-sjf", "bsld"),
        (False, "sjf-reserve", "rank-sjf", "wait"),
        (True, "f1-reserve-bf", "rank-f1", {"bsld": 1.0, "wait": 0.5}),
    ],
)
def test_playing_the_reference_schedule_earns_zero_at_every_step(
    backfill: bool, reference: str, ranker: str, reward: Any
) -> None:
    # The ranker plays the reserve baseline's schedule job for job (tests/envs/test_reserve.py),
    # so the env's potential and the reference curve agree at every decision point: the
    # reference curve is exact, not only its end.
    env = RelativeReward(
        gym.make("hpcgym/Rigid-v0", reserve_backfill=backfill, reward=reward, **RESERVE),
        reference,
    )
    choose = make_ranker(ranker, env)
    for seed in (0, 1):
        rewards, info = play(env, choose, seed)
        assert len(rewards) > 20 and min(info["objectives"].values()) > 0.1
        assert np.abs(rewards).max() < 1e-8, np.abs(rewards).max()
        assert info["reference_objectives"] == pytest.approx(info["objectives"], rel=1e-12)


@pytest.mark.parametrize("reward", ["bsld", "wait"])
def test_a_finished_episode_returns_the_reference_objective_minus_the_agents(reward: str) -> None:
    env = RelativeReward(gym.make("hpcgym/Rigid-v0", reward=reward, **RESERVE), "f1-reserve")
    bare = gym.make("hpcgym/Rigid-v0", reward=reward, **RESERVE)
    choose = make_ranker("rank-sjf", env)
    choose_bare = make_ranker("rank-sjf", bare)
    for seed in (0, 3):
        shaped, info = play(env, choose, seed)
        raw, bare_info = play(bare, choose_bare, seed)
        ours, theirs = info["objectives"][reward], info["reference_objectives"][reward]
        assert ours != pytest.approx(theirs)  # SJF and F1 differ on these episodes
        assert shaped.sum() == pytest.approx(theirs - ours, rel=1e-9, abs=1e-9)
        assert raw.sum() == pytest.approx(-ours, rel=1e-9)
        assert bare_info["objectives"] == info["objectives"]  # the wrapper changes no decision
        # The shaping is not a constant: its share varies from step to step.
        assert np.std(shaped - raw) > 0


def test_the_reference_curve_on_a_hand_computed_schedule() -> None:
    # A submitted at 0, starts 0, ends 100 (work 100); B submitted at 10, starts 100, ends 105
    # (work 5, so tau 10 bounds it); C submitted at 200, runs at once for 3 s. bsld: A 1,
    # B max(1, 95/10) = 9.5, C max(1, 3/10) = 1 (its age term, 0.3 at 203, jumps to 1 there:
    # a job that has ended counts with its bsld at its end time, as in the env's ledger).
    s, b = np.array([0.0, 10.0, 200.0]), np.array([0.0, 100.0, 200.0])
    e = np.array([100.0, 105.0, 203.0])
    c = 1.0 / np.maximum(np.array([100.0, 5.0, 3.0]), 10.0)
    final = np.maximum(1.0, (e - s) / np.maximum(e - b, 10.0))
    bsld = _Curve(s, e, c, e, final)
    assert bsld(-1.0) == 0.0
    assert bsld(0.0) == 0.0
    assert bsld(50.0) == pytest.approx(0.5 + 4.0)  # A aged 50/100, B 40/10
    assert bsld(100.0) == pytest.approx(1.0 + 9.0)  # A ended (bsld 1), B aged 90/10
    assert bsld(104.0) == pytest.approx(1.0 + 9.4)
    assert bsld(105.0) == pytest.approx(1.0 + 9.5)
    assert bsld(202.0) == pytest.approx(10.5 + 0.2)
    assert bsld(203.0) == pytest.approx(10.5 + 1.0)
    assert bsld(1e6) == pytest.approx(11.5)
    wait = _Curve(s, b, np.ones(3), b, b - s)
    assert wait(5.0) == pytest.approx(0.0 + 0.0)  # A started at once; B not yet submitted
    assert wait(50.0) == pytest.approx(40.0)
    assert wait(100.0) == pytest.approx(90.0) == wait(1e6)


def test_the_reference_runs_the_baseline_on_the_episodes_jobs() -> None:
    cfg = gym.make("hpcgym/Rigid-v0", **RESERVE).unwrapped.config  # type: ignore[attr-defined]
    ep = choose_episode(cfg, np.random.default_rng(5), None)
    curves, objectives, n = reference_curves("sjf-reserve", ep, False, 10.0, {"bsld": 1.0})
    from hpcgym.baselines import make

    result = make("sjf-reserve").simulate(ep.platform, ep.jobs)
    assert n == len(ep.jobs) == 64
    assert objectives["bsld"] == result.summary["mean_bsld"]
    end = float(np.nanmax(result.columns["end"]))
    assert curves["bsld"](end) / n == pytest.approx(result.summary["mean_bsld"], rel=1e-12)


def test_a_rejected_job_never_counts_in_the_reference() -> None:
    # A job wider than the machine is rejected: it never starts and adds nothing.
    platform = Platform.single(4)
    jobs = (
        JobSpec(1, 0.0, nodes=2, work=50.0, walltime=60.0),
        JobSpec(2, 0.0, nodes=9, work=50.0, walltime=60.0),
    )
    ep = type("Ep", (), {"platform": platform, "jobs": jobs})()
    curves, _, n = reference_curves("fcfs", ep, False, 10.0, {"bsld": 1.0, "wait": 1.0})
    assert n == 2
    assert curves["bsld"](1e6) == pytest.approx(1.0)
    assert curves["wait"](1e6) == 0.0


def test_bad_references_are_refused_before_anything_runs(tmp_path: Path) -> None:
    env = gym.make("hpcgym/Rigid-v0", **RESERVE)
    with pytest.raises(SpecError, match="not a baseline"):
        RelativeReward(env, "f2-reserve")
    with pytest.raises(SpecError, match="bsld, wait; this env's reward has makespan"):
        RelativeReward(gym.make("hpcgym/Rigid-v0", reward="makespan", **RESERVE), "fcfs")
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        env_kwargs={**RESERVE, "reward": "utilization"},
        overrides={"reward_reference": "f1-reserve"},
        out=str(tmp_path / "run"),
    )
    with pytest.raises(SpecError, match="utilization"):
        resolve_hyperparams(cfg)
    with pytest.raises(SpecError, match="not a baseline"):
        train(dataclasses.replace(cfg, overrides={"reward_reference": 3}))
    assert not (tmp_path / "run").exists()


def test_checkpoint_replay_rebuilds_the_wrapped_envs() -> None:
    kw = {**RESERVE, "n_jobs": 32}
    wrap = partial(RelativeReward, reference="f1-reserve")
    a = make_mask_vec_env("hpcgym/Rigid-v0", 2, 7, kw, None, wrap)
    a.reset()
    rng = np.random.default_rng(0)

    def legal(masks: np.ndarray) -> np.ndarray:
        return np.array([rng.choice(np.flatnonzero(m)) for m in masks])

    for _ in range(45):  # past the end of the first episodes
        a.step(legal(a.action_masks()))
    positions = a.positions()
    b = make_mask_vec_env("hpcgym/Rigid-v0", 2, 7, kw, None, wrap)
    b.restore(positions)
    for _ in range(10):
        actions = legal(a.action_masks())
        assert (a.action_masks() == b.action_masks()).all()
        _, ra, _, _ = a.step(actions)
        _, rb, _, _ = b.step(actions)
        assert (ra == rb).all()
    assert any(abs(r) > 0 for r in positions[0]["rewards"] + positions[1]["rewards"])


def test_training_on_relative_rewards_resumes_to_the_same_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(out: str, **kw: Any) -> TrainConfig:
        return TrainConfig(
            env_id="hpcgym/Rigid-v0",
            seed=1,
            timesteps=512,
            env_kwargs={**RESERVE, "n_jobs": 16, "queue_slots": 8},
            overrides={
                "n_steps": 64,
                "batch_size": 64,
                "n_epochs": 2,
                "reward_reference": "f1-reserve",
            },
            out=str(tmp_path / out),
            tensorboard="",
            **kw,
        )

    whole = train(run("whole"))
    with monkeypatch.context() as m:
        crash_at(m, 300, KeyboardInterrupt)
        with pytest.raises(KeyboardInterrupt):
            train(run("cut", checkpoint_every=128))
    resumed = train(run("cut", checkpoint_every=128, resume=True))
    assert resumed.resumed_from == 256
    one, two = weights(whole.agent), weights(resumed.agent)
    assert all((one[k] == two[k]).all() for k in one)  # type: ignore[attr-defined]
    episodes = pd.read_csv(tmp_path / "whole" / "episodes.csv")
    # The returns are relative (the reference's mean bsld minus the agent's), the metrics not.
    assert (episodes["mean_bsld"] >= 1.0).all()
    assert (episodes["return"] > -episodes["mean_bsld"] + 0.5).all()
    hp = (tmp_path / "whole" / "hyperparams.json").read_text()
    assert '"reward_reference": "f1-reserve"' in hp
