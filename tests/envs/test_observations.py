"""Observation layout, bounds, the flat option and queue orders."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np

import hpcgym  # noqa: F401


def test_dict_layout_and_flat_option() -> None:
    env = gym.make("hpcgym/Shared-v0")
    obs, _ = env.reset(seed=0)
    assert {k: v.shape for k, v in obs.items()} == {
        "cluster": (1, 4),
        "queue": (16, 15),
        "running": (16, 12),
        "suspended": (8, 12),
        "time": (6,),
    }
    assert all(v.dtype == np.float32 for v in obs.values())
    flat = gym.make("hpcgym/Shared-v0", observation="flat")
    fobs, _ = flat.reset(seed=0)
    assert fobs.shape == (4 + 16 * 15 + 16 * 12 + 8 * 12 + 6,)
    np.testing.assert_array_equal(fobs, np.concatenate([v.ravel() for v in obs.values()]))


def test_queue_window_features_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", skip_trivial=False)
    obs, _ = env.reset(seed=0)
    q = obs["queue"]
    # Job 1: requested 4 of 8 nodes, sizes 1..8, malleable, fits now; job 2 likewise.
    np.testing.assert_allclose(q[0, [0, 1, 3, 4, 5]], [1.0, 0.0, 0.5, 0.125, 1.0])
    np.testing.assert_array_equal(q[0, 6:10], [0, 0, 1, 0])
    assert q[0, 12] == 1.0 and q[0, 13] == 1.0
    assert np.all(q[2:] == 0.0)
    assert obs["cluster"][0].tolist() == [1.0, 1.0, 1.0, 0.0]


def test_running_window_tracks_resizes(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    labels = env.action_labels()
    obs, *_ = env.step(labels.index("start[0]@req"))
    assert obs["running"][0, 1] == 0.5  # 4 of 8 nodes
    obs, *_ = env.step(labels.index("expand[0]@fit"))
    r = obs["running"][0]
    assert r[1] == 1.0 and r[10] == 1.0 and r[8] == 0.5  # 8 nodes, reconfiguring, 1 resize
    assert r[6] == 1.0  # not progressing: no estimated end


def test_fits_first_puts_startable_jobs_first(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/rigid-tiny-v0", queue_order="fits_first", skip_trivial=False)
    env.reset(seed=0)
    env.step(1)  # job 1 on 2 nodes
    env.step(0)  # t=10: queue 2 (3 nodes), 3 (1 node), 4 (4 nodes)
    assert env.sim is not None and env.sim.now == 10.0
    ids = [env.ledger.jobs[r].spec.id for r in env._decision.queue_rows]
    assert ids == [3, 2, 4]
    sjf = worlds.make("test/rigid-tiny-v0", queue_order="sjf", skip_trivial=False)
    sjf.reset(seed=0)
    sjf.step(1)  # shortest estimate first: job 2 (60 s) before job 1 (200 s)
    sjf.step(0)
    assert [sjf.ledger.jobs[r].spec.id for r in sjf._decision.queue_rows] == [4, 3, 1]


def test_class_docstring_example_runs() -> None:
    import doctest

    import hpcgym.envs.cluster_env as module

    result = doctest.testmod(module, verbose=False)
    assert result.attempted >= 3 and result.failed == 0
