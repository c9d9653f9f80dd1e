"""Every registered hpcgym id: checkers, determinism, pickling and its spec as JSON."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env as gym_check_env

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.envs import PRESETS
from hpcgym.errors import SpecError

IDS = sorted(k for k in gym.registry if k.startswith("hpcgym/"))


def rollout(env: gym.Env[Any, Any], seed: int, steps: int) -> list[Any]:
    """Observations, rewards, flags and masks of a seeded random masked policy."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out: list[Any] = [obs, info["action_mask"].copy()]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(legal.size)])
        obs, r, term, trunc, info = env.step(a)
        out += [a, obs, r, term, trunc, info["action_mask"].copy()]
        if term or trunc:
            obs, info = env.reset()
            out.append(obs)
    return out


def equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return bool(a == b)


def test_every_preset_is_registered() -> None:
    assert set(PRESETS) <= set(IDS)
    assert {
        "hpcgym/Rigid-v0",
        "hpcgym/Malleable-v0",
        "hpcgym/Evolving-v0",
        "hpcgym/Shared-v0",
        "hpcgym/MultiCluster-v0",
    } <= set(IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_checker(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_checker(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, disable_env_checker=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Expected: the Dict entries are 2-D (slots x features) on purpose, for per-slot
        # policies; SB3's MultiInputPolicy flattens them. ``observation="flat"`` avoids it.
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        sb3_check_env(env.unwrapped, warn=True)
    flat = gym.make(env_id, disable_env_checker=True, observation="flat")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(flat.unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory(env_id: str) -> None:
    a = rollout(gym.make(env_id), seed=3, steps=300)
    b = rollout(gym.make(env_id), seed=3, steps=300)
    assert len(a) == len(b)
    assert all(equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("env_id", IDS)
def test_observations_stay_in_their_space(env_id: str) -> None:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=1)
    for _ in range(300):
        assert env.observation_space.contains(obs), env_id
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        if term or trunc:
            obs, info = env.reset()


@pytest.mark.parametrize("env_id", IDS)
def test_pickle_round_trip_mid_episode(env_id: str) -> None:
    env = gym.make(env_id)
    rng = np.random.default_rng(5)
    _obs, info = env.reset(seed=5)
    for _ in range(40):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        if term or trunc:
            _, info = env.reset()
    copy = pickle.loads(pickle.dumps(env))
    assert copy.spec == env.spec
    for _ in range(40):
        legal = np.flatnonzero(info["action_mask"])
        a = int(legal[rng.integers(legal.size)])
        got = copy.step(a)
        want = env.step(a)
        assert equal(got[0], want[0]) and got[1:4] == want[1:4]
        info = want[4]
        if want[2] or want[3]:
            break
    # The generator travels too: the next reset draws the same episode.
    assert equal(copy.reset()[0], env.reset()[0])


@pytest.mark.parametrize("env_id", IDS)
def test_spec_to_json_round_trip(env_id: str) -> None:
    spec = gym.spec(env_id)
    text = spec.to_json()
    back = EnvSpec.from_json(text)
    assert back == spec
    env = gym.make(back)
    obs, _info = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def test_episode_accessor_is_read_only() -> None:
    import dataclasses

    env = gym.make("hpcgym/Rigid-v0")
    assert env.unwrapped.episode is None
    env.reset(seed=4)
    ep = env.unwrapped.episode
    assert len(ep.jobs) == 256 and ep.workload_seed == 0
    assert ep.table.submit.shape == (256,)
    assert env.unwrapped.ledger.jobs[0].spec is ep.jobs[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.start = 0
    with pytest.raises(ValueError):
        ep.table.submit[0] = 0.0
    env.reset(options={"start": 17})
    assert env.unwrapped.episode.start == 17


def test_window_starts_restrict_where_episodes_begin() -> None:
    env = gym.make("hpcgym/Rigid-v0", window_starts=[0, 300, 1000])
    env.reset(seed=0)
    seen = {env.unwrapped.episode.start}
    for _ in range(30):
        env.reset()
        seen.add(env.unwrapped.episode.start)
    assert seen == {0, 300, 1000}
    env.reset(options={"start": 5})  # an explicit start overrides the list
    assert env.unwrapped.episode.start == 5
    spec = gym.spec("hpcgym/Rigid-v0")
    assert gym.make(spec, window_starts=(7,)).reset(seed=1)[1]["time"] >= 0.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window_starts": []},
        {"window_starts": [-1]},
        {"window_starts": [1.5]},
        {"window_starts": [0], "episode": "seeded"},
    ],
)
def test_window_starts_are_checked(kwargs: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        gym.make("hpcgym/Rigid-v0", **kwargs)


def test_window_starts_past_the_workload_are_refused_at_reset() -> None:
    env = gym.make("hpcgym/Rigid-v0", window_starts=[10**7])
    with pytest.raises(SpecError, match="window_starts"):
        env.reset(seed=0)


def test_decision_accessor_is_the_one_the_mask_comes_from() -> None:
    env = gym.make("hpcgym/Rigid-v0", n_jobs=32)
    _obs, info = env.reset(seed=1)
    d = env.unwrapped.decision
    assert d.mask is info["action_mask"]
    assert np.array_equal(env.unwrapped.action_masks(), d.mask)
    # Start the first queued job at its first legal level: the decision moves on with the step.
    legal = np.flatnonzero(d.mask[1:]) + 1
    _obs, _r, _term, _trunc, info = env.step(int(legal[0]))
    assert env.unwrapped.decision is not d
    assert env.unwrapped.decision.mask is info["action_mask"]
