"""The Gymnasium adapter: action menu and masks, observation encoders, rewards, registration.

Importing :mod:`hpcgym` registers the preset ids (``hpcgym/Rigid-v0``, ...); see docs/env.md.
The names below are loaded on first use, so registering the ids does not load the workload
sets (pandas, the bundled traces) or the env itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hpcgym.envs.registration import register_presets

if TYPE_CHECKING:
    from hpcgym.envs.cluster_env import ACTIONS, ClusterEnv
    from hpcgym.envs.config import EnvConfig
    from hpcgym.envs.observations import OBSERVATIONS
    from hpcgym.envs.registration import PRESETS
    from hpcgym.envs.rewards import REWARDS

register_presets()

_LAZY = {
    "ACTIONS": "hpcgym.envs.cluster_env",
    "ClusterEnv": "hpcgym.envs.cluster_env",
    "EnvConfig": "hpcgym.envs.config",
    "OBSERVATIONS": "hpcgym.envs.observations",
    "PRESETS": "hpcgym.envs.registration",
    "REWARDS": "hpcgym.envs.rewards",
}

__all__ = ["ACTIONS", "OBSERVATIONS", "PRESETS", "REWARDS", "ClusterEnv", "EnvConfig"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hpcgym.envs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
