"""Policies acting on hpcgym envs, under one contract (:class:`EnvPolicy`).

This layer sits between the envs and baselines below and the agents and benchmark above:

* :mod:`~hpcgym.policies.contract`: :class:`EnvPolicy` (``bind``, ``reset``, ``act``);
* :mod:`~hpcgym.policies.builtin`: ``advance``, ``random``, ``first-fit`` and the menu experts;
* :mod:`~hpcgym.policies.adapted`: an engine baseline acting through the env's menu
  (:class:`BaselinePolicy`, :func:`as_env_policy`, :func:`rollout`), over the recording engine
  of :mod:`~hpcgym.policies.shadow`;
* :mod:`~hpcgym.policies.names`: the name rules (built-in names, ``<baseline>@env``);
* :mod:`~hpcgym.policies.layout`: the menu layout as policies read it.

Saved SB3 agents act through the same contract (``hpcgym.agents.rl.env_policy.AgentPolicy``).
"""

from __future__ import annotations

from hpcgym.policies.adapted import (
    AdapterDivergence,
    AdapterStats,
    BaselinePolicy,
    NotExpressible,
    Rollout,
    as_env_policy,
    rollout,
)
from hpcgym.policies.builtin import BUILTIN, AdvancePolicy, FirstFitPolicy, RandomPolicy
from hpcgym.policies.contract import EPISODE_KEYS, EnvPolicy
from hpcgym.policies.names import ON_ENV, base_kind, base_policy

__all__ = [
    "BUILTIN",
    "EPISODE_KEYS",
    "ON_ENV",
    "AdapterDivergence",
    "AdapterStats",
    "AdvancePolicy",
    "BaselinePolicy",
    "EnvPolicy",
    "FirstFitPolicy",
    "NotExpressible",
    "RandomPolicy",
    "Rollout",
    "as_env_policy",
    "base_kind",
    "base_policy",
    "rollout",
]
