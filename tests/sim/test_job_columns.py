"""``metrics.job_columns`` reads the jobs' fields in C (``_batchcore.get_columns``) when it can;
the table is the same, bit for bit, as the one read attribute by attribute."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
from hpcgym.sim import metrics


def _played(env_id: str, steps: int, **kwargs: Any) -> Any:
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(7)
    _, info = env.reset(seed=7)
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if term or trunc:
            break
    return env.unwrapped.sim


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("hpcgym/Rigid-v0", {"kill_on_walltime": True}),
        ("hpcgym/Malleable-v1", {}),
        ("hpcgym/Evolving-v0", {}),
        ("hpcgym/Shared-v1", {}),
    ],
)
def test_columns_read_in_c_equal_those_read_in_python(env_id, kwargs, monkeypatch):
    if metrics._FIELD_READERS is None:
        pytest.skip("pure-Python install: the columns are read in Python only")
    for steps in (40, 100_000):  # mid-episode (queued and running jobs) and at its end
        sim = _played(env_id, steps, **kwargs)
        fast = metrics.job_columns(sim)
        with monkeypatch.context() as m:
            m.setattr(metrics, "_FIELD_READERS", None)
            plain = metrics.job_columns(sim)
        assert list(fast) == list(plain)
        for name, col in fast.items():
            assert col.dtype == plain[name].dtype, name
            if col.dtype == object:
                assert col.tolist() == plain[name].tolist(), name
            else:
                assert col.tobytes() == plain[name].tobytes(), name
