"""The masked categorical distribution of MaskablePPO as plain tensor ops (no distribution objects).

Each function is op for op what sb3-contrib's ``MaskableCategorical`` computes (``logits`` after
``apply_masking``, ``sample``, ``log_prob``, ``entropy``), so results and gradients are the same
bit for bit.
"""

from __future__ import annotations

import torch as th
import torch.nn.functional as F

MASKED_LOGIT = -1e8
"""The logit of a masked entry (sb3-contrib's ``HUGE_NEG``)."""


def masked_log_probs(logits: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """Normalised log-probabilities of the masked categorical over ``logits`` (B, n).

    The same ops in the same order as ``MaskableCategorical(logits=...)`` followed by
    ``apply_masking(masks)``: normalise, mask with :data:`MASKED_LOGIT`, normalise again.
    """
    first = logits - logits.logsumexp(dim=-1, keepdim=True)
    masked = th.where(masks, first, MASKED_LOGIT)  # a float32 scalar, exactly -1e8
    return masked - masked.logsumexp(dim=-1, keepdim=True)


def sample_masked(logits: th.Tensor, masks: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """Actions (B,) drawn from the masked categorical, and their log-probabilities.

    One ``torch.multinomial`` draw per row of the softmax, as ``Categorical.sample``.
    """
    log_p = masked_log_probs(logits, masks)
    probs = th.softmax(log_p, dim=-1)
    actions = th.multinomial(probs, 1, True).T.reshape(-1)
    return actions, log_p.gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def log_prob_of(log_p: th.Tensor, actions: th.Tensor) -> th.Tensor:
    """``Categorical.log_prob``: the log-probability (B,) of each row's action (B,)."""
    return log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)


def masked_entropy(log_p: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """``MaskableCategorical.entropy`` of the masked log-probabilities ``log_p`` (B, n)."""
    p_log_p = log_p * F.softmax(log_p, dim=-1)
    return -th.where(masks, p_log_p, 0.0).sum(-1)
