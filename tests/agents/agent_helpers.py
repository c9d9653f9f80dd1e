"""Shared by the agent tests: a model's greedy, masked actions on a fixed episode."""

from __future__ import annotations

import gymnasium as gym

import hpcgym  # noqa: F401  (registers the env ids)

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}
"""A small malleable preset: 16-job episodes."""


def greedy_actions(model: object, n: int = 200) -> list[int]:
    """``n`` deterministic masked actions of ``model`` from ``ENV_ID``'s episode of seed 11."""
    env = gym.make(ENV_ID, **KWARGS)
    obs, info = env.reset(seed=11)
    out = []
    for _ in range(n):
        a, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)  # type: ignore[attr-defined]
        out.append(int(a))
        obs, _, term, trunc, info = env.step(int(a))
        if term or trunc:
            obs, info = env.reset()
    return out
