"""ExactMaskablePPO: the same numbers as sb3-contrib's MaskablePPO, with less work per step.

(``LeanMaskablePPO``'s job-scoring shortcuts, the same function in another order, are tested in
``test_lean_shortcuts.py``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch as th
from sb3_contrib.common.maskable.distributions import MaskableCategorical

import hpcgym  # noqa: F401
from hpcgym.agents.rl.lean_ppo import (
    ExactMaskablePPO,
    LeanMaskablePPO,
    masked_log_probs,
    sample_masked,
    store_step,
)
from hpcgym.agents.rl.make import make_agent
from hpcgym.agents.rl.saved import load_agent
from hpcgym.agents.rl.train import HYPERPARAMS, TrainConfig, train
from hpcgym.errors import SpecError

TINY_HP = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}


def _logits_and_masks(seed: int, rows: int = 6, n: int = 9) -> tuple[th.Tensor, th.Tensor]:
    gen = th.Generator().manual_seed(seed)
    logits = th.randn(rows, n, generator=gen) * 3
    masks = th.rand(rows, n, generator=gen) < 0.5
    masks[:, 0] = True  # at least one legal entry per row
    return logits, masks


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masked_categorical_by_hand_is_sb3_contribs_bit_for_bit(seed: int) -> None:
    logits, masks = _logits_and_masks(seed)
    dist = MaskableCategorical(logits=logits, masks=masks)
    assert th.equal(masked_log_probs(logits, masks), dist.logits)
    th.manual_seed(seed)
    expected = dist.sample()
    th.manual_seed(seed)
    actions, log_probs = sample_masked(logits, masks)
    assert th.equal(actions, expected) and actions.dtype == expected.dtype
    assert th.equal(log_probs, dist.log_prob(expected))
    assert bool(masks.gather(-1, actions.unsqueeze(-1)).all())  # never a masked entry


def _batch(env: gym.Env[Any, Any], n: int, seed: int = 3) -> dict[str, th.Tensor]:
    space = env.observation_space
    assert isinstance(space, gym.spaces.Dict)
    space.seed(seed)
    samples = [space.sample() for _ in range(n)]
    return {k: th.as_tensor(np.stack([s[k] for s in samples])) for k in space.spaces}


@pytest.mark.parametrize(
    ("env_id", "policy"),
    [
        ("hpcgym/Rigid-v0", "JobScoringPolicy"),
        ("hpcgym/Malleable-v0", "JobScoringPolicy"),
        ("hpcgym/Shared-v0", "JobScoringPolicy"),  # suspended slots: the resume head
        ("hpcgym/Malleable-v0", "JobAttentionPolicy"),
    ],
)
def test_direct_inference_gives_the_policys_forward_numbers(env_id: str, policy: str) -> None:
    env = gym.make(env_id, n_jobs=8)
    model = make_agent(env, policy=policy, seed=0)
    obs = _batch(env, 5)
    pol = model.policy
    with th.no_grad():
        logits, values = pol.infer(obs)
        features = pol.extract_features(obs)
        latent_pi, latent_vf = pol.mlp_extractor(features)
        assert th.equal(logits, pol.action_net(latent_pi))
        assert th.equal(values, pol.value_net(latent_vf))
    env.close()


def test_store_step_writes_what_the_buffers_add_writes() -> None:
    from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer

    env = gym.make("hpcgym/Malleable-v0", n_jobs=8)
    space = env.observation_space
    assert isinstance(space, gym.spaces.Dict)
    n_envs, n_actions = 3, int(env.action_space.n)  # type: ignore[attr-defined]
    buffers = [
        MaskableDictRolloutBuffer(4, space, env.action_space, n_envs=n_envs) for _ in range(2)
    ]
    rng = np.random.default_rng(0)
    for step in range(4):
        obs = {k: v.numpy() for k, v in _batch(env, n_envs, seed=step).items()}
        args = (
            obs,
            rng.integers(0, n_actions, n_envs),
            rng.normal(size=n_envs).astype(np.float32),
            rng.random(n_envs) < 0.3,
            th.randn(n_envs, 1),
            th.randn(n_envs),
        )
        masks = rng.random((n_envs, n_actions)) < 0.5
        buffers[0].add(*args[:1], args[1].reshape(-1, 1), *args[2:], action_masks=masks)
        store_step(buffers[1], *args, masks)
    a, b = buffers
    assert a.full and b.full and a.pos == b.pos == 4
    for key in a.observations:
        assert np.array_equal(a.observations[key], b.observations[key])
    for name in ("actions", "rewards", "episode_starts", "values", "log_probs", "action_masks"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    env.close()


def _runs(tmp_path: Path, **kwargs: Any) -> dict[str, Any]:
    runs = {}
    for learner in ("sb3", "exact"):
        cfg = TrainConfig(
            seed=5,
            timesteps=512,
            overrides=TINY_HP,
            out=str(tmp_path / learner),
            tensorboard="",
            learner=learner,
            **kwargs,
        )
        runs[learner] = train(cfg)
    return runs


@pytest.mark.parametrize(
    "case",
    [
        {"env_id": "hpcgym/Rigid-v0", "env_kwargs": {"n_jobs": 16}},
        # max_steps truncates episodes: the value bootstrap of truncated ones
        {"env_id": "hpcgym/Malleable-v0", "env_kwargs": {"n_jobs": 16, "max_steps": 40}},
        {"env_id": "hpcgym/Shared-v0", "env_kwargs": {"n_jobs": 16}},
        {
            "env_id": "hpcgym/Malleable-v0",
            "env_kwargs": {"n_jobs": 16},
            "policy": "MultiInputPolicy",
        },
        {
            "env_id": "hpcgym/Malleable-v0",
            "env_kwargs": {"n_jobs": 16},
            "policy": "JobAttentionPolicy",
        },
        {
            "env_id": "hpcgym/Rigid-v0",
            "env_kwargs": {"n_jobs": 16},
            "hyperparams_file": str(HYPERPARAMS / "maskable_ppo_rlsched.yml"),
        },
    ],
    ids=["rigid", "malleable-truncated", "shared", "mlp", "attention", "rlsched-reserve"],
)
def test_exact_learner_trains_the_same_agent_as_sb3_contribs(
    case: dict[str, Any], tmp_path: Path
) -> None:
    runs = _runs(tmp_path, **case)
    a, b = (dict(load_agent(r.agent)[0].policy.state_dict()) for r in runs.values())
    assert a.keys() == b.keys() and all(th.equal(a[k], b[k]) for k in a)
    one, two = (pd.read_csv(tmp_path / v / "episodes.csv") for v in ("sb3", "exact"))
    assert len(one) >= 2
    pd.testing.assert_frame_equal(one, two)
    if "max_steps" in case["env_kwargs"]:
        assert one["truncated"].any()
    timing = json.loads((tmp_path / "exact" / "timing.json").read_text())
    assert timing["learner"] == "ExactMaskablePPO"
    assert json.loads((tmp_path / "sb3" / "timing.json").read_text())["learner"] == "MaskablePPO"


def test_a_run_checkpointed_by_one_learner_resumes_with_the_other_to_the_same_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.agents.rl import callbacks

    def config(out: str, learner: str, **kw: Any) -> TrainConfig:
        return TrainConfig(
            env_id="hpcgym/Malleable-v0",
            seed=3,
            timesteps=512,
            env_kwargs={"n_jobs": 16},
            overrides=TINY_HP,
            out=str(tmp_path / out),
            tensorboard="",
            learner=learner,
            **kw,
        )

    whole = train(config("whole", "exact"))
    original = callbacks.EpisodeMetricsCallback._on_step

    def failing(self: callbacks.EpisodeMetricsCallback) -> bool:
        if self.num_timesteps >= 300:
            raise RuntimeError("stopped by the test")
        return original(self)

    with monkeypatch.context() as m:
        m.setattr(callbacks.EpisodeMetricsCallback, "_on_step", failing)
        with pytest.raises(RuntimeError):
            train(config("cut", "sb3", checkpoint_every=128))
    resumed = train(config("cut", "exact", checkpoint_every=128, resume=True))
    assert resumed.resumed_from == 256 and resumed.timesteps == whole.timesteps
    a, b = (dict(load_agent(r.agent)[0].policy.state_dict()) for r in (whole, resumed))
    assert all(th.equal(a[k], b[k]) for k in a)


def test_lean_learners_build_no_distribution_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each MaskableCategorical is built twice over (once unmasked, once masked): count them.
    built = {"n": 0}
    original = MaskableCategorical.__init__

    def counting(self: MaskableCategorical, *args: Any, **kwargs: Any) -> None:
        built["n"] += 1
        original(self, *args, **kwargs)

    monkeypatch.setattr(MaskableCategorical, "__init__", counting)
    counts = {}
    for learner in ("sb3", "exact", "lean"):
        built["n"] = 0
        cfg = TrainConfig(
            env_id="hpcgym/Rigid-v0",
            seed=1,
            timesteps=256,
            env_kwargs={"n_jobs": 16},
            overrides=TINY_HP,
            out=str(tmp_path / learner),
            tensorboard="",
            learner=learner,
        )
        result = train(cfg)
        counts[learner] = built["n"]
    rollouts = result.timesteps // (2 * TINY_HP["n_steps"])
    minibatches = rollouts * TINY_HP["n_epochs"] * (2 * TINY_HP["n_steps"] // TINY_HP["batch_size"])
    assert counts["lean"] == counts["exact"] == 0
    assert counts["sb3"] == minibatches + result.timesteps // 2  # one per update and rollout step


def test_train_builds_the_lean_class_by_default_and_refuses_an_unknown_learner() -> None:
    from hpcgym.agents.rl.train import build

    model, venv, _, _ = build(TrainConfig(env_id="hpcgym/Rigid-v0", env_kwargs={"n_jobs": 8}))
    venv.close()
    assert type(model) is LeanMaskablePPO
    exact, venv, _, _ = build(
        TrainConfig(env_id="hpcgym/Rigid-v0", env_kwargs={"n_jobs": 8}, learner="exact")
    )
    venv.close()
    assert type(exact) is ExactMaskablePPO
    plain, venv, _, _ = build(
        TrainConfig(env_id="hpcgym/Rigid-v0", env_kwargs={"n_jobs": 8}, learner="sb3")
    )
    venv.close()
    assert type(plain).__name__ == "MaskablePPO"
    with pytest.raises(SpecError, match="unknown learner"):
        TrainConfig(learner="numpy")
