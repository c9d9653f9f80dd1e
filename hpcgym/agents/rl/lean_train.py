"""PPO's gradient updates without distribution objects: MaskablePPO's ``train``, computed directly.

sb3-contrib's ``MaskablePPO.train`` builds, per minibatch, two ``MaskableCategorical`` objects
(validated arguments, two normalisations) and copies every minibatch array out of the rollout
buffer into new tensors. :func:`ppo_updates` runs the same updates:

* the buffer's arrays are flattened once (as ``get`` does) and shared with torch without a copy;
  each minibatch is a ``index_select`` of them, in the order of the same
  ``np.random.permutation`` per epoch;
* the masked log-probabilities and entropy come from the logits directly
  (:func:`masked_log_prob_and_entropy`), op for op as ``MaskableCategorical``'s ``log_prob`` and
  ``entropy``;
* the clipped surrogate, value and entropy losses, the approximate KL early stop, gradient
  clipping and the optimizer step are MaskablePPO's, with the same logged values.

What computes the values and logits is the caller's (an ``Evaluate``): the policy's own
modules in the same order as ``evaluate_actions`` give sb3-contrib's numbers bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch as th
import torch.nn.functional as F
from stable_baselines3.common.utils import explained_variance

from hpcgym.agents.rl.masked_categorical import log_prob_of, masked_entropy, masked_log_probs

Evaluate = Callable[[Any, th.Tensor, th.Tensor], tuple[th.Tensor, th.Tensor, th.Tensor]]
"""``(observations, actions, masks) -> (values (B, 1), log_prob (B,), entropy (B,))``."""

_ROLLOUT_ARRAYS = ("actions", "values", "log_probs", "advantages", "returns", "action_masks")


def masked_log_prob_and_entropy(
    logits: th.Tensor, masks: th.Tensor, actions: th.Tensor
) -> tuple[th.Tensor, th.Tensor]:
    """Log-probabilities of ``actions`` and entropy of the masked categorical over ``logits``."""
    log_p = masked_log_probs(logits, masks)
    return log_prob_of(log_p, actions), masked_entropy(log_p, masks)


FAR_BELOW = -80.0
"""A masked entry's shifted logit in :func:`fast_log_prob_and_entropy`.

Relative to the row's largest legal logit: far enough below for ``exp`` to be negligible (1.8e-35,
zeroed besides), near enough for the result to be a normal float: torch's ``exp`` takes a slow
path, about 150 times slower, for inputs below about -87 (denormal or zero results), where
sb3-contrib's ``-1e8`` puts every masked entry."""


def fast_log_prob_and_entropy(
    logits: th.Tensor, masks: th.Tensor, actions: th.Tensor
) -> tuple[th.Tensor, th.Tensor]:
    """:func:`masked_log_prob_and_entropy`'s function, with one normalisation and no slow ``exp``.

    The masked categorical's log-probabilities are the log-softmax over the legal entries only:
    MaskablePPO's two normalisations (over every entry, then over the legal ones after masking
    with ``-1e8``) cancel but for rounding. Here the logits are shifted by the largest legal one
    (no gradient: the log-softmax does not depend on the shift), masked entries set to
    :data:`FAR_BELOW` and their ``exp`` zeroed; the entropy is ``log S - sum(p z)``. The same
    values and gradients as :func:`masked_log_prob_and_entropy` up to float rounding.

    ``masks``: bool, or 0/1 in ``logits``' dtype (the rollout buffer's own array: no
    conversion). The masking is arithmetic with the 0/1 mask rather than ``torch.where``, whose
    CPU kernel with a bool condition is about 25 times slower than a multiplication; ``x * 1 +
    0`` is ``x`` and ``x * 0 + c`` is ``c``, so the numbers are those of ``where``, bit for bit.
    """
    legal = masks if masks.dtype == logits.dtype else masks.to(logits.dtype)
    illegal = 1.0 - legal
    with th.no_grad():
        top = (logits - illegal * _NEVER_TOP).amax(dim=-1, keepdim=True)
    z = (logits - top) * legal + illegal * FAR_BELOW
    e = z.exp() * legal
    total = e.sum(dim=-1)
    log_total = total.log()
    log_prob = z.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1) - log_total
    entropy = log_total - (e * z).sum(dim=-1) / total
    return log_prob, entropy


_NEVER_TOP = 1e30
"""Subtracted from the masked logits before the row's maximum: no masked entry is the top."""


def policy_latents(policy: Any, obs: Any) -> tuple[th.Tensor, th.Tensor]:
    """The actor's and critic's latents of ``obs``, as sb3's ``ActorCriticPolicy`` builds them."""
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
        return latent_pi, latent_vf
    return (
        policy.mlp_extractor.forward_actor(features[0]),
        policy.mlp_extractor.forward_critic(features[1]),
    )


def module_evaluate(policy: Any) -> Evaluate:
    """``policy.evaluate_actions`` with the masked categorical by hand: the same ops in order.

    Features, latents, logits, the masked log-probabilities and the actions' share of them,
    the values, then the entropy, as sb3-contrib's method creates them: the same numbers and
    gradients bit for bit.
    """

    def evaluate(obs: Any, actions: th.Tensor, masks: th.Tensor) -> tuple[Any, Any, Any]:
        latent_pi, latent_vf = policy_latents(policy, obs)
        logits = policy.action_net(latent_pi).view(-1, policy.action_dist.action_dim)
        log_p = masked_log_probs(logits, masks.reshape(logits.shape))
        log_prob = log_prob_of(log_p, actions)
        values = policy.value_net(latent_vf)
        return values, log_prob, masked_entropy(log_p, masks.reshape(logits.shape))

    return evaluate


def _flat_buffer(buffer: Any) -> tuple[Any, dict[str, th.Tensor]]:
    """The buffer's observations and other arrays, flattened as ``get`` does, as torch views."""
    if not buffer.generator_ready:
        if isinstance(buffer.observations, dict):
            for key, array in buffer.observations.items():
                buffer.observations[key] = buffer.swap_and_flatten(array)
        else:
            buffer.observations = buffer.swap_and_flatten(buffer.observations)
        for name in _ROLLOUT_ARRAYS:
            buffer.__dict__[name] = buffer.swap_and_flatten(buffer.__dict__[name])
        buffer.generator_ready = True
    obs: Any
    if isinstance(buffer.observations, dict):
        obs = {k: th.from_numpy(v) for k, v in buffer.observations.items()}
    else:
        obs = th.from_numpy(buffer.observations)
    arrays = {name: th.from_numpy(buffer.__dict__[name]) for name in _ROLLOUT_ARRAYS}
    arrays["action_masks"] = arrays["action_masks"].reshape(-1, buffer.mask_dims)
    return obs, arrays


def _take(obs: Any, index: th.Tensor) -> Any:
    if isinstance(obs, dict):
        return {k: v.index_select(0, index) for k, v in obs.items()}
    return obs.index_select(0, index)


Take = Callable[[Any, th.Tensor], Any]
"""``(observations of the whole buffer, minibatch index) -> the minibatch's observations``."""


def ppo_updates(
    model: Any,
    evaluate: Evaluate,
    take: Take = _take,
    clip_foreach: bool | None = None,
    float_masks: bool = False,
) -> None:
    """One ``MaskablePPO.train``: ``n_epochs`` passes over the rollout buffer in minibatches.

    ``take`` gives ``evaluate`` each minibatch's observations (default: the rows, copied);
    ``clip_foreach`` is ``clip_grad_norm_``'s ``foreach`` (``None``: torch's choice, as
    MaskablePPO); ``float_masks``: ``evaluate`` gets the action masks as the buffer holds them
    (0/1 floats) rather than as bools.
    """
    policy = model.policy
    policy.set_training_mode(True)
    model._update_learning_rate(policy.optimizer)
    clip_range = model.clip_range(model._current_progress_remaining)
    clip_range_vf = None
    if model.clip_range_vf is not None:
        clip_range_vf = model.clip_range_vf(model._current_progress_remaining)
    buffer = model.rollout_buffer
    assert buffer.full, "the rollout buffer is not full"
    size = buffer.buffer_size * buffer.n_envs
    obs, arrays = _flat_buffer(buffer)
    # once per update, not per minibatch
    masks = arrays["action_masks"] if float_masks else arrays["action_masks"].bool()
    params = list(policy.parameters())  # once, not a module walk per minibatch
    entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
    approx_kl_divs: list[np.ndarray] = []
    continue_training = True
    loss = th.zeros(())
    for epoch in range(model.n_epochs):
        approx_kl_divs = []
        order = th.from_numpy(np.random.permutation(size))
        for start in range(0, size, model.batch_size):
            index = order[start : start + model.batch_size]
            actions = arrays["actions"].index_select(0, index).long().flatten()
            values, log_prob, entropy = evaluate(
                take(obs, index), actions, masks.index_select(0, index)
            )
            values = values.flatten()
            advantages = arrays["advantages"].index_select(0, index).flatten()
            if model.normalize_advantage:
                advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
            old_log_prob = arrays["log_probs"].index_select(0, index).flatten()
            ratio = th.exp(log_prob - old_log_prob)
            policy_loss_1 = advantages * ratio
            policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
            policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
            pg_losses.append(policy_loss.item())
            clip_fractions.append(th.mean((th.abs(ratio - 1) > clip_range).float()).item())
            if clip_range_vf is None:
                values_pred = values
            else:
                old_values = arrays["values"].index_select(0, index).flatten()
                values_pred = old_values + th.clamp(values - old_values, -clip_range_vf,
                                                    clip_range_vf)  # fmt: skip
            returns = arrays["returns"].index_select(0, index).flatten()
            value_loss = F.mse_loss(returns, values_pred)
            value_losses.append(value_loss.item())
            entropy_loss = -th.mean(entropy)
            entropy_losses.append(entropy_loss.item())
            loss = policy_loss + model.ent_coef * entropy_loss + model.vf_coef * value_loss
            with th.no_grad():
                log_ratio = log_prob - old_log_prob
                approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                approx_kl_divs.append(approx_kl_div)
            if model.target_kl is not None and approx_kl_div > 1.5 * model.target_kl:
                continue_training = False
                if model.verbose >= 1:
                    print(f"Early stopping at step {epoch}: max kl reached ({approx_kl_div:.2f})")
                break
            policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(params, model.max_grad_norm, foreach=clip_foreach)
            policy.optimizer.step()
        model._n_updates += 1
        if not continue_training:
            break
    _log(model, loss, clip_range, clip_range_vf, entropy_losses, pg_losses, value_losses,
         approx_kl_divs, clip_fractions)  # fmt: skip


def _log(
    model: Any,
    loss: th.Tensor,
    clip_range: float,
    clip_range_vf: float | None,
    *losses: list[Any],
) -> None:
    """The ``train/`` records MaskablePPO's ``train`` makes."""
    entropy_losses, pg_losses, value_losses, approx_kl_divs, clip_fractions = losses
    buffer = model.rollout_buffer
    explained_var = explained_variance(buffer.values.flatten(), buffer.returns.flatten())
    logger = model.logger
    logger.record("train/entropy_loss", np.mean(entropy_losses))
    logger.record("train/policy_gradient_loss", np.mean(pg_losses))
    logger.record("train/value_loss", np.mean(value_losses))
    logger.record("train/approx_kl", np.mean(approx_kl_divs))
    logger.record("train/clip_fraction", np.mean(clip_fractions))
    logger.record("train/loss", loss.item())
    logger.record("train/explained_variance", explained_var)
    logger.record("train/n_updates", model._n_updates, exclude="tensorboard")
    logger.record("train/clip_range", clip_range)
    if clip_range_vf is not None:
        logger.record("train/clip_range_vf", clip_range_vf)
