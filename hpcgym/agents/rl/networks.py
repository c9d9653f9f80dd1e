"""Policies for ClusterEnv's flat menu: a permutation-invariant job-scoring policy for MaskablePPO.

``JobScoringPolicy`` follows RLScheduler's kernel network: one small network, shared by every
queue slot, scores a queued job from its own features and a summary of the cluster; another,
shared by every running slot, scores that job's resize (and grant, suspend) entries; a third
scores each suspended slot's resume. The scores are the action logits, laid out as the env's
menu (``hpcgym.envs.menu``), so sb3-contrib's mask applies to them unchanged. Swapping two
queue slots swaps their logits; the value head reads the cluster summary and the mean of the
per-slot embeddings over occupied slots, so it does not depend on the order at all.

``JobAttentionPolicy`` adds, between the slot embeddings and the same scoring heads, a few
pre-norm self-attention layers over every occupied queue, running (and suspended) slot and a
cluster token: each job's score can then depend on the other jobs waiting and running, not only
on the cluster summary. Empty slots are masked out as keys; the cluster token is never masked,
so a step with no job anywhere still has a key to attend to (no NaN). No positional encoding:
the scores stay equivariant to slot permutations.

The plain MLP is SB3's own ``MultiInputPolicy`` (Dict observations) or ``MlpPolicy``
(``observation="flat"``).
"""

from __future__ import annotations

import math
from typing import Any

import torch as th
import torch.nn.functional as F
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from hpcgym.errors import SpecError
from hpcgym.policies.layout import Blocks, menu_blocks

__all__ = [
    "JobAttentionExtractor",
    "JobAttentionPolicy",
    "JobScoringExtractor",
    "JobScoringPolicy",
    "menu_blocks",
]

_QUEUE_BLOCKS = ("start", "coschedule")
_RUNNING_BLOCKS = ("shrink", "expand", "grant", "suspend")


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out), nn.Tanh())


def _run_mlp(body: nn.Sequential, x: th.Tensor) -> th.Tensor:
    """``body(x)`` for :func:`_mlp`'s layers, op for op, without module dispatch."""
    first, second = body[0], body[2]
    return th.tanh(_run_linear(second, th.tanh(_run_linear(first, x))))


def _run_linear(layer: Any, x: th.Tensor) -> th.Tensor:
    """``layer(x)`` for an ``nn.Linear``, without module dispatch."""
    out: th.Tensor = F.linear(x, layer.weight, layer.bias)
    return out


def _pool(h: th.Tensor, present: th.Tensor) -> th.Tensor:
    """Mean of slot embeddings ``h`` (B, S, D) over occupied slots (``present`` B, S)."""
    w = present.unsqueeze(-1)
    return (h * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)


class JobScoringExtractor(BaseFeaturesExtractor):
    """Per-slot scores (the menu's logits, in menu order) followed by a pooled value embedding.

    Args:
        observation_space: The env's ``Dict`` observation space.
        blocks: The menu layout (:func:`menu_blocks`); the spaces alone do not tell it.
        hidden: Width of the shared slot networks.
        embed: Width of the cluster summary and of the slot embeddings.

    Raises:
        SpecError: ``blocks`` is missing (build the agent with :func:`hpcgym.agents.make_agent`).
    """

    policy_label = "JobScoringPolicy"

    def __init__(
        self,
        observation_space: spaces.Dict,
        blocks: Blocks | None = None,
        hidden: int = 64,
        embed: int = 32,
    ) -> None:
        if blocks is None:
            raise SpecError(
                f"{self.policy_label} needs the env's menu layout, which its spaces do not tell: "
                "build the agent with hpcgym.agents.make_agent(env, algo='maskable_ppo'), or pass "
                "policy_kwargs={'features_extractor_kwargs': {'blocks': menu_blocks(env)}} "
                "(hpcgym.policies.layout.menu_blocks)"
            )
        shapes = {k: sp.shape for k, sp in observation_space.spaces.items()}
        assert all(s is not None for s in shapes.values())
        self.blocks = dict(blocks)
        self.n_actions = 1 + sum(
            slots * lv for name, (_, slots, lv) in blocks.items() if name != "advance"
        )
        self.q_levels = [blocks[b][2] for b in _QUEUE_BLOCKS if b in blocks]
        self.r_levels = [blocks[b][2] for b in _RUNNING_BLOCKS if b in blocks]
        self.has_resume = "resume" in blocks
        ctx_in = math.prod(shapes["cluster"]) + int(shapes["time"][0])  # type: ignore[arg-type,index]
        pooled = 2 + int(self.has_resume)
        super().__init__(observation_space, self.n_actions + embed * (1 + pooled))
        self.context = nn.Sequential(nn.Linear(ctx_in, embed), nn.Tanh())
        self.advance = nn.Linear(embed, 1)
        self.queue_body = _mlp(shapes["queue"][1] + embed, hidden, embed)  # type: ignore[index]
        self.queue_score = nn.Linear(embed, sum(self.q_levels))
        self.run_body = _mlp(shapes["running"][1] + embed, hidden, embed)  # type: ignore[index]
        self.run_score = nn.Linear(embed, max(1, sum(self.r_levels)))
        if self.has_resume:
            self.susp_body = _mlp(shapes["suspended"][1] + embed, hidden, embed)  # type: ignore[index]
            self.susp_score = nn.Linear(embed, 1)

    def score_heads(self) -> list[nn.Module]:
        """The layers that output logits (initialised small, as SB3 does for its action net)."""
        heads: list[nn.Module] = [self.advance, self.queue_score, self.run_score]
        return [*heads, self.susp_score] if self.has_resume else heads

    def _slots(self, x: th.Tensor, ctx: th.Tensor, body: nn.Module) -> th.Tensor:
        c = ctx.unsqueeze(1).expand(-1, x.shape[1], -1)
        out: th.Tensor = body(th.cat([x, c], dim=-1))
        return out

    @staticmethod
    def _split(scores: th.Tensor, levels: list[int]) -> list[th.Tensor]:
        parts, at = [], 0
        for lv in levels:
            parts.append(scores[..., at : at + lv].reshape(scores.shape[0], -1))
            at += lv
        return parts

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """Logits in menu order, then ``[context, pooled queue, pooled running(, suspended)]``."""
        batch = obs["queue"].shape[0]
        ctx = self.context(th.cat([obs["cluster"].reshape(batch, -1), obs["time"]], dim=-1))
        qh = self._slots(obs["queue"], ctx, self.queue_body)
        rh = self._slots(obs["running"], ctx, self.run_body)
        logits = [self.advance(ctx)]
        logits += self._split(self.queue_score(qh), self.q_levels)
        logits += self._split(self.run_score(rh), self.r_levels)
        pooled = [ctx, _pool(qh, obs["queue"][..., 0]), _pool(rh, obs["running"][..., 0])]
        if self.has_resume:
            sh = self._slots(obs["suspended"], ctx, self.susp_body)
            logits.append(self.susp_score(sh).reshape(batch, -1))
            pooled.append(_pool(sh, obs["suspended"][..., 0]))
        return th.cat(logits + pooled, dim=-1)

    def infer(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """:meth:`forward`'s numbers, op for op, calling the layers' functions directly.

        For rollouts (no gradient needed): the module calls' dispatch costs about as much as
        the arithmetic at a rollout's batch of a few envs. Subclasses that change ``forward``
        override this too.
        """
        batch = obs["queue"].shape[0]
        context = self.context[0]
        ctx = th.tanh(
            _run_linear(context, th.cat([obs["cluster"].reshape(batch, -1), obs["time"]], dim=-1))
        )
        qh = self._slots_infer(obs["queue"], ctx, self.queue_body)
        rh = self._slots_infer(obs["running"], ctx, self.run_body)
        logits = [_run_linear(self.advance, ctx)]
        logits += self._split(_run_linear(self.queue_score, qh), self.q_levels)
        logits += self._split(_run_linear(self.run_score, rh), self.r_levels)
        pooled = [ctx, _pool(qh, obs["queue"][..., 0]), _pool(rh, obs["running"][..., 0])]
        if self.has_resume:
            sh = self._slots_infer(obs["suspended"], ctx, self.susp_body)
            logits.append(_run_linear(self.susp_score, sh).reshape(batch, -1))
            pooled.append(_pool(sh, obs["suspended"][..., 0]))
        return th.cat(logits + pooled, dim=-1)

    @staticmethod
    def _slots_infer(x: th.Tensor, ctx: th.Tensor, body: nn.Module) -> th.Tensor:
        assert isinstance(body, nn.Sequential)
        c = ctx.unsqueeze(1).expand(-1, x.shape[1], -1)
        return _run_mlp(body, th.cat([x, c], dim=-1))


class _SplitLatent(nn.Module):
    """Actor latent: the logits as they are; critic latent: an MLP over the pooled embedding."""

    def __init__(self, n_actions: int, features_dim: int, hidden: int) -> None:
        super().__init__()
        self.n_actions = n_actions
        self.latent_dim_pi = n_actions
        self.latent_dim_vf = hidden
        self.critic = nn.Sequential(nn.Linear(features_dim - n_actions, hidden), nn.Tanh())

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return features[:, : self.n_actions]

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        out: th.Tensor = self.critic(features[:, self.n_actions :])
        return out


class JobScoringPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO policy whose logits are the :class:`JobScoringExtractor`'s per-slot scores.

    It needs the menu layout, as ``policy_kwargs={"features_extractor_kwargs": {"blocks": ...}}``:
    :func:`hpcgym.agents.make_agent` (and ``hpcgym train``) pass it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", JobScoringExtractor)
        kwargs.setdefault("share_features_extractor", True)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        extractor = self.features_extractor
        assert isinstance(extractor, JobScoringExtractor)
        assert isinstance(self.action_space, spaces.Discrete)
        if extractor.n_actions != int(self.action_space.n):
            raise ValueError(
                f"menu layout has {extractor.n_actions} entries, action space {self.action_space.n}"
            )
        self.mlp_extractor = _SplitLatent(extractor.n_actions, extractor.features_dim, 64)  # type: ignore[assignment]

    def infer(self, obs: dict[str, th.Tensor]) -> tuple[th.Tensor, th.Tensor]:
        """The logits and values of ``forward`` for observations already as tensors.

        The same ops as ``extract_features``, ``mlp_extractor``, ``value_net`` and
        ``action_net`` (the identity) in turn, through the extractor's
        :meth:`JobScoringExtractor.infer`: for rollouts, under ``torch.no_grad``.
        """
        extractor = self.features_extractor
        assert isinstance(extractor, JobScoringExtractor)
        latent = self.mlp_extractor
        assert isinstance(latent, _SplitLatent)
        ready = preprocess_obs(obs, self.observation_space, self.normalize_images)
        assert isinstance(ready, dict)
        features = extractor.infer(ready)
        critic = latent.critic[0]
        hidden = th.tanh(_run_linear(critic, features[:, latent.n_actions :]))
        values = _run_linear(self.value_net, hidden)
        return features[:, : latent.n_actions], values

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's scores are the logits
        extractor = self.features_extractor
        assert isinstance(extractor, JobScoringExtractor)
        if self.ortho_init:
            for head in extractor.score_heads():
                head.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )


class _AttentionBlock(nn.Module):
    """Pre-norm self-attention then a feed-forward layer, each with a residual connection."""

    def __init__(self, embed: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(embed)
        self.attn = nn.MultiheadAttention(embed, heads, dropout=0.0, batch_first=True)
        self.norm2 = nn.LayerNorm(embed)
        self.ff = nn.Sequential(nn.Linear(embed, 2 * embed), nn.Tanh(), nn.Linear(2 * embed, embed))

    def forward(self, h: th.Tensor, empty: th.Tensor) -> th.Tensor:
        x = self.norm1(h)
        a, _ = self.attn(x, x, x, key_padding_mask=empty, need_weights=False)
        h = h + a
        out: th.Tensor = h + self.ff(self.norm2(h))
        return out


class JobAttentionExtractor(JobScoringExtractor):
    """:class:`JobScoringExtractor` with self-attention over the slots before the scoring heads.

    Each queue, running (and suspended) slot is embedded as in the job-scoring extractor; the
    embeddings of all of them and a cluster token (the context embedding) pass through
    ``layers`` pre-norm multi-head self-attention blocks, in which empty slots are masked out as
    keys; the shared heads then score each slot from its attended embedding, so the logits keep
    the menu's order and follow their slot under any permutation. The advance logit and the
    value embedding read the attended cluster token and the means over occupied slots.

    Args:
        observation_space: The env's ``Dict`` observation space.
        blocks: The menu layout (:func:`menu_blocks`).
        hidden: Width of the shared slot networks.
        embed: Width of the embeddings (divisible by ``heads``).
        heads: Attention heads per layer.
        layers: Attention blocks.

    Raises:
        SpecError: ``blocks`` is missing, ``embed`` is not a multiple of ``heads`` or ``layers``
            or ``heads`` is not positive.
    """

    policy_label = "JobAttentionPolicy"

    def __init__(
        self,
        observation_space: spaces.Dict,
        blocks: Blocks | None = None,
        hidden: int = 64,
        embed: int = 32,
        heads: int = 4,
        layers: int = 2,
    ) -> None:
        if heads < 1 or layers < 1 or embed % heads:
            raise SpecError(
                f"JobAttentionPolicy needs heads >= 1, layers >= 1 and embed a multiple of heads; "
                f"got embed={embed}, heads={heads}, layers={layers}"
            )
        super().__init__(observation_space, blocks, hidden=hidden, embed=embed)
        self.attention = nn.ModuleList(_AttentionBlock(embed, heads) for _ in range(layers))
        self.out_norm = nn.LayerNorm(embed)

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """Logits in menu order, then ``[cluster token, pooled queue, pooled running(, ...)]``."""
        batch = obs["queue"].shape[0]
        ctx = self.context(th.cat([obs["cluster"].reshape(batch, -1), obs["time"]], dim=-1))
        parts = [
            self._slots(obs["queue"], ctx, self.queue_body),
            self._slots(obs["running"], ctx, self.run_body),
        ]
        present = [obs["queue"][..., 0], obs["running"][..., 0]]
        if self.has_resume:
            parts.append(self._slots(obs["suspended"], ctx, self.susp_body))
            present.append(obs["suspended"][..., 0])
        sizes = [p.shape[1] for p in parts]
        h = th.cat([ctx.unsqueeze(1), *parts], dim=1)
        occupied = th.cat([th.ones_like(present[0][:, :1]), *present], dim=1)
        empty = occupied <= 0.5  # the cluster token (column 0) is never empty
        for block in self.attention:
            h = block(h, empty)
        h = self.out_norm(h)
        token, qh, rh, *rest = th.split(h, [1, *sizes], dim=1)
        token = token.squeeze(1)
        logits = [self.advance(token)]
        logits += self._split(self.queue_score(qh), self.q_levels)
        logits += self._split(self.run_score(rh), self.r_levels)
        pooled = [token, _pool(qh, present[0]), _pool(rh, present[1])]
        if self.has_resume:
            logits.append(self.susp_score(rest[0]).reshape(batch, -1))
            pooled.append(_pool(rest[0], present[2]))
        return th.cat(logits + pooled, dim=-1)

    def infer(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """:meth:`forward` itself (no faster path for attention)."""
        return self.forward(obs)


class JobAttentionPolicy(JobScoringPolicy):
    """:class:`JobScoringPolicy` with the :class:`JobAttentionExtractor` (attention over slots).

    Its extractor's ``heads``, ``layers``, ``embed`` and ``hidden`` are set through
    ``policy_kwargs={"features_extractor_kwargs": {...}}`` (``hpcgym train --hp``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", JobAttentionExtractor)
        super().__init__(*args, **kwargs)
