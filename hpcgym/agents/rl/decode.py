"""How a trained policy's distribution becomes one action, reproducibly.

``greedy`` (SB3's ``deterministic=True``) takes the single most likely legal entry. On hpcgym's
menu that is biased towards *advance*: advance is one entry, while the probability of starting
a job is spread over every queue slot. A policy that starts some job with probability 0.63 and
advances with 0.37, each of eight starts at 0.08, is played greedily as "always advance"; the
sampled policy PPO trained starts jobs (docs/results.md: rigid seeds whose training episodes
score 40-55 while their greedy play leaves every job waiting).

``kind`` decodes in two steps: first the *kind* of command with the most probability (a menu
block: advance, start, shrink, expand, ...; the probabilities of its legal entries summed),
then that block's most likely legal entry. It is the mode of the policy's choice of kind
followed by the mode within the kind, and it equals greedy whenever one block holds all the
legal entries. Ties go to the block that comes first in the menu, then to the first entry.

``sample`` draws the action from the masked distribution, as PPO does in training and as
RLScheduler's evaluation script plays its agent (``docs/rlscheduler.md``, "The RL column"). The
draws come from a generator seeded with the episode's reset seed (:func:`sample_rng`), so a
sampled episode is as reproducible as a greedy one: the same agent, episode and seed give the
same actions.

The decoding is part of an agent: ``hpcgym train --hp decode=kind`` validates with it (so the
validation-chosen ``best`` is chosen under it) and writes it on the agent card, and every
player of the agent (bench, evaluate, validation) reads it from there. To play a trained agent
another way, copy its files and change the card's ``"decode"``: the weights' hash stays, and the
bench's configuration hash includes any decoding but greedy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcgym.policies.layout import Blocks

DECODINGS = ("greedy", "kind", "sample")
"""The decoding rules, the first the default."""


def check_decode(name: object) -> str:
    """``name`` if it is a decoding rule, else a clear error."""
    if name not in DECODINGS:
        raise ValueError(f"decode must be one of {', '.join(DECODINGS)}, got {name!r}")
    return str(name)


def kind_first(probs: np.ndarray, mask: np.ndarray, blocks: Blocks) -> int:
    """The ``kind`` decoding of one distribution over the menu.

    Args:
        probs: The policy's probability of every menu entry (masked entries may hold anything).
        mask: The legal entries (at least one).
        blocks: The menu layout, block name -> ``(offset, slots, levels)``; blocks cover the
            menu without overlap.
    """
    p = np.where(np.asarray(mask, dtype=bool), np.asarray(probs, dtype=float), -1.0)
    best_mass, best_entry = -1.0, -1
    for offset, slots, levels in sorted(blocks.values()):
        part = p[offset : offset + slots * levels]
        legal = part >= 0.0
        if not legal.any():
            continue
        mass = float(part[legal].sum())
        if mass > best_mass:  # strictly: a tie keeps the earlier block
            best_mass, best_entry = mass, offset + int(np.argmax(part))
    if best_entry < 0:
        raise ValueError("no legal entry in the mask")
    return best_entry


def policy_probs(model: Any, obs: Any, mask: np.ndarray) -> np.ndarray:
    """The masked action probabilities of a MaskablePPO ``model`` for one observation."""
    import torch

    policy = model.policy
    policy.set_training_mode(False)
    obs_tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        dist = policy.get_distribution(obs_tensor, action_masks=np.asarray(mask, dtype=bool))
        probs = dist.distribution.probs
    return np.asarray(probs.cpu().numpy()).reshape(-1)


def sample_rng(seed: int) -> np.random.Generator:
    """The generator ``sample`` decoding draws from in the episode whose reset seed is ``seed``.

    Its own stream (the seed with a fixed tag), not the env's: the jobs an episode draws and the
    actions drawn in it are independent.
    """
    return np.random.default_rng([int(seed), 0xDEC0DE])


def sampled(probs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """One legal entry drawn from ``probs`` restricted to ``mask`` (renormalised)."""
    p = np.where(np.asarray(mask, dtype=bool), np.asarray(probs, dtype=float), 0.0)
    total = p.sum()
    if not total > 0.0:
        raise ValueError("no legal entry with probability in the mask")
    return int(rng.choice(len(p), p=p / total))


def agent_action(
    model: Any,
    obs: Any,
    mask: np.ndarray | None,
    decode: str,
    blocks: Blocks | None,
    rng: np.random.Generator | None = None,
) -> int:
    """One action of ``model`` under the ``decode`` rule.

    ``mask`` is None for a model that takes no masks (greedy only: ``kind`` and ``sample`` need
    the masked distribution of MaskablePPO). ``blocks`` is needed for ``kind``, ``rng`` (seeded
    by the caller with the episode's seed) for ``sample``.
    """
    if check_decode(decode) == "greedy":
        if mask is None:
            action, _ = model.predict(obs, deterministic=True)
        else:
            action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(np.asarray(action).reshape(-1)[0])
    if mask is None:
        raise ValueError(f"{decode} decoding needs the action mask (a MaskablePPO agent)")
    if decode == "sample":
        if rng is None:
            raise ValueError("sample decoding needs a generator seeded with the episode's seed")
        return sampled(policy_probs(model, obs, mask), mask, rng)
    if blocks is None:
        raise ValueError("kind decoding needs the env's menu blocks")
    return kind_first(policy_probs(model, obs, mask), mask, blocks)
