"""Every registered baseline on every preset: exact through the env, or reported, never different.

Slow (a few minutes): ``pytest -m slow tests/baselines/test_adapter_matrix.py``.
"""

from __future__ import annotations

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.baselines import make, names
from hpcgym.baselines.adapter import NotExpressible, as_env_policy, rollout
from hpcgym.envs.registration import PRESETS
from hpcgym.errors import HpcGymError
from hpcgym.sim import SimConfig

WIDE = {"queue_slots": 128, "running_slots": 128}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(PRESETS))
@pytest.mark.parametrize("name", names())
def test_exact_or_reported(name: str, env_id: str) -> None:
    policy = as_env_policy(name)
    kwargs = {**WIDE, **policy.env_overrides}
    if PRESETS[env_id].get("episode", "window") == "window":
        kwargs["n_jobs"] = 100
    env = gym.make(env_id, **kwargs)
    sim_env = env.unwrapped
    try:
        rollout(policy, env, seed=0)
    except NotExpressible:
        return
    except HpcGymError as err:  # the scheduler refuses the platform: so does the bare engine
        sim = sim_env.sim  # type: ignore[attr-defined]
        jobs = [j.spec for j in sim.jobs.values()]
        with pytest.raises(type(err)):
            make(name).simulate(sim.platform, jobs, sim.config)
        return
    sim = sim_env.sim  # type: ignore[attr-defined]
    jobs = [j.spec for j in sim.jobs.values()]
    bare = make(name).simulate(
        sim.platform, jobs, SimConfig(kill_on_walltime=sim.config.kill_on_walltime)
    )
    pd.testing.assert_frame_equal(sim.result().jobs, bare.jobs)
