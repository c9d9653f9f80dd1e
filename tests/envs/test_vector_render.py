"""Vectorized use (Gymnasium sync/async, SB3 SubprocVecEnv) and rendering."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gymnasium_vector(mode: str) -> None:
    envs = gym.make_vec("hpcgym/Rigid-v0", num_envs=2, vectorization_mode=mode, n_jobs=32)
    try:
        obs, infos = envs.reset(seed=0)
        assert obs["queue"].shape == (2, 32, 15)
        rng = np.random.default_rng(0)
        for _ in range(50):
            masks = infos["action_mask"]
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, _term, _trunc, infos = envs.step(actions)
            assert rewards.shape == (2,)
    finally:
        envs.close()


def test_sb3_subproc_vec_env() -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # Workers start fresh interpreters (forkserver): "module:id" makes them import hpcgym.
    venv = make_vec_env(
        "hpcgym:hpcgym/Rigid-v0",
        n_envs=2,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={"n_jobs": 32},
        vec_env_kwargs={"start_method": "fork"},
    )
    try:
        venv.seed(0)
        venv.reset()
        for _ in range(30):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([np.flatnonzero(m)[-1] for m in masks])
            venv.step(actions)
    finally:
        venv.close()


def test_render_ansi(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/shared-tiny-v0", render_mode="ansi", skip_trivial=False)
    env.reset(seed=0)
    env.step(env.action_labels().index("coschedule[0]@0.5"))
    text = env.render()
    assert isinstance(text, str)
    assert "t=0s" in text and "queued=1" in text and "|00..|" in text and "job 2" in text
    # every symbol is explained: the row's cluster and first node, and which job a digit is
    assert "'.' idle" in text and "running: 0=job " in text
    assert any(line.split("|")[0].split()[1:] == ["0"] for line in text.splitlines())


def test_render_rgb_gantt_with_resizes(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", render_mode="rgb_array", skip_trivial=False)
    env.reset(seed=0)
    labels = env.action_labels()
    env.step(labels.index("start[0]@req"))
    env.step(labels.index("expand[0]@fit"))
    for _ in range(3):
        env.step(0)
    img = env.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8
    assert img.ndim == 3 and img.shape[2] == 3 and img.shape[0] > 100
    assert env.cmd.log is not None
    assert [e[2] for e in env.cmd.log.events][:2] == ["start", "expand"]
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 5
    assert "5 jobs on 8 nodes" in env.unwrapped.gantt_title()


def test_gantt_titles_and_legends_are_drawn(worlds: SimpleNamespace) -> None:
    from hpcgym.envs.render import render_gantt

    env = worlds.make("test/malleable-tiny-v0", render_mode="rgb_array", skip_trivial=False)
    env.reset(seed=0)
    labels = env.action_labels()
    env.step(labels.index("start[0]@req"))
    env.step(labels.index("expand[0]@fit"))
    sim, log = env.unwrapped.sim, env.unwrapped.cmd.log
    plain = render_gantt(sim, log, title="")
    titled = render_gantt(sim, log, title="easy on tiny, seed 3")
    assert plain.shape == titled.shape and (plain != titled).any()
    # the legend (job kinds, event markers) sits right of the plot: not white there
    assert (titled[:, int(titled.shape[1] * 0.85) :] < 250).any()
