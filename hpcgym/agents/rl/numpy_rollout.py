"""Drawing a rollout step's actions from the masked categorical in numpy.

The same distribution as :func:`~hpcgym.agents.rl.masked_categorical.sample_masked` (the softmax
of the logits over the legal entries), drawn by inverse transform from uniform numbers the caller
supplies (from torch's generator, so a seed fixes the run).
"""

from __future__ import annotations

import numpy as np


def sample_numpy(
    logits: np.ndarray, masks: np.ndarray, uniform: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Actions (B,) drawn with ``uniform`` (B,) numbers in [0, 1), and their log-probabilities.

    The softmax over the legal entries only: the masked entries' probability is exactly zero,
    as it is (rounded) in the masked categorical, so a masked entry is never drawn.

    Raises:
        ValueError: A row has no legal entry.
    """
    legal = masks if masks.dtype == np.bool_ else masks.astype(bool)
    legal = legal.reshape(logits.shape)
    z = np.where(legal, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)  # legal entries <= 0; a row without any: all NaN
    cdf = np.add.accumulate(np.exp(z), axis=1)  # np.cumsum, without its Python wrapper
    total = cdf[:, -1]
    if not total.min() > 0:  # False for NaN too
        raise ValueError("an observation has no legal action")
    actions = (cdf <= (uniform * total)[:, None]).sum(axis=1)
    # float edge: a target at the very top falls past the last entry; take the last legal one
    past = actions >= logits.shape[1]
    if past.any():
        last = logits.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
        actions = np.where(past, last, actions)
    return actions, z[np.arange(len(actions)), actions] - np.log(total)
