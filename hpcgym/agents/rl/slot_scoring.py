"""The job-scoring policy's logits and values, computed with less work (the same function).

:class:`~hpcgym.agents.rl.networks.JobScoringExtractor` concatenates the cluster summary ``ctx``
to every slot and runs the slot network on every slot, empty or not. Two identities give the same
numbers (up to float rounding) for much less arithmetic, which is where a training's gradient
updates spend their time:

* the first layer of a slot network, ``W [x, ctx] + b``, is ``W_x x + (W_ctx ctx + b)``: the
  second term is computed once per observation instead of once per slot, and the slot part reads
  the slot's own features only;
* an empty slot's features are all zero, so its embedding is the same function of ``ctx`` for
  every empty slot of an observation: :func:`scoring_forward` (``sparse=True``) runs the slot
  network on the occupied slots only and once per observation for the empty ones.

Pooling multiplies each embedding by the slot's first feature, which is zero for an empty slot:
the sums over occupied slots are the same sums. :class:`SlotIndex` works out which slots of a
rollout buffer are occupied once per update rather than once per minibatch and epoch, and
gathers a minibatch's occupied slots from the buffer directly. Gradients flow to the same
parameters through the same function. :class:`NumpyScorer` is the same computation in numpy
for rollouts, where a handful of observations make torch's per-call overhead cost more than
the arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch as th
import torch.nn.functional as F

from hpcgym.agents.rl.networks import JobScoringExtractor, JobScoringPolicy, _SplitLatent

SLOT_GROUPS = ("queue", "running", "suspended")
"""Observation keys of the slot groups, in the order their logits follow in the menu."""


def has_scoring_shortcut(policy: Any) -> bool:
    """Whether ``policy`` is the plain job-scoring policy, whose function this module computes."""
    return (
        isinstance(policy, JobScoringPolicy)
        and policy.share_features_extractor
        and type(policy.features_extractor) is JobScoringExtractor  # not a subclass's forward
        and isinstance(policy.mlp_extractor, _SplitLatent)
    )


@dataclass(frozen=True)
class _Group:
    """One slot group's layers: slot network (two layers), score layer and its level split."""

    key: str
    body: tuple[Any, Any]
    score: Any
    levels: list[int]


def _groups(extractor: JobScoringExtractor) -> list[_Group]:
    groups = [
        _Group("queue", (extractor.queue_body[0], extractor.queue_body[2]), extractor.queue_score,
               extractor.q_levels),
        _Group("running", (extractor.run_body[0], extractor.run_body[2]), extractor.run_score,
               extractor.r_levels),
    ]  # fmt: skip
    if extractor.has_resume:
        groups.append(
            _Group(
                "suspended",
                (extractor.susp_body[0], extractor.susp_body[2]),
                extractor.susp_score,
                [1],
            )
        )
    return groups


def _split(scores: th.Tensor, levels: list[int]) -> list[th.Tensor]:
    """Per-level blocks of ``scores`` (B, S, L), each (B, S * level), as the menu lays them out."""
    parts, at = [], 0
    for lv in levels:
        parts.append(scores[..., at : at + lv].reshape(scores.shape[0], -1))
        at += lv
    return parts


@dataclass(frozen=True)
class OccupiedSlots:
    """One slot group of a minibatch, reduced to its occupied slots (see :class:`SlotIndex`).

    ``x``: the occupied slots' features (K, width); ``owner``: each one's observation in the
    minibatch (K,); ``position``: its place in the minibatch's flattened slots (K,), of
    ``batch * slots``; ``total``: each observation's pooling weight, clamped at 1 (B, 1).
    """

    x: th.Tensor
    owner: th.Tensor
    position: th.Tensor
    total: th.Tensor
    batch: int
    slots: int


class SlotIndex:
    """A rollout buffer's observations with each slot group's occupancy worked out once.

    PPO's updates go over the same observations ``n_epochs`` times in minibatches: which slots
    are occupied, and each observation's pooling total, do not change, so they are computed
    once for the whole buffer; :meth:`take` gathers a minibatch's occupied slots straight from
    the buffer (no copy of its empty slots).
    """

    def __init__(self, obs: dict[str, th.Tensor], keys: list[str]) -> None:
        self.obs = obs
        self.keys = keys
        self.flat, self.occupied, self.total = {}, {}, {}
        for key in keys:
            x = obs[key]
            size, slots, width = x.shape
            self.flat[key] = x.reshape(size * slots, width)
            self.occupied[key] = x.ne(0).any(dim=2)
            self.total[key] = x[..., 0].sum(dim=1, keepdim=True).clamp(min=1.0)

    def take(self, index: th.Tensor) -> dict[str, Any]:
        """The minibatch of observations ``index``: slot groups as :class:`OccupiedSlots`."""
        out: dict[str, Any] = {
            k: v.index_select(0, index) for k, v in self.obs.items() if k not in self.keys
        }
        for key in self.keys:
            occupied = self.occupied[key].index_select(0, index)
            batch, slots = occupied.shape
            position = occupied.reshape(-1).nonzero().squeeze(1)
            owner = th.div(position, slots, rounding_mode="floor")
            rows = index[owner] * slots + (position - owner * slots)
            out[key] = OccupiedSlots(
                self.flat[key].index_select(0, rows),
                owner,
                position,
                self.total[key].index_select(0, index),
                batch,
                slots,
            )
        return out


def _group_forward(
    group: _Group, x: th.Tensor | OccupiedSlots, ctx: th.Tensor, sparse: bool
) -> tuple[th.Tensor | None, th.Tensor]:
    """Scores (B, S, L) (``None`` without levels) and the pooled embedding (B, E) of one group.

    ``x``: the slots' features (B, S, width), or their occupied part (:class:`SlotIndex`).
    """
    first, second = group.body
    width = x.x.shape[1] if isinstance(x, OccupiedSlots) else x.shape[2]
    w_x, w_ctx = first.weight[:, :width], first.weight[:, width:]
    shared = F.linear(ctx, w_ctx, first.bias)  # (B, H): the context's part of every slot's layer
    if isinstance(x, OccupiedSlots):
        occ = x
    elif not sparse:
        weight = x[..., 0]
        total = weight.sum(dim=1, keepdim=True).clamp(min=1.0)
        h = th.tanh(F.linear(th.tanh(F.linear(x, w_x) + shared.unsqueeze(1)), second.weight,
                             second.bias))  # fmt: skip
        pooled = (h * weight.unsqueeze(-1)).sum(dim=1) / total
        scores = F.linear(h, group.score.weight, group.score.bias) if group.levels else None
        return scores, pooled
    else:
        batch, slots, _ = x.shape
        flat = x.reshape(batch * slots, width)
        position = flat.ne(0).any(dim=1).nonzero().squeeze(1)
        occ = OccupiedSlots(
            flat[position],
            th.div(position, slots, rounding_mode="floor"),
            position,
            x[..., 0].sum(dim=1, keepdim=True).clamp(min=1.0),
            batch,
            slots,
        )
    batch, slots = occ.batch, occ.slots
    h_occ = th.tanh(
        F.linear(
            th.tanh(F.linear(occ.x, w_x) + shared.index_select(0, occ.owner)),
            second.weight,
            second.bias,
        )
    )  # index_select: its gradient is an index_add, not a sorted accumulating index_put
    pooled = th.zeros(batch, h_occ.shape[1], dtype=h_occ.dtype).index_add(
        0, occ.owner, h_occ * occ.x[:, :1]
    )
    pooled = pooled / occ.total
    if not group.levels:
        return None, pooled
    h_empty = th.tanh(F.linear(th.tanh(shared), second.weight, second.bias))
    s_empty = F.linear(h_empty, group.score.weight, group.score.bias)  # (B, L)
    s_occ = F.linear(h_occ, group.score.weight, group.score.bias)  # (K, L)
    every = s_empty.unsqueeze(1).expand(batch, slots, s_empty.shape[1]).reshape(batch * slots, -1)
    scores = every.index_copy(0, occ.position, s_occ).reshape(batch, slots, -1)
    return scores, pooled


def scoring_forward(
    policy: JobScoringPolicy, obs: dict[str, Any], sparse: bool = True
) -> tuple[th.Tensor, th.Tensor]:
    """The policy's action logits (B, n) and values (B, 1), as its ``forward`` computes them.

    Up to float rounding: the sums run in another order (see the module docstring). With
    gradients, for the updates; ``sparse`` skips the empty slots' arithmetic. ``obs``: tensors,
    or a minibatch of :meth:`SlotIndex.take` (sparse).
    """
    extractor = policy.features_extractor
    assert isinstance(extractor, JobScoringExtractor)
    batch = obs["time"].shape[0]
    context: Any = extractor.context[0]
    ctx = th.tanh(
        F.linear(
            th.cat([obs["cluster"].reshape(batch, -1), obs["time"]], dim=-1),
            context.weight,
            context.bias,
        )
    )
    logits = [F.linear(ctx, extractor.advance.weight, extractor.advance.bias)]
    pooled = [ctx]
    for group in _groups(extractor):
        scores, pool = _group_forward(group, obs[group.key], ctx, sparse)
        if scores is not None:
            logits += _split(scores, group.levels)
        pooled.append(pool)
    latent = policy.mlp_extractor
    assert isinstance(latent, _SplitLatent)
    critic: Any = latent.critic[0]
    hidden = th.tanh(F.linear(th.cat(pooled, dim=-1), critic.weight, critic.bias))
    value_net: Any = policy.value_net
    values = F.linear(hidden, value_net.weight, value_net.bias)
    return th.cat(logits, dim=-1), values


def _np(param: th.Tensor) -> np.ndarray:
    """A parameter as a contiguous numpy array of its own (a snapshot)."""
    return np.ascontiguousarray(param.detach().numpy().copy())


def _menu_order(sizes: list[tuple[int, list[int]]]) -> np.ndarray | None:
    """Where each menu entry sits in ``[advance, group scores (S, L) flattened, ...]``.

    ``sizes``: each scoring group's slots and level split. ``None`` when it is the identity.
    """
    order, base = [0], 1
    for slots, levels in sizes:
        width, at = sum(levels), 0
        for lv in levels:
            order += [base + s * width + at + c for s in range(slots) for c in range(lv)]
            at += lv
        base += slots * width
    perm = np.asarray(order, dtype=np.intp)
    return None if bool((perm == np.arange(len(perm))).all()) else perm


class NumpyScorer:
    """:func:`scoring_forward` (dense) in numpy, on a packed copy of the policy's parameters.

    A snapshot: build one per rollout (the parameters do not change during one), after the
    updates. Packed so that a call makes few numpy calls (a rollout step's batch is a handful of
    observations, where the calls' overhead costs more than the arithmetic): the advance logit
    and every slot group's context share of its first layer are one matmul of the context, and
    the score blocks are put in menu order by one ``take``.
    """

    def __init__(self, policy: JobScoringPolicy) -> None:
        extractor = policy.features_extractor
        assert isinstance(extractor, JobScoringExtractor)
        latent = policy.mlp_extractor
        assert isinstance(latent, _SplitLatent)
        context: Any = extractor.context[0]
        self.context = (_np(context.weight).T.copy(), _np(context.bias))
        heads_w = [_np(extractor.advance.weight).T]
        heads_b = [_np(extractor.advance.bias)]
        self.groups = []
        sizes = []
        at = 1
        for group in _groups(extractor):
            first, second = group.body
            width = first.weight.shape[1] - context.weight.shape[0]
            weight = _np(first.weight)
            heads_w.append(weight[:, width:].T)
            heads_b.append(_np(first.bias))
            hidden = weight.shape[0]
            score = (
                (_np(group.score.weight).T.copy(), _np(group.score.bias)) if group.levels else None
            )
            self.groups.append(
                (
                    group.key,
                    weight[:, :width].T.copy(),
                    slice(at, at + hidden),
                    _np(second.weight).T.copy(),
                    _np(second.bias),
                    score,
                )
            )
            at += hidden
            if group.levels:
                slots = policy.observation_space[group.key].shape[0]  # type: ignore[index]
                sizes.append((int(slots), list(group.levels)))
        self.heads = (np.concatenate(heads_w, axis=1), np.concatenate(heads_b))
        self.order = _menu_order(sizes)
        critic: Any = latent.critic[0]
        self.critic = (_np(critic.weight).T.copy(), _np(critic.bias))
        value_net: Any = policy.value_net
        self.value = (_np(value_net.weight).T.copy(), _np(value_net.bias))

    def __call__(self, obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Logits (B, n) and values (B,) of a batch of observations (float32 arrays)."""
        batch = obs["queue"].shape[0]
        w, b = self.context
        ctx = np.concatenate([obs["cluster"].reshape(batch, -1), obs["time"]], 1) @ w
        ctx += b
        np.tanh(ctx, out=ctx)
        heads = ctx @ self.heads[0]
        heads += self.heads[1]
        parts = [heads[:, :1]]
        pooled = [ctx]
        for key, w_x, shared, w2, b2, score in self.groups:
            x = obs[key]
            h = x @ w_x  # fresh arrays, so the adds and tanh work in place (fewer allocations)
            h += heads[:, None, shared]
            h = np.tanh(h, out=h) @ w2
            h += b2
            np.tanh(h, out=h)
            weight = x[..., :1].transpose(0, 2, 1)  # (B, 1, S)
            pooled.append((weight @ h)[:, 0] / np.maximum(weight.sum(axis=2), 1.0))
            if score is not None:
                scores = h @ score[0]
                scores += score[1]
                parts.append(scores.reshape(batch, -1))
        logits = np.concatenate(parts, 1)
        if self.order is not None:
            logits = logits.take(self.order, axis=1)
        hidden = np.concatenate(pooled, 1) @ self.critic[0]
        hidden += self.critic[1]
        values = np.tanh(hidden, out=hidden) @ self.value[0]
        values += self.value[1]
        return logits, values.reshape(batch)
