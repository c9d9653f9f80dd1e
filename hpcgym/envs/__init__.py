"""The Gymnasium adapter: action menu and masks, observation encoders, rewards, registration.

Importing :mod:`hpcgym` registers the preset ids (``hpcgym/Rigid-v0``, ...); see docs/env.md.
"""

from hpcgym.envs.cluster_env import ACTIONS, ClusterEnv
from hpcgym.envs.config import EnvConfig
from hpcgym.envs.observations import OBSERVATIONS
from hpcgym.envs.registration import PRESETS, register_presets
from hpcgym.envs.rewards import REWARDS

register_presets()

__all__ = ["ACTIONS", "OBSERVATIONS", "PRESETS", "REWARDS", "ClusterEnv", "EnvConfig"]
