"""Drawing a rollout step's actions from the masked categorical in numpy.

The same distribution as :func:`~hpcgym.agents.rl.masked_categorical.sample_masked` (the logits
normalised, masked with ``MASKED_LOGIT``, normalised again), drawn by inverse transform from
uniform numbers the caller supplies (from torch's generator, so a seed fixes the run).
"""

from __future__ import annotations

import numpy as np

from hpcgym.agents.rl.masked_categorical import MASKED_LOGIT


def _log_normalise(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=1, keepdims=True)
    return x - (top + np.log(np.exp(x - top).sum(axis=1, keepdims=True)))


def sample_numpy(
    logits: np.ndarray, masks: np.ndarray, uniform: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Actions (B,) drawn with ``uniform`` (B,) numbers in [0, 1), and their log-probabilities.

    A masked entry has probability exactly zero: it is never drawn.

    Raises:
        ValueError: A row has no legal entry.
    """
    legal = masks.reshape(logits.shape).astype(bool, copy=False)
    if not legal.any(axis=1).all():
        raise ValueError("an observation has no legal action")
    log_p = _log_normalise(np.where(legal, _log_normalise(logits), np.float32(MASKED_LOGIT)))
    cdf = np.cumsum(np.exp(log_p.astype(np.float64)), axis=1)
    target = uniform * cdf[:, -1]
    actions = (cdf <= target[:, None]).sum(axis=1)
    # float edge: a target at the very top falls past the last entry; take the last legal one
    past = actions >= logits.shape[1]
    if past.any():
        last = logits.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
        actions = np.where(past, last, actions)
    rows = np.arange(len(actions))
    return actions, log_p[rows, actions]
