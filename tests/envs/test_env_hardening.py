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


# ------------------------------------------------------------------ Hardening III (issue 39, L6)
@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"workload_options": "x"}, r"workload_options must be a mapping"),
        ({"workload_options": [("n_jobs", 3)]}, r"workload_options must be a mapping"),
        ({"workload": 5}, r"workload must be a set name or the path of a workload file"),
        ({"platform": []}, r"platform must be a non-empty list of node counts"),
        ({"platform": 5}, r"platform must be a non-empty list of node counts"),
        ({"platform": "ab"}, r"platform must be a non-empty list of node counts"),
        ({"platform": [2.5]}, r"platform must be a non-empty list of node counts"),
        ({"platform": [4, 0]}, r"platform must be a non-empty list of node counts"),
        ({"cores": 2.5}, r"cores must be an integer >= 1"),
        ({"queue_slots": "3"}, r"queue_slots must be an integer >= 1"),
        ({"suspend": True, "suspended_slots": 1.5}, r"suspended_slots must be an integer >= 0"),
        ({"workload_seed": "a"}, r"workload_seed must be an integer >= 0"),
        ({"n_seeds": 0}, r"n_seeds must be an integer >= 1"),
        ({"start_levels": "req"}, r"start_levels must be a list"),
        ({"coschedule_levels": 0.5}, r"coschedule_levels must be a list"),
        ({"window_starts": 5}, r"window_starts must be a list"),
        ({"reward": 5}, r"reward must be a reward name or a mapping"),
        ({"skip_trivial": "no"}, r"skip_trivial must be True or False"),
        ({"grant": "yes"}, r"grant must be True or False"),
    ],
)
def test_arguments_of_the_wrong_type_say_what_is_expected(kwargs, expected):
    with pytest.raises(SpecError, match=expected) as info:
        ClusterEnv(**(TINY | kwargs))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("nodes", [2.5, "4", True, None, [4], 0])
def test_a_platform_of_a_non_integer_node_count_is_refused(nodes):
    from hpcgym.sim import Platform

    with pytest.raises(SpecError, match=r"needs a whole number of nodes >= 1|at least one node"):
        Platform.single(nodes)


def test_a_platform_of_a_non_integer_core_count_is_refused():
    from hpcgym.sim import Platform

    with pytest.raises(SpecError, match=r"cores"):
        Platform.single(4, cores=1.5)
    assert Platform.single(np.int64(4)).total_nodes == 4


@pytest.mark.parametrize("where", ["config", "reset"])
def test_more_jobs_than_the_workload_holds_are_refused_not_cut(where):
    env = ClusterEnv(**(TINY | {"n_jobs": 10**9} if where == "config" else TINY))
    options = {"n_jobs": 10**9} if where == "reset" else None
    with pytest.raises(SpecError, match=r"n_jobs=1000000000 .*holds \d+ jobs.*n_jobs=None"):
        env.reset(seed=0, options=options)
