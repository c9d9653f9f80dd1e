"""MEBF through the env with its own menu levels (``policy.env_overrides``).

Its starts (``req``, ``fit``), backfilled starts limited to the *extra* nodes of the head's
reservation (``ebf``), shrinks (by ``share_factor`` of the size: ``cut0.4``), Handoff and
Intensive expands (``fit``) and Spare expands (half the idle nodes: ``spare0.5``) are all menu
entries then, so every MEBF episode goes through the env exactly.
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from test_adapter import assert_same_schedule

import hpcgym  # noqa: F401
from hpcgym.baselines import make
from hpcgym.policies.adapted import NO_LEVEL, as_env_policy, mebf_levels, rollout

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
        "start_levels": ("req", "fit", "ebf"),
        "shrink_levels": (shrink,),
        "expand_levels": (expand,),
    }
    env = gym.make(MALLEABLE, n_jobs=4, **policy.env_overrides)
    labels = env.unwrapped.action_labels()
    assert len(labels) == 1 + 16 * 3 + 16 + 16
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
def test_a_start_on_the_extra_nodes_is_exact(name: str, seed: int) -> None:
    """These episodes have backfilled starts sized by the head's extra nodes (once reported)."""
    policy = assert_same_schedule(name, MALLEABLE, seed, **WIDE)
    assert policy.scheduler.stats["backfills"] > 0  # type: ignore[attr-defined]
    # Without the ``ebf`` level, the same episode has a start no level targets.
    levels = {**policy.env_overrides, "start_levels": ("req", "fit")}
    lenient = as_env_policy(name, strict=False)
    env = gym.make(MALLEABLE, **{**WIDE, **levels})
    rollout(lenient, env, seed=seed)
    assert set(lenient.stats.inexpressible) == {f"{NO_LEVEL} (start)"}
