from __future__ import annotations

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch as th

import hpcgym  # noqa: F401
from hpcgym.agents.rl.guard import RECONFIG_FEATURE, DecisionGuard, ResizeBudget
from hpcgym.agents.rl.networks import JobScoringExtractor, menu_blocks
from hpcgym.errors import SpecError


@pytest.mark.parametrize("env_id", ["hpcgym/Malleable-v0", "hpcgym/Shared-v0"])
def test_job_scores_follow_their_slot_and_the_value_input_ignores_order(env_id: str) -> None:
    env = gym.make(env_id, n_jobs=32)
    blocks = menu_blocks(env)
    th.manual_seed(0)
    fx = JobScoringExtractor(env.observation_space, blocks)  # type: ignore[arg-type]
    assert fx.n_actions == env.action_space.n  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    obs = {k: rng.random(sp.shape).astype(np.float32) for k, sp in env.observation_space.items()}  # type: ignore[attr-defined]
    perm = np.arange(obs["queue"].shape[0])
    perm[[0, 3]] = perm[[3, 0]]
    swapped = dict(obs, queue=obs["queue"][perm])

    def run(o: dict[str, np.ndarray]) -> np.ndarray:
        with th.no_grad():
            return fx({k: th.as_tensor(v)[None] for k, v in o.items()})[0].numpy()

    a, b = run(obs), run(swapped)
    off, slots, levels = blocks["start"]
    start_a = a[off : off + slots * levels].reshape(slots, levels)
    start_b = b[off : off + slots * levels].reshape(slots, levels)
    np.testing.assert_allclose(start_a[perm], start_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a[fx.n_actions :], b[fx.n_actions :], rtol=1e-5, atol=1e-6)


def test_resize_guard_only_narrows_and_masks_jobs_over_budget() -> None:
    env = gym.make("hpcgym/Malleable-v0", n_jobs=32)
    blocks = menu_blocks(env)
    guard = DecisionGuard(blocks, budget=2)
    obs, _ = env.reset(seed=0)
    running = np.zeros_like(obs["running"])
    running[1, RECONFIG_FEATURE] = 2 / 3  # two reconfigurations: over budget
    running[2, RECONFIG_FEATURE] = 1 / 2
    mask = np.ones(env.action_space.n, dtype=np.int8)  # type: ignore[attr-defined]
    out = guard.restrict(mask, dict(obs, running=running.astype(np.float32)))
    off, _, levels = blocks["shrink"]
    assert not out[off + levels : off + 2 * levels].any()
    assert out[off + 2 * levels : off + 3 * levels].all()
    assert out.sum() == mask.sum() - levels - blocks["expand"][2]


@pytest.mark.parametrize("budget", [0, 1, 2])
def test_the_env_resize_budget_gives_the_guards_masks(budget: int) -> None:
    # Training applies the budget in the env (cheaper than narrowing every mask afterwards);
    # the guard applies it to the observation. Step by step, the same masks and states.
    plain = gym.make("hpcgym/Malleable-v0", n_jobs=48)
    limited = gym.make("hpcgym/Malleable-v0", n_jobs=48, resize_budget=budget)
    guard = DecisionGuard(menu_blocks(plain), budget)
    obs, info = plain.reset(seed=5)
    _, info_l = limited.reset(seed=5)
    rng = np.random.default_rng(budget)
    narrowed = steps = 0
    while True:
        mask = guard.restrict(info["action_mask"], obs)
        np.testing.assert_array_equal(info_l["action_mask"], mask)
        narrowed += int((mask != info["action_mask"]).any())
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, _, term, trunc, info = plain.step(a)
        _, _, term_l, trunc_l, info_l = limited.step(a)
        steps += 1
        assert (term, trunc) == (term_l, trunc_l)
        if term or trunc:
            break
    assert term and narrowed > 0 and steps > 100
    sims = [env.unwrapped.sim for env in (plain, limited)]  # type: ignore[attr-defined]
    pd.testing.assert_frame_equal(sims[0].result().jobs, sims[1].result().jobs)
    assert sims[1].result().summary["reconfigurations"] <= 48 * budget


def test_resize_budget_is_checked() -> None:
    for bad in (-1, 1.5, True):
        with pytest.raises(SpecError, match="resize_budget"):
            gym.make("hpcgym/Malleable-v0", resize_budget=bad)


def test_resize_budget_wrapper_ends_random_episodes_within_the_step_limit() -> None:
    env = ResizeBudget(gym.make("hpcgym/Malleable-v0", n_jobs=24), budget=1)
    _obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    while True:
        mask = env.action_masks()
        assert (mask <= env.unwrapped.action_masks()).all()  # type: ignore[attr-defined]
        assert mask is info["action_mask"]
        legal = np.flatnonzero(mask)
        _obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
        if terminated or truncated:
            break
    assert terminated
    assert info["metrics"]["reconfigurations"] <= 24
