"""The policy-name rules of this layer: built-in names and ``<baseline>@env``.

A policy name is, in the order checked:

* a built-in policy (:data:`~hpcgym.policies.builtin.BUILTIN`: ``advance``, ``random``,
  ``first-fit``);
* a registered baseline name (``fcfs``, ``easy``, ``mebf``, ...): an engine scheduler, which the
  benchmark runs on the bare engine over the env's episode; it is not an env policy itself;
* such a name with :data:`ON_ENV` (``easy@env``): the same scheduler acting on the env through
  the adapter (:class:`~hpcgym.policies.adapted.BaselinePolicy`, strict).

Saved agents, score agents and seed sweeps are names of the layers above (paths on disk); the
benchmark's resolver (``hpcgym.bench.policy_names``) tries them after these.
"""

from __future__ import annotations

from hpcgym.baselines import names as baseline_names
from hpcgym.policies.adapted import BaselinePolicy
from hpcgym.policies.builtin import BUILTIN, builtin_policy
from hpcgym.policies.contract import EnvPolicy

ON_ENV = "@env"
"""Suffix of a baseline name that runs it through the env adapter (``easy@env``)."""


def base_kind(name: str) -> str | None:
    """``"builtin"``, ``"baseline"`` or ``"adapted"`` for a name of this layer, else ``None``."""
    if name in BUILTIN:
        return "builtin"
    known = baseline_names()
    if name in known:
        return "baseline"
    if name.endswith(ON_ENV) and name[: -len(ON_ENV)] in known:
        return "adapted"
    return None


def base_policy(name: str) -> EnvPolicy:
    """The env policy of a built-in or ``<baseline>@env`` name (:func:`base_kind`)."""
    if base_kind(name) == "adapted":
        return BaselinePolicy(name[: -len(ON_ENV)], strict=True)
    return builtin_policy(name)
