"""Fuzzing the env's reset options and actions with odd Python and numpy values (issue 16).

Contract: ``reset`` gives the episode the options ask for or raises ``SpecError``; ``step``
takes any integer (numpy ones and one-element integer arrays too; a forbidden or out-of-range
index is a penalized no-op) and refuses anything else with ``CommandError``, changing nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.envs import ClusterEnv
from hpcgym.errors import CommandError, SpecError

# The default run is derandomized (the same examples every time); the long one explores.
FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
    derandomize=True,
)
LONG = settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
TINY = {"workload": "test/malleable-tiny-v0", "queue_slots": 4, "running_slots": 4}

odd = st.sampled_from(
    [None, True, np.bool_(False), "1", 0.5, math.nan, math.inf, -3, 2**70, np.float64(1.0), [1]]
)
integers = st.one_of(
    st.integers(-3, 40), st.integers(0, 40).map(np.int64), st.integers(0, 40).map(np.uint8)
)
actions = st.one_of(integers, integers.map(lambda a: np.array([a])), integers.map(np.array), odd)
options = st.fixed_dictionaries(
    {},
    optional={
        "n_jobs": st.one_of(st.integers(-2, 8), odd),
        "start": st.one_of(st.integers(-2, 8), odd),
        "workload_seed": st.one_of(st.integers(-1, 3), odd),
    },
)


def _is_integer(a: object) -> bool:
    if isinstance(a, np.ndarray):
        return a.size == 1 and a.dtype.kind in "iu"
    return isinstance(a, int | np.integer) and not isinstance(a, bool | np.bool_)


def play(opts: dict, acts: list, limit) -> None:
    env = ClusterEnv(**TINY)
    with limit(20):
        try:
            env.reset(seed=0, options=opts)
        except SpecError:
            return
        ep = env.episode
        assert ep is not None
        if isinstance(opts.get("n_jobs"), int) and not isinstance(opts["n_jobs"], bool):
            assert len(ep.jobs) == min(opts["n_jobs"], len(ep.jobs) + ep.start)
        for a in acts:
            before = (env.sim.now, env._steps, env._invalid)
            if not _is_integer(a):
                with pytest.raises(CommandError):
                    env.step(a)
                assert (env.sim.now, env._steps, env._invalid) == before
                continue
            _, reward, terminated, truncated, _ = env.step(a)
            assert math.isfinite(reward)
            if terminated or truncated:
                return


@FAST
@given(opts=options, acts=st.lists(actions, max_size=30))
def test_reset_options_and_actions_of_any_type(opts, acts, limit):
    play(opts, acts, limit)


@pytest.mark.slow
@LONG
@given(opts=options, acts=st.lists(actions, max_size=120))
def test_reset_options_and_actions_of_any_type_long(opts, acts, limit):
    play(opts, acts, limit)
