"""A short MaskablePPO training on Rigid-v0: the env plugs into sb3-contrib end to end."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401


def test_maskable_ppo_trains_a_few_thousand_steps() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny networks: threads only add contention
    try:
        train_and_play(sb3_contrib)
    finally:
        torch.set_num_threads(threads)


def train_and_play(sb3_contrib: object) -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=64)
    model = sb3_contrib.MaskablePPO(  # type: ignore[attr-defined]
        "MultiInputPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(total_timesteps=2048)
    obs, info = env.reset(seed=1)
    done = False
    steps = 0
    while not done and steps < 2000:
        action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        assert info["action_mask"][int(action)] == 1
        obs, _, term, trunc, info = env.step(int(action))
        done = term or trunc
        steps += 1
    assert done and np.isfinite(info["metrics"]["mean_bsld"])
