"""Learned agents for hpcgym envs, in two sub-packages split by what they need.

- :mod:`hpcgym.agents.rl`: SB3 agents (torch): :func:`make_agent`, ``hpcgym train``, saved
  agents (:func:`load_agent`, :func:`save_agent`), the fitting of distilled planners;
- :mod:`hpcgym.agents.engine`: engine agents (score, order, planner, distilled), which play on
  the bare engine without torch, and ``hpcgym search-score``.

Shared here: the card base class (:mod:`~hpcgym.agents.card`) and the registry of every kind
(:mod:`~hpcgym.agents.cards`), seed sweeps (:mod:`~hpcgym.agents.members`), a saved agent's file
names (:mod:`~hpcgym.agents.files`), run records (:mod:`~hpcgym.agents.runrecord`) and the
commands (:mod:`~hpcgym.agents.cli`). The other modules here (``score``, ``train``, ``saved``,
...) are the older import paths of moved modules, kept as aliases (docs/design.md, "Agents by
what they need"). See docs/train-by-hand.md and docs/bench.md. Importing this package does not
import torch; the names below load their modules when first used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_agent", "make_agent", "save_agent"]


def __getattr__(name: str) -> Any:
    if name == "make_agent":
        from hpcgym.agents.rl.make import make_agent

        return make_agent
    if name in ("load_agent", "save_agent"):
        from hpcgym.agents.rl import saved

        return getattr(saved, name)
    raise AttributeError(f"module 'hpcgym.agents' has no attribute {name!r}")
