"""``LeanMaskablePPO``: sb3-contrib's MaskablePPO, the same algorithm with less work per step.

MaskablePPO spends most of a training's CPU time around the policy rather than in it: every
rollout step and every minibatch builds two ``torch.distributions.Categorical`` objects
(validated arguments, two normalisations), and tensors are converted and copied one env or one
minibatch at a time. :class:`ExactMaskablePPO` runs the same computation directly:

* one forward pass of the policy's own modules for all the envs (features, latents, value and
  logits, as ``MaskableActorCriticPolicy.forward``);
* the masked categorical by hand, op for op as sb3-contrib's ``MaskableCategorical``
  (:mod:`hpcgym.agents.rl.masked_categorical`), so the sampled actions draw the same numbers
  from torch's generator and the stored log-probabilities and values are bit for bit the same;
* each step written into the rollout buffer's arrays in place (:func:`store_step`);
* the updates as :func:`hpcgym.agents.rl.lean_train.ppo_updates` (the same minibatches, losses
  and gradients); callbacks, episode bookkeeping and the timeout bootstrap as MaskablePPO.

A training with it and one with ``MaskablePPO`` from the same seed give the same agent, bit for
bit (``tests/agents/test_lean_ppo.py``). :class:`LeanMaskablePPO`, the default learner, adds the
job-scoring policy's shortcuts (:mod:`hpcgym.agents.rl.slot_scoring`): rollouts in numpy with
actions drawn by inverse transform, updates over occupied slots only. Same function, same
algorithm and hyperparameters, sums in another order: the same agent in distribution
(``benchmarks/lean_distribution.py``), not bit for bit. Other policies take the exact path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer, MaskableRolloutBuffer
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import obs_as_tensor
from stable_baselines3.common.vec_env import VecEnv

from hpcgym.agents.rl.lean_train import (
    fast_log_prob_and_entropy,
    module_evaluate,
    policy_latents,
    ppo_updates,
)
from hpcgym.agents.rl.masked_categorical import (
    MASKED_LOGIT,
    masked_log_probs,
    sample_masked,
)
from hpcgym.agents.rl.networks import JobScoringExtractor, JobScoringPolicy
from hpcgym.agents.rl.numpy_rollout import sample_numpy
from hpcgym.agents.rl.slot_scoring import (
    SLOT_GROUPS,
    NumpyScorer,
    SlotIndex,
    has_scoring_shortcut,
    scoring_forward,
)

__all__ = [
    "MASKED_LOGIT",
    "ExactMaskablePPO",
    "LeanMaskablePPO",
    "masked_log_probs",
    "sample_masked",
    "store_step",
]


def store_step(
    buffer: MaskableRolloutBuffer | MaskableDictRolloutBuffer,
    obs: Any,
    actions: np.ndarray,
    rewards: np.ndarray,
    episode_starts: Any,
    values: th.Tensor,
    log_probs: th.Tensor,
    masks: np.ndarray,
) -> None:
    """``buffer.add`` of one step of every env: the same arrays, written in place.

    A dict buffer of ``Box`` observations (hpcgym's) is written directly, without ``add``'s
    copies of every array on the way; any other buffer through its ``add``.
    """
    if not isinstance(buffer, MaskableDictRolloutBuffer) or not all(
        isinstance(sp, spaces.Box) for sp in buffer.observation_space.spaces.values()
    ):
        buffer.add(
            obs,
            actions.reshape(-1, 1),
            rewards,
            episode_starts,
            values,
            log_probs,
            action_masks=masks,
        )
        return
    at = buffer.pos
    for key, stored in buffer.observations.items():
        stored[at] = obs[key]
    buffer.actions[at] = actions.reshape(buffer.n_envs, buffer.action_dim)
    buffer.rewards[at] = rewards
    buffer.episode_starts[at] = episode_starts
    buffer.values[at] = values.numpy().reshape(-1)
    buffer.log_probs[at] = log_probs.numpy()
    buffer.action_masks[at] = masks.reshape(buffer.n_envs, buffer.mask_dims)
    buffer.pos += 1
    buffer.full = buffer.pos == buffer.buffer_size


def _has_direct_inference(policy: Any) -> bool:
    """Whether ``policy`` is hpcgym's job-scoring policy as built (its ``infer`` applies)."""
    return (
        isinstance(policy, JobScoringPolicy)
        and policy.share_features_extractor
        and isinstance(policy.features_extractor, JobScoringExtractor)
    )


class LeanMaskablePPO(MaskablePPO):
    """MaskablePPO without distribution objects, with the job-scoring policy's shortcuts.

    Discrete action spaces only (hpcgym's menus); with another space it falls back to
    MaskablePPO's own rollout. Callbacks find the step's ``actions``, ``values``,
    ``log_probs``, ``action_masks``, ``new_obs``, ``rewards``, ``dones`` and ``infos`` in
    ``self.locals`` (MaskablePPO hands over every local variable of its loop).

    With hpcgym's :class:`~hpcgym.agents.rl.networks.JobScoringPolicy` (unless :attr:`exact`),
    rollouts run the policy in numpy (:class:`~hpcgym.agents.rl.slot_scoring.NumpyScorer`) and
    draw actions by inverse transform, and updates compute the logits and values with
    :func:`~hpcgym.agents.rl.slot_scoring.scoring_forward`: the same function and algorithm,
    summed in another order, so the agent learns the same in distribution, not bit for bit.
    """

    exact = False
    """``True``: every number as sb3-contrib's MaskablePPO has it (:class:`ExactMaskablePPO`)."""

    def _shortcuts(self) -> bool:
        """Whether rollouts and updates take the job-scoring policy's shortcuts."""
        return not self.exact and has_scoring_shortcut(self.policy)

    def train(self) -> None:
        """MaskablePPO's updates, computed directly (:func:`.lean_train.ppo_updates`)."""
        if self._shortcuts():
            policy: Any = self.policy
            keys = [k for k in SLOT_GROUPS if k in policy.observation_space.spaces]
            slot_index: list[SlotIndex] = []  # the buffer's, built at the first minibatch

            def take(obs: Any, index: th.Tensor) -> Any:
                if not slot_index:
                    slot_index.append(SlotIndex(obs, keys))
                return slot_index[0].take(index)

            def evaluate(obs: Any, actions: th.Tensor, masks: th.Tensor) -> tuple[Any, Any, Any]:
                logits, values = scoring_forward(policy, obs)
                return values, *fast_log_prob_and_entropy(logits, masks, actions)

            # Adam as one fused kernel per parameter and gradient clipping over all parameters
            # at once (foreach): the same arithmetic with fewer ops; for these updates only
            groups = policy.optimizer.param_groups
            saved = [(g.get("foreach"), g.get("fused")) for g in groups]
            for g in groups:
                g["foreach"], g["fused"] = False, True
            try:
                ppo_updates(self, evaluate, take, clip_foreach=True, float_masks=True)
            finally:
                for g, (foreach, fused) in zip(groups, saved, strict=True):
                    g["foreach"], g["fused"] = foreach, fused
        else:
            ppo_updates(self, module_evaluate(self.policy))

    def _policy_step(self, obs: Any, masks: np.ndarray) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Actions, values and log-probabilities of one batch of observations (no gradient)."""
        logits, values = self._logits_and_values(obs_as_tensor(obs, self.device))
        mask_tensor = th.as_tensor(masks, dtype=th.bool, device=logits.device)
        actions, log_probs = sample_masked(logits, mask_tensor.reshape(logits.shape))
        return actions, values, log_probs

    def _logits_and_values(self, obs: Any) -> tuple[th.Tensor, th.Tensor]:
        """The policy's action logits (B, n) and values (B, 1), as its ``forward`` has them."""
        policy: Any = self.policy
        if _has_direct_inference(policy):
            logits, values = policy.infer(obs)
            return logits, values
        latent_pi, latent_vf = policy_latents(policy, obs)
        values = policy.value_net(latent_vf)
        return policy.action_net(latent_pi).view(-1, policy.action_dist.action_dim), values

    def collect_rollouts(
        self,
        env: VecEnv,
        callback: BaseCallback,
        rollout_buffer: RolloutBuffer,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        """Fill ``rollout_buffer`` with ``n_rollout_steps`` steps of every env.

        Returns:
            ``False`` when a callback stopped the rollout, else ``True``.
        """
        if not use_masking or not isinstance(self.action_space, spaces.Discrete):
            return super().collect_rollouts(
                env, callback, rollout_buffer, n_rollout_steps, use_masking
            )
        if not isinstance(rollout_buffer, MaskableRolloutBuffer | MaskableDictRolloutBuffer):
            raise TypeError("LeanMaskablePPO needs a masked rollout buffer")
        if not is_masking_supported(env):
            raise ValueError("the VecEnv gives no action masks (hpcgym's envs do)")
        assert self._last_obs is not None, "no observation yet: learn() sets it"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()
        dones: Any = self._last_episode_starts
        new_obs: Any = self._last_obs
        step = self._rollout_stepper(n_rollout_steps, env.num_envs)
        for i in range(n_rollout_steps):
            action_masks = get_action_masks(env)
            actions, values, log_probs = step(i, self._last_obs, action_masks)
            new_obs, rewards, dones, infos = env.step(actions)
            self.num_timesteps += env.num_envs
            callback.update_locals(
                {
                    "actions": actions,
                    "values": values,
                    "log_probs": log_probs,
                    "action_masks": action_masks,
                    "new_obs": new_obs,
                    "rewards": rewards,
                    "dones": dones,
                    "infos": infos,
                }
            )
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            self._bootstrap_timeouts(rewards, dones, infos)
            store_step(
                rollout_buffer,
                self._last_obs,
                actions,
                rewards,
                self._last_episode_starts,
                values,
                log_probs,
                action_masks,
            )
            self._last_obs = new_obs
            self._last_episode_starts = dones
        with th.no_grad():
            last_values = self.policy.predict_values(obs_as_tensor(new_obs, self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=last_values, dones=dones)
        callback.on_rollout_end()
        return True

    def _rollout_stepper(self, n_steps: int, n_envs: int) -> Any:
        """``step(i, obs, masks) -> (actions, values, log_probs)`` for the rollout's step ``i``.

        With the shortcuts: the policy in numpy, the actions drawn with uniforms taken from
        torch's generator once per rollout. Else the policy's torch modules and
        ``torch.multinomial``, as MaskablePPO draws.
        """
        if not self._shortcuts():

            def torch_step(i: int, obs: Any, masks: np.ndarray) -> tuple[Any, Any, Any]:
                with th.inference_mode():  # no_grad without autograd's bookkeeping
                    actions, values, log_probs = self._policy_step(obs, masks)
                return actions.numpy(), values, log_probs

            return torch_step
        scorer = NumpyScorer(self.policy)  # type: ignore[arg-type]
        uniforms = th.rand(n_steps, n_envs, dtype=th.float64).numpy()

        def numpy_step(i: int, obs: Any, masks: np.ndarray) -> tuple[Any, Any, Any]:
            logits, values = scorer(obs)
            actions, log_probs = sample_numpy(logits, masks, uniforms[i])
            return actions, th.from_numpy(values).unsqueeze(1), th.from_numpy(log_probs)

        return numpy_step

    def _bootstrap_timeouts(self, rewards: np.ndarray, dones: np.ndarray, infos: Any) -> None:
        """Add the discounted value of a truncated episode's last observation to its reward."""
        for i, done in enumerate(dones):
            info = infos[i]
            terminal = info.get("terminal_observation")
            if done and terminal is not None and info.get("TimeLimit.truncated", False):
                obs = self.policy.obs_to_tensor(terminal)[0]
                with th.no_grad():
                    rewards[i] += self.gamma * self.policy.predict_values(obs)[0]


class ExactMaskablePPO(LeanMaskablePPO):
    """:class:`LeanMaskablePPO` computing every number as sb3-contrib's MaskablePPO does.

    The policy's own modules in rollouts and updates, ``torch.multinomial`` draws: a training
    from the same seed gives sb3-contrib's agent bit for bit (``hpcgym train --learner exact``).
    """

    exact = True
