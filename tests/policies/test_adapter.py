"""Baselines through the env adapter: the same schedule as on the bare engine, or reported.

Every exact case compares the per-job table (start, end, size held, reconfigurations, ...) of
the env episode's engine with ``scheduler.simulate`` on the same jobs and ``SimConfig``; the
adapter also checks both engines at every decision point (``check=True``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.baselines import make, names
from hpcgym.policies.adapted import (
    NO_LEVEL,
    NOT_IN_MENU,
    OUTSIDE_WINDOW,
    PLACEMENT,
    SETTING,
    BaselinePolicy,
    NotExpressible,
    as_env_policy,
    rollout,
)
from hpcgym.sim import SimConfig

EVOLVING = [n for n in names() if n.startswith("evolving-")]
MALLEABLE = "hpcgym/Malleable-v0"
SD_WIDE: dict[str, Any] = {"n_jobs": 300, "queue_slots": 128, "running_slots": 128}


def _through_env(
    name: str, env_id: str, seed: int, strict: bool = True, **kwargs: Any
) -> tuple[BaselinePolicy, Any]:
    policy = as_env_policy(name, strict=strict)
    env = gym.make(env_id, **{**policy.env_overrides, **kwargs})
    out = rollout(policy, env, seed=seed)
    assert not out.truncated
    return policy, env.unwrapped


def assert_same_schedule(name: str, env_id: str, seed: int, **kwargs: Any) -> BaselinePolicy:
    """The baseline through the env gives exactly its bare-engine schedule (and metrics)."""
    policy, env = _through_env(name, env_id, seed, **kwargs)
    sim = env.sim
    jobs = [job.spec for job in sim.jobs.values()]
    bare = make(name).simulate(
        sim.platform, jobs, SimConfig(kill_on_walltime=sim.config.kill_on_walltime)
    )
    got = sim.result()
    pd.testing.assert_frame_equal(got.jobs, bare.jobs)
    assert got.summary == bare.summary
    assert not policy.stats.inexpressible
    assert policy.stats.commands > 0
    return policy


@pytest.mark.parametrize("name", ["fcfs", "easy", "conservative"])
@pytest.mark.parametrize("seed", [0, 1])
def test_classics_match_on_rigid_lublin(name: str, seed: int) -> None:
    assert_same_schedule(name, "hpcgym/Rigid-v0", seed, n_jobs=300)


def test_sjf_matches_with_the_sjf_queue_order() -> None:
    assert_same_schedule("sjf", "hpcgym/Rigid-v0", 0, n_jobs=300, queue_order="sjf")
    with pytest.raises(NotExpressible, match=OUTSIDE_WINDOW):
        _through_env("sjf", "hpcgym/Rigid-v0", 0, n_jobs=300)


@pytest.mark.parametrize("name", ["easy", "conservative"])
def test_classics_match_on_sdsc_sp2(name: str) -> None:
    assert_same_schedule(
        name, "hpcgym/Rigid-v0", 2, n_jobs=300, workload="swf/sdsc-sp2-v0", platform=[128]
    )


def test_a_backfill_outside_the_queue_window_is_reported_then_fixed_by_a_wider_window() -> None:
    # Seed 3: EASY backfills job 7996, beyond the 32-slot queue window.
    with pytest.raises(NotExpressible, match=OUTSIDE_WINDOW) as err:
        _through_env("easy", "hpcgym/Rigid-v0", 3, n_jobs=300)
    assert err.value.command is not None and err.value.command.verb == "start"
    policy, env = _through_env("easy", "hpcgym/Rigid-v0", 3, strict=False, n_jobs=300)
    assert policy.stats.inexpressible[f"{OUTSIDE_WINDOW} (queue)"] > 0
    assert policy.stats.resyncs > 0 and env.sim.done
    assert_same_schedule("easy", "hpcgym/Rigid-v0", 3, n_jobs=300, queue_slots=300)


def test_mebf_on_a_rigid_trace_matches_through_the_env() -> None:
    # On rigid jobs MEBF is EASY: starts only, all at the requested size.
    assert_same_schedule("mebf", "hpcgym/Rigid-v0", 0, n_jobs=300)


def test_fcfs_matches_on_malleable_jobs() -> None:
    assert_same_schedule("fcfs", "hpcgym/Malleable-v0", 0, n_jobs=300)


@pytest.mark.parametrize("name", ["mebf", "mebf-spare", "mebf-shrink+"])
def test_mebf_resizes_are_not_among_the_preset_levels(name: str) -> None:
    # MEBF shrinks by 40% of a job's nodes, Spare expands by half the free nodes and backfills
    # at the size the extra nodes allow: none of these is a target of the preset's levels
    # (its own levels, in env_overrides, are in test_adapter_mebf.py).
    policy = as_env_policy(name)
    env = gym.make("hpcgym/Malleable-v0", n_jobs=300, kill_on_walltime=False)
    with pytest.raises(NotExpressible) as err:
        rollout(policy, env, seed=0)
    assert NO_LEVEL in err.value.reason or OUTSIDE_WINDOW in err.value.reason
    policy = as_env_policy(name, strict=False)
    out = rollout(policy, env, seed=0)
    assert not out.truncated and env.unwrapped.sim.done
    assert sum(policy.stats.inexpressible.values()) > 0
    assert policy.stats.commands > sum(policy.stats.inexpressible.values())


def test_mebf_setting_needs_no_walltime_kills() -> None:
    policy = as_env_policy("mebf")
    assert policy.env_overrides["kill_on_walltime"] is False
    env = gym.make("hpcgym/Malleable-v0", n_jobs=20)
    with pytest.raises(NotExpressible, match=SETTING):
        rollout(policy, env, seed=0)


@pytest.mark.parametrize("name", EVOLVING)
def test_evolving_list_scheduling_matches(name: str) -> None:
    # Its wake-ups need every decision point (skip_trivial=False, in env_overrides) and the
    # Klein cases submit every application at once: the windows hold them all.
    policy = as_env_policy(name)
    assert policy.env_overrides["skip_trivial"] is False
    for seed in (0, 1):
        p = assert_same_schedule(name, "hpcgym/Evolving-v0", seed, queue_slots=32, running_slots=32)
        assert p.stats.wakeups > 0


def test_evolving_outside_the_preset_windows_is_reported() -> None:
    with pytest.raises(NotExpressible, match=OUTSIDE_WINDOW):
        _through_env("evolving-2X", "hpcgym/Evolving-v0", 1)


@pytest.mark.parametrize("seed", [0, 1])
def test_koala_static_matches_on_the_multicluster(seed: int) -> None:
    assert_same_schedule("koala-static", "hpcgym/MultiCluster-v0", seed)


@pytest.mark.parametrize("seed", [0, 2])
def test_koala_fpsma_resizes_match_on_one_cluster(seed: int) -> None:
    # On one cluster placement is not a choice; FPSMA's grow and shrink targets are levels.
    policy = assert_same_schedule("koala-pra-fpsma", "hpcgym/Malleable-v0", seed, n_jobs=300)
    assert policy.stats.commands > 450  # 300 starts and the resizes


@pytest.mark.parametrize("name", ["koala-pra-egs", "koala-pwa-fpsma"])
def test_koala_placement_without_cluster_levels_is_reported(name: str) -> None:
    # With only first-fit start levels, KOALA's Worst-Fit cluster choice has no entry.
    with pytest.raises(NotExpressible, match=PLACEMENT):
        _through_env(name, "hpcgym/MultiCluster-v0", 0, start_levels=("req", "fit"))


@pytest.mark.parametrize("name", ["fcfs", "sd-policy"])
def test_shared_preset_matches_with_a_queue_window_holding_the_episode(name: str) -> None:
    # SD-Policy co-schedules only malleable mates, which this workload has not: here it is
    # EASY with its own estimates, and every start is a menu entry.
    assert_same_schedule(name, "hpcgym/Shared-v0", 0, n_jobs=300, queue_slots=300)


def test_dfrs_and_co_scheduling_sd_policy_are_reported() -> None:
    # DFRS needs its period (a tick) and penalised jobs: another world than the env's.
    with pytest.raises(NotExpressible, match=SETTING):
        _through_env("dfrs", "hpcgym/Malleable-v0", 0, n_jobs=100)
    # Without lend and reclaim entries, SD-Policy's CPU share changes have none.
    with pytest.raises(NotExpressible, match=r"not in the menu \(lend\)"):
        _through_env("sd-policy", MALLEABLE, 0, lend_levels=(), reclaim=False, **SD_WIDE)
    # Its guest goes on the mates' nodes: the lowest-numbered nodes with room are others.
    with pytest.raises(NotExpressible, match="co-schedules by 'first'"):
        _through_env("sd-policy", MALLEABLE, 0, coschedule_placement="first", **SD_WIDE)
    assert_same_schedule("sd-policy-static", MALLEABLE, 0, n_jobs=300, queue_slots=300)


@pytest.mark.parametrize(
    ("name", "seed"), [("sd-policy", 0), ("sd-policy", 1), ("sd-policy-dynavgsd", 1)]
)
def test_co_scheduling_sd_policy_matches_with_its_entries(name: str, seed: int) -> None:
    # Mates lend half their CPU, the guest starts on it (packed), shares come back at the end.
    policy = assert_same_schedule(name, MALLEABLE, seed, **SD_WIDE)
    assert len(policy.scheduler.coscheduled) >= 10  # type: ignore[attr-defined]
    assert policy.env_overrides["coschedule_placement"] == "packed"


def test_lenient_runs_finish_and_count_every_departure() -> None:
    # Without lend entries SD-Policy's mates never co-run: its bookkeeping stops fitting,
    # so the adapter resets it when it fails, and goes on.
    policy, env = _through_env(
        "sd-policy", MALLEABLE, 1, strict=False, n_jobs=100, lend_levels=(), reclaim=False
    )
    assert env.sim.done
    assert policy.stats.inexpressible[f"{NOT_IN_MENU} (lend)"] > 0
    # KOALA's cluster choices become the menu's first-fit starts with approximate=True.
    policy = as_env_policy("koala-pra-egs", strict=False, approximate=True)
    env = gym.make("hpcgym/MultiCluster-v0", **{**policy.env_overrides, "start_levels": ["req"]})
    rollout(policy, env, seed=1)
    assert env.unwrapped.sim.done  # type: ignore[attr-defined]
    assert policy.stats.approximated == sum(policy.stats.inexpressible.values()) > 0
