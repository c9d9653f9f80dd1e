"""Behaviour cloning from an expert's env actions, before MaskablePPO fine-tuning.

Experts are of two kinds:

* **baselines**: any name of :func:`hpcgym.baselines.names` (``easy``, ``mebf``, ...), acting
  through the env adapter (:class:`hpcgym.policies.adapted.BaselinePolicy`): at each decision
  point the engine scheduler decides on a shadow of the env's engine and its commands become menu
  entries. The demonstrations are recorded in the env the agent trains in (its arguments are not
  changed), so the adapter runs leniently: a command the menu cannot express (a backfill outside
  the queue window, an MEBF shrink by 40%, a setting such as MEBF's "no walltime kills" that the
  env does not have) is counted in ``Demonstrations.inexpressible``; a start or resize at a size
  no level targets is demonstrated by the legal level of the same entry closest to that size
  (``Demonstrations.approximated``), any other such command is skipped, and the adapter goes on
  from the env's state;
* **menu policies** written over the mask: ``fcfs`` (start queue slot 0 at its first start level
  when legal, else advance; with ``queue_order="fcfs"`` this is FCFS) and ``first-fit`` (start
  the first queue slot whose first start level is legal, else advance: backfilling without a
  reservation). ``fcfs`` names the menu policy, not the baseline; the two give the same schedule;
* **rankers** for ``selection="reserve"`` (RLScheduler's mode): ``rank-<score>`` for each score of
  :data:`hpcgym.baselines.priority.SCORES` (``rank-sjf``, ``rank-f1``, ...) chooses the queued job
  that ranks first by that score (ties by submit time, then submission order), as the
  ``<score>-reserve`` baselines do, so its demonstrations are the baseline's own choices; the
  reserve baselines themselves cannot be cloned through the adapter (while their chosen job waits
  they start nothing, where reserve mode asks for a choice at every step).

Steps where *advance* is the only legal entry (possible with ``skip_trivial=False``) carry no
choice and are not recorded.

Cloning maximises the masked log-probability of the expert's actions under the policy
(``evaluate_actions`` of sb3-contrib's maskable policy), with Adam, in seeded
minibatches; ``hpcgym train --pretrain first-fit`` then fine-tunes with MaskablePPO.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from hpcgym.baselines.priority import REGISTERED_SCORES, SCORES
from hpcgym.errors import SpecError
from hpcgym.policies.adapted import BaselinePolicy
from hpcgym.policies.builtin import EXPERTS, Expert, make_expert
from hpcgym.policies.layout import menu_blocks

RANKERS = tuple(f"rank-{score}" for score in REGISTERED_SCORES)
"""Reserve-mode experts: choose the queued job that ranks first by a score."""


def make_ranker(name: str, env: gym.Env) -> Expert:
    """The reserve-mode expert ``rank-<score>`` acting in ``env`` (see the module docstring).

    Raises:
        SpecError: ``env`` is not in reserve mode, or the score is unknown.
    """
    score = name.removeprefix("rank-")
    if name not in RANKERS:
        raise SpecError(f"unknown ranking expert {name!r}; choose from {', '.join(RANKERS)}")
    u: Any = env.unwrapped
    if getattr(u, "reserve", None) is None:
        raise SpecError(
            f"{name} chooses jobs in reserve mode: train with "
            '--env-kwargs \'{"selection": "reserve"}\' (or a reserve-mode hyperparameter file)'
        )
    fn = SCORES[score]
    orders: dict[int, dict[int, int]] = {}  # submission order, per episode

    def ranker(mask: np.ndarray) -> int:
        d = u.decision
        jobs = u.ledger.jobs
        if id(u.episode) not in orders:
            orders.clear()
            orders[id(u.episode)] = {spec.id: i for i, spec in enumerate(u.episode.jobs)}
        order = orders[id(u.episode)]
        now = u.sim.now
        best: tuple[tuple[float, float, int], int] | None = None
        for slot, row in enumerate(d.queue_rows):
            spec = jobs[row].spec
            key = ((fn(spec, now, 0.0), spec.submit, order[spec.id]), slot)
            if best is None or key < best:
                best = key
        if best is None:
            return 0
        a = u.reserve.offset + best[1]
        return a if mask[a] else 0

    return ranker


def expert_names() -> list[str]:
    """Every expert :func:`demonstrate` accepts: the menu policies, then the baselines."""
    from hpcgym.baselines import names

    return [*EXPERTS, *RANKERS, *(n for n in names() if n not in EXPERTS)]


@dataclass(frozen=True)
class Demonstrations:
    """Observations (dict of stacked arrays), masks and expert actions.

    ``inexpressible``: for a baseline expert, the commands the menu could not express, by
    reason (``hpcgym.policies.adapted``); empty for menu policies and faithful baselines.
    ``approximated``: how many of them (starts and resizes at a size no level targets) were
    demonstrated by the legal level closest to the expert's size rather than skipped.
    """

    obs: dict[str, np.ndarray]
    masks: np.ndarray
    actions: np.ndarray
    inexpressible: dict[str, int] = field(default_factory=dict)
    approximated: int = 0


def demonstrate(
    expert: str, env_id: str, env_kwargs: dict[str, Any], seeds: list[int]
) -> Demonstrations:
    """Run ``expert`` (see :func:`expert_names`) on the episodes of ``seeds``; record its steps."""
    env = gym.make(env_id, **env_kwargs)
    adapter: BaselinePolicy | None = None
    if expert in EXPERTS:
        act = make_expert(expert, menu_blocks(env))
    elif expert in RANKERS:
        act = make_ranker(expert, env)
    else:
        from hpcgym.baselines import names

        if expert not in names():
            raise SpecError(f"unknown expert {expert!r}; choose from {', '.join(expert_names())}")
        adapter = BaselinePolicy(expert, strict=False, approximate=True)
        adapter.bind(env)
    obs_rows: list[dict[str, np.ndarray]] = []
    masks, actions = [], []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        if adapter is not None:
            adapter.reset(seed)
        done = False
        while not done:
            mask = np.asarray(info["action_mask"])
            a = adapter.act(obs, mask) if adapter is not None else act(mask)
            if mask[1:].any():
                obs_rows.append(obs)
                masks.append(mask.copy())
                actions.append(a)
            obs, _, terminated, truncated, info = env.step(a)
            done = terminated or truncated
    env.close()
    if not obs_rows:
        raise SpecError(f"{expert} made no choice in {len(seeds)} episode(s) of {env_id}")
    stacked = {k: np.stack([o[k] for o in obs_rows]) for k in obs_rows[0]}
    missed = dict(adapter.stats.inexpressible) if adapter is not None else {}
    near = adapter.stats.approximated if adapter is not None else 0
    actions_a = np.asarray(actions, dtype=np.int64)
    return Demonstrations(stacked, np.stack(masks), actions_a, missed, near)


def clone(
    model: Any,
    demos: Demonstrations,
    epochs: int = 10,
    batch_size: int = 256,
    seed: int = 0,
    learning_rate: float = 1e-3,
) -> list[float]:
    """Fit ``model.policy`` to the demonstrations (Adam, its own learning rate).

    Returns:
        The mean loss (negative log-likelihood of the expert's actions) of every epoch.
    """
    import torch as th
    from stable_baselines3.common.utils import obs_as_tensor

    policy = model.policy
    policy.set_training_mode(True)
    optimizer = th.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    n = len(demos.actions)
    losses = []
    for _ in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        for lo in range(0, n, batch_size):
            idx = order[lo : lo + batch_size]
            obs = obs_as_tensor({k: v[idx] for k, v in demos.obs.items()}, policy.device)
            actions = th.as_tensor(demos.actions[idx], device=policy.device)
            _, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=demos.masks[idx])
            loss = -log_prob.mean()
            optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / n)
    policy.set_training_mode(False)
    return losses
