"""MEBF through the env with its own menu levels (``policy.env_overrides``).

Its shrinks (by ``share_factor`` of the size: ``cut0.4``), Handoff and Intensive expands (``fit``)
and Spare expands (half the idle nodes: ``spare0.5``) are menu entries then. Its backfilled
starts limited to the *extra* nodes of the head's reservation are not (the reservation needs the
running jobs' estimated ends, not a size of the env state): an episode where MEBF does none is
exact, the others are reported, always at such a start.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from test_adapter import _through_env, assert_same_schedule

import hpcgym  # noqa: F401
from hpcgym.baselines import make
from hpcgym.baselines.adapter import NO_LEVEL, NotExpressible, as_env_policy, mebf_levels

MALLEABLE = "hpcgym/Malleable-v0"
WIDE = {"n_jobs": 300, "queue_slots": 300, "running_slots": 128}
"""Backfilling reaches deep into the queue: windows that hold the episode."""


@pytest.mark.parametrize(
    ("name", "shrink", "expand"),
    [
        ("mebf", "cut0.4", "fit"),
        ("mebf-intensive", "cut0.4", "fit"),
        ("mebf-spare", "cut0.4", "spare0.5"),
        ("mebf-shrink+", "cut0.4", "fit"),
        ("mebf-expand+", "cut0.4", "fit"),
    ],
)
def test_env_overrides_carry_mebf_levels(name: str, shrink: str, expand: str) -> None:
    policy = as_env_policy(name)
    assert policy.env_overrides == {
        "kill_on_walltime": False,
        "start_levels": ("req", "fit"),
        "shrink_levels": (shrink,),
        "expand_levels": (expand,),
    }
    env = gym.make(MALLEABLE, n_jobs=4, **policy.env_overrides)
    labels = env.unwrapped.action_labels()
    assert len(labels) == 1 + 16 * 2 + 16 + 16
    assert labels[-17:-15] == ["shrink[15]@" + shrink, "expand[0]@" + expand]


def test_levels_follow_the_parameters() -> None:
    levels = mebf_levels(make("mebf", policy="spare", share_factor=0.25, spare_ratio=0.75))
    assert levels["shrink_levels"] == ("cut0.25",) and levels["expand_levels"] == ("spare0.75",)


@pytest.mark.parametrize(
    ("name", "seed"),
    [
        ("mebf", 4),
        ("mebf-spare", 4),
        ("mebf-shrink+", 4),
        ("mebf-expand+", 4),
        ("mebf-spare", 8),
        ("mebf-shrink+", 3),  # 20 shrinks
    ],
)
def test_mebf_matches_on_malleable_jobs(name: str, seed: int) -> None:
    policy = assert_same_schedule(name, MALLEABLE, seed, **WIDE)
    stats = policy.scheduler.stats  # type: ignore[attr-defined]
    assert stats["shrinks"] + stats["expands"] > 0 and stats["starts"] > 0


@pytest.mark.parametrize(("name", "seed"), [("mebf-intensive", 4), ("mebf", 0), ("mebf-spare", 1)])
def test_a_start_on_the_extra_nodes_is_reported(name: str, seed: int) -> None:
    with pytest.raises(NotExpressible) as err:
        _through_env(name, MALLEABLE, seed, **WIDE)
    assert err.value.reason == f"{NO_LEVEL} (start)"
    assert err.value.command is not None and err.value.command.verb == "start"
    # Lenient: the only commands without an entry are such starts (resizes always have one).
    policy, env = _through_env(name, MALLEABLE, seed, strict=False, **WIDE)
    assert set(policy.stats.inexpressible) == {f"{NO_LEVEL} (start)"} and env.sim.done
