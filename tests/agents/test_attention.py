"""The attention variant of the job-scoring policy (``JobAttentionPolicy``)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from agent_helpers import ENV_ID, KWARGS, greedy_actions

import hpcgym  # noqa: F401
from hpcgym.agents import load_agent, make_agent, save_agent
from hpcgym.agents.rl.networks import (
    JobAttentionExtractor,
    JobAttentionPolicy,
    JobScoringExtractor,
    menu_blocks,
)
from hpcgym.agents.rl.saved import card_for
from hpcgym.bench.evaluate import evaluate
from hpcgym.cli import main
from hpcgym.errors import SpecError

MALLEABLE = (ENV_ID, KWARGS)


def extractor(env_id: str, **kwargs: int) -> tuple[gym.Env, JobAttentionExtractor]:  # type: ignore[type-arg]
    env = gym.make(env_id, n_jobs=32)
    th.manual_seed(0)
    fx = JobAttentionExtractor(env.observation_space, menu_blocks(env), **kwargs)  # type: ignore[arg-type]
    fx.eval()
    return env, fx


def random_obs(env: gym.Env, seed: int = 0) -> dict[str, np.ndarray]:  # type: ignore[type-arg]
    """Random features in every slot; slots 0-5 of the queue and 0-3 of running occupied."""
    rng = np.random.default_rng(seed)
    space = env.observation_space
    obs = {k: rng.random(sp.shape).astype(np.float32) for k, sp in space.items()}  # type: ignore[attr-defined]
    for key, n in (("queue", 6), ("running", 4), ("suspended", 2)):
        if key in obs:
            obs[key][:, 0] = 0.0
            obs[key][:n, 0] = 1.0
    return obs


def run(fx: JobScoringExtractor, obs: dict[str, np.ndarray]) -> np.ndarray:
    with th.no_grad():
        out: np.ndarray = fx({k: th.as_tensor(v)[None] for k, v in obs.items()})[0].numpy()
    return out


def block(out: np.ndarray, blocks: dict[str, tuple[int, int, int]], name: str) -> np.ndarray:
    off, slots, levels = blocks[name]
    return out[off : off + slots * levels].reshape(slots, levels)


@pytest.mark.parametrize("env_id", ["hpcgym/Rigid-v0", "hpcgym/Malleable-v0"])
def test_queue_and_running_logits_follow_their_slot(env_id: str) -> None:
    env, fx = extractor(env_id)
    blocks = menu_blocks(env)
    assert fx.n_actions == env.action_space.n  # type: ignore[attr-defined]
    obs = random_obs(env)
    q = np.arange(obs["queue"].shape[0])
    q[[0, 3]] = q[[3, 0]]
    r = np.arange(obs["running"].shape[0])
    r[[1, 2]] = r[[2, 1]]
    a = run(fx, obs)
    b = run(fx, dict(obs, queue=obs["queue"][q], running=obs["running"][r]))
    assert np.isfinite(a).all()
    # The two slots' scores differ (else swapping them proves nothing) and swap with them.
    assert abs(block(a, blocks, "start")[0, 0] - block(a, blocks, "start")[3, 0]) > 1e-4
    np.testing.assert_allclose(block(a, blocks, "start")[q], block(b, blocks, "start"), atol=1e-5)
    for name in ("shrink", "expand"):
        if name in blocks:
            np.testing.assert_allclose(block(a, blocks, name)[r], block(b, blocks, name), atol=1e-5)
    # advance and the value input (cluster token, pooled slots) do not depend on the order
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)
    np.testing.assert_allclose(a[fx.n_actions :], b[fx.n_actions :], atol=1e-5)


def test_a_slots_score_reads_the_other_jobs() -> None:
    # What attention adds: the job-scoring extractor scores a slot from itself and the cluster;
    # here changing another queued job (or a running one) changes slot 0's score.
    env, fx = extractor("hpcgym/Rigid-v0")
    blocks = menu_blocks(env)
    obs = random_obs(env)
    base = block(run(fx, obs), blocks, "start")[0, 0]
    for key, slot in (("queue", 4), ("running", 2)):
        changed = {k: v.copy() for k, v in obs.items()}
        changed[key][slot, 1:] = 1.0 - changed[key][slot, 1:]
        assert abs(block(run(fx, changed), blocks, "start")[0, 0] - base) > 1e-4
        plain = JobScoringExtractor(env.observation_space, blocks)  # type: ignore[arg-type]
        if key == "queue":
            s0 = block(run(plain, obs), blocks, "start")[0, 0]
            assert block(run(plain, changed), blocks, "start")[0, 0] == s0


@pytest.mark.parametrize("env_id", ["hpcgym/Rigid-v0", "hpcgym/Malleable-v0"])
def test_empty_slots_do_not_change_the_occupied_slots_logits(env_id: str) -> None:
    env, fx = extractor(env_id)
    blocks = menu_blocks(env)
    obs = random_obs(env, seed=1)
    rng = np.random.default_rng(2)
    garbage = {k: v.copy() for k, v in obs.items()}
    for key, n in (("queue", 6), ("running", 4), ("suspended", 2)):
        if key in garbage:
            garbage[key][n:, 1:] = rng.random(garbage[key][n:, 1:].shape)
    assert not np.array_equal(garbage["queue"], obs["queue"])
    a, b = run(fx, obs), run(fx, garbage)
    np.testing.assert_allclose(
        block(a, blocks, "start")[:6], block(b, blocks, "start")[:6], atol=1e-5
    )
    for name in ("shrink", "expand"):
        if name in blocks:
            np.testing.assert_allclose(
                block(a, blocks, name)[:4], block(b, blocks, name)[:4], atol=1e-5
            )
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)
    np.testing.assert_allclose(a[fx.n_actions :], b[fx.n_actions :], atol=1e-5)


@pytest.mark.parametrize("training", [False, True])
def test_no_nan_when_no_slot_is_occupied(training: bool) -> None:
    env, fx = extractor("hpcgym/Malleable-v0")
    fx.train(training)
    obs = {k: th.zeros((3, *sp.shape)) for k, sp in env.observation_space.items()}  # type: ignore[attr-defined]
    obs["time"] = th.rand(3, *obs["time"].shape[1:])
    obs["queue"][1, 0, 0] = 1.0  # one batch row with a queued job, two with nothing at all
    with th.no_grad():  # torch's inference fast path: NaN where every key is masked
        assert th.isfinite(fx(obs)).all()
    out = fx(obs)
    assert th.isfinite(out).all()
    out.sum().backward()
    assert all(th.isfinite(p.grad).all() for p in fx.parameters() if p.grad is not None)


def test_a_real_empty_queue_gives_finite_logits_and_the_policy_advances() -> None:
    env_id, kwargs = MALLEABLE
    env = gym.make(env_id, **kwargs)
    model = make_agent(env, policy="JobAttentionPolicy", seed=0, n_steps=64, batch_size=64)
    obs, _ = env.reset(seed=0)
    empty = {k: np.zeros_like(v) for k, v in obs.items()}
    empty["time"] = obs["time"]
    mask = np.zeros(env.action_space.n, dtype=bool)  # type: ignore[attr-defined]
    mask[0] = True
    action, _ = model.predict(empty, action_masks=mask, deterministic=True)
    assert int(action) == 0
    with th.no_grad():
        t = {k: th.as_tensor(v)[None] for k, v in empty.items()}
        dist = model.policy.get_distribution(t, action_masks=mask[None])
        assert th.isfinite(dist.distribution.logits[0, 0])
        assert th.isfinite(model.policy.predict_values(t)).all()


def test_bad_shapes_are_refused() -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=16)
    with pytest.raises(SpecError, match="multiple of heads"):
        JobAttentionExtractor(env.observation_space, menu_blocks(env), embed=30, heads=4)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="JobAttentionPolicy needs the env's menu layout"):
        JobAttentionExtractor(env.observation_space)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="MaskablePPO policy"):
        make_agent(env, "ppo", policy="JobAttentionPolicy")


def test_save_and_load_give_the_same_policy_and_actions(tmp_path: Path) -> None:
    env_id, kwargs = MALLEABLE
    env = gym.make(env_id, **kwargs)
    fx_kwargs = {"layers": 1, "heads": 2, "embed": 16}
    model = make_agent(
        env,
        policy="JobAttentionPolicy",
        policy_kwargs={"features_extractor_kwargs": fx_kwargs},
        seed=1,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
    )
    model.learn(128)
    save_agent(model, card_for(model, "maskable_ppo", env_id, kwargs), tmp_path / "agent")
    card = json.loads((tmp_path / "agent.json").read_text())
    assert card["policy"] == "JobAttentionPolicy"
    assert card["policy_kwargs"]["features_extractor_kwargs"]["layers"] == 1
    loaded, _ = load_agent(tmp_path / "agent")
    assert isinstance(loaded.policy, JobAttentionPolicy)
    assert len(loaded.policy.features_extractor.attention) == 1
    a, b = dict(model.policy.state_dict()), dict(loaded.policy.state_dict())
    assert a.keys() == b.keys() and all(th.equal(a[k], b[k]) for k in a)
    first, second = greedy_actions(model), greedy_actions(loaded)
    assert first == second and len(set(first)) > 1


def test_train_cli_trains_saves_and_evaluates_the_attention_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "attn"
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--policy", "JobAttentionPolicy"]
    argv += ["--timesteps", "128", "--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=64"]
    argv += ["--hp", "batch_size=64", "--hp", 'policy_kwargs={"features_extractor_kwargs":']
    argv[-1] += ' {"layers": 1}}'
    argv += ["--out", str(out), "--no-progress", "--eval-every", "64", "--eval-episodes", "1"]
    assert main(argv) == 0
    assert "agent:" in capsys.readouterr().out
    card = json.loads((out / "agent.json").read_text())
    assert card["policy"] == "JobAttentionPolicy" and card["timesteps"] == 128
    assert card["policy_kwargs"]["features_extractor_kwargs"]["layers"] == 1
    assert (out / "best.json").is_file()
    table = evaluate([str(out)], "hpcgym/Rigid-v0", [5], {"n_jobs": 16})
    assert table["jobs"].iloc[0] == 16 and table["invalid_actions"].iloc[0] == 0
    assert np.isfinite(table["mean_bsld"].iloc[0])
