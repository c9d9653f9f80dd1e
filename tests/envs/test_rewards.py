"""Rewards are dense and sum over a finished episode to minus the episode objective."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
from hpcgym.envs import REWARDS


def objective_from_summary(name: str, s: dict[str, float]) -> float | None:
    """The objective of each reward, read from the summary independently of the env."""
    if name == "bsld":
        return s["mean_bsld"]
    if name == "bstretch":
        return s["mean_bounded_stretch"]
    if name == "wait":
        return s["mean_wait"] / 3600.0
    if name == "utilization":
        return s["normalized_underutilization"]
    if name == "reconfiguration":
        return (s["reconfigurations"] + s["preemptions"] + s["migrations"]) / s["jobs"]
    return None  # makespan: divided by a lower bound the summary does not hold


def play(env: gym.Env[Any, Any], seed: int) -> tuple[list[float], list[dict[str, float]], Any]:
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    rewards, parts = [], []
    while True:
        legal = np.flatnonzero(info["action_mask"])
        _, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        rewards.append(float(r))
        parts.append(info["reward_parts"])
        if term or trunc:
            return rewards, parts, (term, info)


@pytest.mark.parametrize("reward", sorted(REWARDS))
@pytest.mark.parametrize(
    "world",
    [
        "test/rigid-tiny-v0",
        "test/malleable-tiny-v0",
        "test/evolving-tiny-v0",
        "test/shared-tiny-v0",
        "test/multi-tiny-v0",
    ],
)
def test_return_is_minus_the_objective(world: str, reward: str, worlds: SimpleNamespace) -> None:
    for seed in range(3):
        env = worlds.make(world, reward=reward, max_steps=10_000)
        rewards, _, (term, info) = play(env, seed)
        assert term
        objective = info["objectives"][reward]
        assert sum(rewards) == pytest.approx(-objective, rel=1e-9, abs=1e-9)
        want = objective_from_summary(reward, info["metrics"])
        if want is not None:
            assert objective == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("reward", sorted(REWARDS))
def test_return_on_a_rigid_preset_episode(reward: str) -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=64, reward=reward)
    rewards, _, (term, info) = play(env, 11)
    assert term
    assert sum(rewards) == pytest.approx(-info["objectives"][reward], rel=1e-9, abs=1e-9)


def test_weighted_rewards_and_parts(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", reward={"bsld": 1.0, "reconfiguration": 0.5})
    rewards, parts, (term, info) = play(env, 4)
    assert term
    for r, p in zip(rewards, parts, strict=True):
        assert r == pytest.approx(sum(p.values()))
    obj = info["objectives"]
    assert sum(rewards) == pytest.approx(-(obj["bsld"] + 0.5 * obj["reconfiguration"]))


def test_bsld_reward_is_dense() -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=64)
    rewards, _, _ = play(env, 2)
    assert np.count_nonzero(rewards[:-1]) > len(rewards) // 4


def test_truncation_reports_metrics(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/rigid-tiny-v0", max_steps=2, skip_trivial=False)
    _, info = env.reset(seed=0)
    _, _, term, trunc, info = env.step(0)
    assert not term and not trunc
    _, _, term, trunc, info = env.step(0)
    assert trunc and not term
    assert "metrics" in info and info["metrics"]["jobs"] == 5.0


def test_killed_reward_counts_the_work_lost_to_walltime_kills(worlds: SimpleNamespace) -> None:
    # Job 1 is killed after 40 s on 2 nodes, job 3 after 10 s on 1 node: 90 of 330 CPU-seconds.
    for seed in range(3):
        env = worlds.make("test/kill-tiny-v0", reward={"killed": 1.0, "bsld": 0.5})
        _, parts, (term, info) = play(env, seed)
        assert term and info["metrics"]["killed"] == 2
        assert info["objectives"]["killed"] == pytest.approx(90.0 / 330.0)
        killed = [p["killed"] for p in parts]
        assert sum(killed) == pytest.approx(-90.0 / 330.0)
        assert sorted(x for x in killed if x) == pytest.approx([-80.0 / 330.0, -10.0 / 330.0])


@pytest.mark.parametrize("seed", [3, 5])
def test_for_rigid_jobs_bounded_stretch_and_bounded_slowdown_coincide(seed: int) -> None:
    """A rigid job that completes runs exactly its work, so both ratios divide by the same
    time: per job and per episode they are equal (and the two rewards give the same return)."""
    returns = {}
    for reward in ("bsld", "bstretch"):
        env = gym.make("hpcgym/Rigid-v0", n_jobs=64, reward=reward, kill_on_walltime=False)
        rewards, _, (term, _info) = play(env, seed)
        assert term
        jobs = env.unwrapped.sim.result().jobs
        assert (jobs["state"] == "completed").all() and (jobs["kind"] == "rigid").all()
        assert np.allclose(jobs["bsld"], jobs["bounded_stretch"], rtol=1e-12, atol=0)
        assert jobs["bsld"].max() > 1.5  # some jobs waited: the equality is not 1 == 1
        returns[reward] = sum(rewards)
    assert returns["bsld"] == pytest.approx(returns["bstretch"], rel=1e-9)


def test_bounded_stretch_does_not_reward_a_job_stretched_on_few_nodes() -> None:
    """The artifact bounded stretch removes: a malleable job started at once on its minimum
    size and never resized has a bounded slowdown of 1 however late it ends, but a bounded
    stretch of its response over its time at the requested size."""
    from hpcgym.sim import JobKind, JobSpec, Platform, PowerLaw, Simulator

    job = JobSpec(
        1, submit=0.0, work=3600.0, nodes=16, kind=JobKind.MALLEABLE, min_nodes=4,
        max_nodes=16, speedup=PowerLaw(0.0),
    )  # fmt: skip
    sim = Simulator(Platform.single(16), [job])
    while sim.advance():
        if sim.queue:
            sim.start(1, 4)
    row = sim.result().jobs.iloc[0]
    assert row["wait"] == 0 and row["response"] == pytest.approx(4 * 3600.0)
    assert row["bsld"] == pytest.approx(1.0)
    assert row["bounded_stretch"] == pytest.approx(4.0)
