"""LeanMaskablePPO's job-scoring shortcuts: the policy's function and PPO's updates, reordered.

Numpy rollouts and updates over occupied slots only sum in another order than the policy's
modules: these tests hold them to float tolerance against sb3-contrib's numbers.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.distributions import MaskableCategorical

import hpcgym  # noqa: F401
from hpcgym.agents.rl.lean_train import (
    FAR_BELOW,
    fast_log_prob_and_entropy,
    masked_log_prob_and_entropy,
    module_evaluate,
)
from hpcgym.agents.rl.make import make_agent
from hpcgym.agents.rl.numpy_rollout import sample_numpy
from hpcgym.agents.rl.slot_scoring import (
    SLOT_GROUPS,
    NumpyScorer,
    OccupiedSlots,
    SlotIndex,
    has_scoring_shortcut,
    scoring_forward,
)

CASES = [
    ("hpcgym/Rigid-v0", {}),
    ("hpcgym/Malleable-v0", {}),  # several levels per running slot
    ("hpcgym/Shared-v0", {}),  # suspended slots
    ("hpcgym/Rigid-v0", {"queue_slots": 64, "selection": "reserve"}),
]
IDS = ["rigid", "malleable", "shared", "reserve"]


def _played(env: gym.Env[Any, Any], steps: int = 200) -> tuple[dict[str, th.Tensor], np.ndarray]:
    """Observations and masks of a random legal play (occupied and empty slots, as in training)."""
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    seen, masks = [], []
    for _ in range(steps):
        mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
        seen.append(obs)
        masks.append(mask)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    return {k: th.as_tensor(np.stack([o[k] for o in seen])) for k in seen[0]}, np.stack(masks)


def _model(env_id: str, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    env = gym.make(env_id, n_jobs=32, **kwargs)
    model = make_agent(env, seed=0, lean=True)
    with th.no_grad():  # away from the small initial heads: logits that differ between slots
        for p in model.policy.parameters():
            p.add_(th.randn_like(p) * 0.2)
    return model, env


def _reference(policy: Any, obs: dict[str, th.Tensor]) -> tuple[th.Tensor, th.Tensor]:
    features = policy.extract_features(obs)
    latent_pi, latent_vf = policy.mlp_extractor(features)
    return policy.action_net(latent_pi), policy.value_net(latent_vf)


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_shortcut_forwards_compute_the_policys_function(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    model, env = _model(env_id, kwargs)
    policy = model.policy
    assert has_scoring_shortcut(policy)
    obs, _ = _played(env)
    assert bool((obs["queue"][..., 0] == 0).any()) and bool((obs["queue"][..., 0] != 0).any())
    with th.no_grad():
        logits, values = _reference(policy, obs)
        for sparse in (True, False):
            fast_logits, fast_values = scoring_forward(policy, obs, sparse=sparse)
            assert th.allclose(fast_logits, logits, atol=1e-5, rtol=1e-5)
            assert th.allclose(fast_values, values, atol=1e-5, rtol=1e-5)
    np_logits, np_values = NumpyScorer(policy)({k: v.numpy() for k, v in obs.items()})
    assert np.allclose(np_logits, logits.numpy(), atol=1e-5, rtol=1e-5)
    assert np.allclose(np_values, values.numpy()[:, 0], atol=1e-5, rtol=1e-5)
    env.close()


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_sparse_updates_give_the_policys_gradients(env_id: str, kwargs: dict[str, Any]) -> None:
    model, env = _model(env_id, kwargs)
    policy = model.policy
    obs, _ = _played(env)
    grads = []
    for forward in (_reference, scoring_forward):
        policy.zero_grad()
        logits, values = forward(policy, obs)
        (logits.sin().sum() + values.square().sum()).backward()
        grads.append(
            {n: p.grad.clone() for n, p in policy.named_parameters() if p.grad is not None}
        )
    ref, fast = grads
    assert ref.keys() == fast.keys()
    for name in ref:
        scale = float(ref[name].abs().max()) + 1e-6
        assert th.allclose(fast[name], ref[name], atol=1e-5 * scale, rtol=1e-4), name
    env.close()


def test_the_numpy_scorer_is_a_snapshot_built_per_rollout() -> None:
    model, env = _model("hpcgym/Rigid-v0", {})
    obs, _ = _played(env, 20)
    arrays = {k: v.numpy() for k, v in obs.items()}
    scorer = NumpyScorer(model.policy)
    before = scorer(arrays)[0].copy()
    with th.no_grad():
        for p in model.policy.parameters():
            p.mul_(1.5)
        logits, _ = _reference(model.policy, obs)
    assert np.array_equal(scorer(arrays)[0], before)  # its own copy of the parameters
    assert not np.allclose(before, logits.numpy(), atol=1e-3)
    assert np.allclose(NumpyScorer(model.policy)(arrays)[0], logits.numpy(), atol=1e-5)
    env.close()


def test_a_rollout_step_draws_legal_actions_with_the_policys_log_probs() -> None:
    model, env = _model("hpcgym/Malleable-v0", {})
    obs, masks = _played(env, 64)
    logits, _ = NumpyScorer(model.policy)({k: v.numpy() for k, v in obs.items()})
    uniform = np.random.default_rng(3).random(len(masks))
    actions, log_probs = sample_numpy(logits, masks, uniform)
    assert masks[np.arange(len(masks)), actions].all()
    with th.no_grad():
        ref_logits, _ = _reference(model.policy, obs)
    dist = MaskableCategorical(logits=ref_logits, masks=th.as_tensor(masks.astype(bool)))
    assert np.allclose(log_probs, dist.log_prob(th.as_tensor(actions)).numpy(), atol=1e-5)
    env.close()


def test_numpy_draws_follow_the_masked_categorical_and_never_a_masked_entry() -> None:
    gen = th.Generator().manual_seed(0)
    logits = th.randn(3, 7, generator=gen) * 2
    masks = th.rand(3, 7, generator=gen) < 0.6
    masks[:, 2] = True
    dist = MaskableCategorical(logits=logits, masks=masks)
    draws = 20000
    uniform = (np.arange(draws) + 0.5) / draws  # evenly spread: counts follow the cdf exactly
    counts = np.zeros((3, 7))
    for u in uniform:
        actions, log_probs = sample_numpy(logits.numpy(), masks.numpy(), np.full(3, u))
        counts[np.arange(3), actions] += 1
        assert np.allclose(log_probs, dist.log_prob(th.as_tensor(actions)).numpy(), atol=1e-5)
    assert not counts[~masks.numpy()].any()
    assert np.abs(counts / draws - dist.probs.numpy()).max() < 2 / draws
    with pytest.raises(ValueError, match="no legal action"):
        sample_numpy(logits.numpy(), np.zeros((3, 7), dtype=bool), np.full(3, 0.5))


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_log_probs_and_entropy_match_sb3_contribs_on_a_minibatch(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    model, env = _model(env_id, kwargs)
    policy = model.policy
    obs, masks = _played(env, 64)
    mask_t = th.as_tensor(masks.astype(bool))
    rng = np.random.default_rng(1)
    actions = th.as_tensor([rng.choice(np.flatnonzero(m)) for m in masks])
    with th.no_grad():
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=mask_t)
        exact = module_evaluate(policy)(obs, actions, mask_t)
        logits, fast_values = scoring_forward(policy, obs)
        fast_log_prob, fast_entropy = masked_log_prob_and_entropy(logits, mask_t, actions)
    for mine, theirs in zip(exact, (values, log_prob, entropy), strict=True):
        assert th.equal(mine, theirs)  # the policy's own modules: bit for bit
    assert th.allclose(fast_values, values, atol=1e-5)
    assert th.allclose(fast_log_prob, log_prob, atol=1e-4)
    assert th.allclose(fast_entropy, entropy, atol=1e-4)
    env.close()


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("hpcgym/Rigid-v0", {}),
        ("hpcgym/Malleable-v0", {}),
        ("hpcgym/Rigid-v0", {"queue_slots": 64, "selection": "reserve"}),
    ],
    ids=["rigid", "malleable", "reserve"],
)
def test_one_lean_update_moves_the_weights_as_sb3_contribs_train(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    env = gym.make(env_id, n_jobs=16, **kwargs)
    model = make_agent(env, seed=2, lean=True, n_steps=256, batch_size=64, n_epochs=2)
    _, callback = model._setup_learn(256, callback=None)
    assert model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
    start = copy.deepcopy(model.policy.state_dict())
    buffer = copy.deepcopy(model.rollout_buffer)
    weights = []
    for update in (lambda: MaskablePPO.train(model), model.train):
        model.policy.load_state_dict(start)
        model.policy.optimizer.state.clear()
        model.rollout_buffer = copy.deepcopy(buffer)
        np.random.seed(4)  # the same minibatches
        update()
        weights.append({k: v.clone() for k, v in model.policy.state_dict().items()})
    ref, lean = weights
    moved = max(float((ref[k] - start[k]).abs().max()) for k in ref)
    gap = max(float((ref[k] - lean[k]).abs().max()) for k in ref)
    assert moved > 1e-4  # the update did something
    assert gap < 1e-3 * moved
    env.close()


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
def test_a_slot_index_minibatch_gives_the_policys_logits_values_and_gradients(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    model, env = _model(env_id, kwargs)
    policy = model.policy
    obs, _ = _played(env)
    keys = [k for k in SLOT_GROUPS if k in obs]
    index = th.from_numpy(np.random.default_rng(1).permutation(len(obs["time"]))[:64])
    minibatch = SlotIndex(obs, keys).take(index)
    assert all(isinstance(minibatch[k], OccupiedSlots) for k in keys)
    assert sum(len(minibatch[k].x) for k in keys) > 0  # some slots are occupied
    dense = {k: v.index_select(0, index) for k, v in obs.items()}
    results = []
    for forward, batch in ((_reference, dense), (scoring_forward, minibatch)):
        policy.zero_grad()
        logits, values = forward(policy, batch)
        (logits.sin().sum() + values.square().sum()).backward()
        grads = {n: p.grad.clone() for n, p in policy.named_parameters() if p.grad is not None}
        results.append((logits.detach(), values.detach(), grads))
    (ref_logits, ref_values, ref), (logits, values, fast) = results
    assert th.allclose(logits, ref_logits, atol=1e-5, rtol=1e-4)
    assert th.allclose(values, ref_values, atol=1e-5, rtol=1e-4)
    assert ref.keys() == fast.keys()
    for name in ref:
        scale = float(ref[name].abs().max()) + 1e-6
        assert th.allclose(fast[name], ref[name], atol=1e-5 * scale, rtol=1e-4), name
    env.close()


def test_lean_updates_leave_the_optimizers_settings_as_they_were() -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=16)
    model = make_agent(env, seed=2, lean=True, n_steps=64, batch_size=32, n_epochs=1)
    before = [dict(g) for g in model.policy.optimizer.param_groups]
    start = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(128)
    after = model.policy.optimizer.param_groups
    assert [g["foreach"] for g in after] == [g["foreach"] for g in before]
    assert [g["fused"] for g in after] == [g["fused"] for g in before]
    assert any(not th.equal(a, p) for a, p in zip(start, model.policy.parameters(), strict=True))
    env.close()


@pytest.mark.parametrize("scale", [1.0, 10.0, 60.0])
def test_fast_log_probs_and_entropy_give_the_masked_categoricals_values_and_gradients(
    scale: float,
) -> None:
    gen = th.Generator().manual_seed(5)
    logits = (th.randn(256, 161, generator=gen) * scale).requires_grad_()
    masks = th.rand(256, 161, generator=gen) < 0.2
    masks[:, 3] = True
    masks[:8] = False
    masks[:8, 7] = True  # rows with one legal entry: log-probability 0, entropy 0
    actions = th.multinomial(masks.float(), 1, generator=gen).squeeze(1)
    results = []
    for f in (masked_log_prob_and_entropy, fast_log_prob_and_entropy):
        logits.grad = None
        log_prob, entropy = f(logits, masks, actions)
        (log_prob.sin().sum() + entropy.square().sum()).backward()
        assert logits.grad is not None
        results.append((log_prob.detach(), entropy.detach(), logits.grad.clone()))
    (ref_lp, ref_ent, ref_grad), (lp, ent, grad) = results
    assert th.allclose(lp, ref_lp, atol=1e-5 * scale, rtol=1e-5)
    assert th.allclose(ent, ref_ent, atol=1e-5, rtol=1e-5)
    assert th.allclose(grad, ref_grad, atol=1e-5 * scale, rtol=1e-4)
    assert not grad[~masks].any()  # no gradient through a masked entry
    assert th.equal(lp[:8], th.zeros(8)) and th.equal(ent[:8], th.zeros(8))


def test_fast_log_probs_take_the_buffers_float_masks_with_the_numbers_of_torch_where() -> None:
    gen = th.Generator().manual_seed(6)
    logits = (th.randn(64, 40, generator=gen) * 20.0).requires_grad_()
    masks = th.rand(64, 40, generator=gen) < 0.3
    masks[:, 0] = True
    actions = th.multinomial(masks.float(), 1, generator=gen).squeeze(1)
    results = []
    for given in (masks, masks.float()):
        logits.grad = None
        log_prob, entropy = fast_log_prob_and_entropy(logits, given, actions)
        (log_prob.sin().sum() + entropy.square().sum()).backward()
        assert logits.grad is not None
        results.append((log_prob.detach(), entropy.detach(), logits.grad.clone()))
    # the masking by arithmetic is torch.where's, bit for bit
    with th.no_grad():
        top = th.where(masks, logits, -th.inf).amax(dim=-1, keepdim=True)
        z = th.where(masks, logits - top, FAR_BELOW)
        e = th.where(masks, z.exp(), 0.0)
        total = e.sum(dim=-1)
        by_where = z.gather(-1, actions.unsqueeze(-1)).squeeze(-1) - total.log()
    for a, b in zip(*results, strict=True):
        assert th.equal(a, b)
    assert th.equal(results[0][0], by_where)
