"""SB3 agents for hpcgym envs: :func:`make_agent`, ``hpcgym train``, saved agents.

See docs/train-by-hand.md and docs/bench.md. Importing this package does not import torch; the
names below load their modules when first used.
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
