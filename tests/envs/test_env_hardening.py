"""Regressions from the fuzzing round (issue 16): the env refuses what its constructor refuses,
and converts nothing silently."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.envs import ClusterEnv
from hpcgym.errors import CommandError, SpecError

TINY = {"workload": "test/rigid-tiny-v0", "queue_slots": 4, "running_slots": 4, "n_jobs": None}


@pytest.mark.parametrize(
    "options",
    [
        {"n_jobs": -5, "start": 0},
        {"n_jobs": 0},
        {"n_jobs": 2.5},
        {"n_jobs": True},
        {"n_jobs": "3"},
        {"start": -1},
        {"start": 1.5},
        {"start": "0"},
        {"workload_seed": -1},
        {"workload_seed": 0.5},
    ],
)
def test_reset_options_are_checked_like_the_constructor(options):
    env = ClusterEnv(**TINY)
    with pytest.raises(SpecError, match="reset option"):
        env.reset(seed=0, options=options)


def test_valid_reset_options_still_work():
    env = ClusterEnv(**TINY)
    env.reset(seed=0, options={"n_jobs": np.int64(2), "start": 1, "workload_seed": 0})
    assert len(env.unwrapped.episode.jobs) == 2 and env.unwrapped.episode.start == 1


@pytest.mark.parametrize("action", [0.7, "0", True, np.float64(0.0), None, [0], np.bool_(True)])
def test_actions_that_are_not_integers_are_refused(action):
    env = ClusterEnv(**TINY)
    env.reset(seed=0)
    before = env.unwrapped.sim.now, env.unwrapped._steps
    with pytest.raises(CommandError, match="action"):
        env.step(action)
    assert (env.unwrapped.sim.now, env.unwrapped._steps) == before


@pytest.mark.parametrize("action", [0, np.int64(0), np.array(0), np.array([0], dtype=np.int32)])
def test_integer_actions_of_any_integer_type_work(action):
    env = ClusterEnv(**TINY)
    env.reset(seed=0)
    env.step(action)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"reward": {"bsld": math.nan}},
        {"reward": {"bsld": math.inf}},
        {"reward": {"bsld": "1"}},
        {"reward": {"bsld": True}},
        {"invalid_penalty": math.nan},
        {"invalid_penalty": math.inf},
        {"invalid_penalty": "0.1"},
    ],
)
def test_non_finite_reward_settings_are_refused(kwargs):
    with pytest.raises(SpecError, match=r"reward|invalid_penalty"):
        ClusterEnv(**TINY, **kwargs)


@pytest.mark.parametrize("n_jobs", [0, -5, 2.5, True, "3"])
def test_the_constructor_refuses_the_same_n_jobs(n_jobs):
    with pytest.raises(SpecError, match="n_jobs"):
        ClusterEnv(**(TINY | {"n_jobs": n_jobs}))


def test_a_none_option_means_not_fixed():
    """Found by tests/envs/test_env_fuzz.py: start=None raised TypeError."""
    env = ClusterEnv(**TINY)
    env.reset(seed=0, options={"start": None, "n_jobs": None, "workload_seed": None})
    assert env.unwrapped.episode.start == 0
