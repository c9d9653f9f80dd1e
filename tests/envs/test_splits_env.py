"""Episodes from one split of a trace: windows never leave it, seeds stay in its range."""

from __future__ import annotations

import gymnasium as gym
import pytest

import hpcgym.envs  # noqa: F401
from hpcgym.envs.episodes import split_seeds, splits_of
from hpcgym.errors import SpecError
from hpcgym.workloads import load


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_windows_stay_inside_their_split(split):
    env = gym.make("hpcgym/Rigid-v0", n_jobs=64, split=split)
    part = splits_of(load("swf/lublin256-v0"))[split]
    env.reset(seed=0)
    for _ in range(40):
        ep = env.unwrapped.episode
        assert part.first <= ep.start and ep.start + 64 <= part.stop
        env.reset()


def test_train_and_test_episodes_share_no_job():
    ids = {}
    for split in ("train", "test"):
        env = gym.make("hpcgym/Rigid-v0", n_jobs=128, split=split)
        env.reset(seed=3)
        seen = set()
        for _ in range(50):
            seen |= {j.id for j in env.unwrapped.episode.jobs}
            env.reset()
        ids[split] = seen
    assert ids["train"] and ids["test"] and not ids["train"] & ids["test"]


def test_starts_outside_the_split_are_refused():
    part = splits_of(load("swf/lublin256-v0"))["test"]
    env = gym.make("hpcgym/Rigid-v0", n_jobs=64, split="test")
    with pytest.raises(SpecError, match="test split"):
        env.reset(seed=0, options={"start": 0})
    env.reset(seed=0, options={"start": part.first})
    assert env.unwrapped.episode.start == part.first
    with pytest.raises(SpecError, match="window_starts"):
        gym.make("hpcgym/Rigid-v0", n_jobs=64, split="test", window_starts=[0]).reset(seed=0)
    with pytest.raises(SpecError, match="split"):
        gym.make("hpcgym/Rigid-v0", split="holdout")


def test_seeded_splits_draw_disjoint_seeds():
    assert split_seeds("train", 1000) == range(0, 700)
    assert split_seeds("test", 1000) == range(800, 1000)
    env = gym.make("hpcgym/Evolving-v0", split="validation")
    env.reset(seed=0)
    for _ in range(20):
        assert env.unwrapped.episode.workload_seed in range(
            int(0.7 * env.unwrapped.config.n_seeds), int(0.8 * env.unwrapped.config.n_seeds)
        )
        env.reset()
