"""The env on a wide machine gives what it gives on the narrow one it scales (issue 20).

``hpcgym/Rigid-v0`` with every job and the machine ``k`` times wider makes the same decisions:
a job fits exactly when it fits at 256 nodes, and every size feature is the same fraction of the
machine. The wide episode's jobs hold thousands of nodes in a few runs of ids, so its starts and
ends take the run-by-run path of ``nodes.set_runs``, where the narrow one's mostly scatter: a
wrong node written there shows as a different mask, observation or schedule, or as a CPU array
that no longer equals the sum of the jobs' allocations (checked at every step).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
import hpcgym.workloads as W
from hpcgym.workloads.registry import WorkloadSet, names, register
from hpcgym.workloads.workload import Workload


def scaled(factor: int) -> str:
    """``swf/lublin256-v0`` with every size and the machine ``factor`` times wider."""
    name = f"test/lublin256-x{factor}-v0"

    def build(seed: int, options: Mapping[str, Any]) -> Workload:
        w = W.load("swf/lublin256-v0", seed)
        return W.transforms.rescale_nodes(w, factor * w.platform.total_nodes)  # exact: factor

    if name not in names():
        register(WorkloadSet(name, f"lublin256 x{factor}", build, allocation="processor"))
    return name


def rollout(
    factor: int, seed: int, steps: int, check: Any
) -> tuple[list[Any], list[np.ndarray], list[Any]]:
    kwargs: dict[str, Any] = {}
    if factor > 1:
        kwargs = {"platform": [256 * factor], "workload": scaled(factor)}
    env = gym.make("hpcgym/Rigid-v0", **kwargs)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    seen, masks, tables = [obs], [info["action_mask"]], []
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        sim = env.unwrapped.sim
        check(sim)
        seen.append((obs, reward))
        masks.append(info["action_mask"])
        if term or trunc:
            tables.append(sim.result().jobs[["id", "state", "start", "end"]])
            obs, info = env.reset()
    return seen, masks, tables


@pytest.mark.parametrize("seed", [0, 1])
def test_wide_machine_steps_as_its_narrow_scale(state: Any, seed: int) -> None:
    narrow, narrow_masks, narrow_tables = rollout(1, seed, 1200, state.check)
    wide, wide_masks, wide_tables = rollout(40, seed, 1200, state.check)
    assert len(narrow_tables) >= 2 and len(narrow_tables) == len(wide_tables)
    for a, b in zip(narrow_tables, wide_tables, strict=True):
        assert a.equals(b)
    for a, b in zip(narrow_masks, wide_masks, strict=True):
        assert np.array_equal(a, b)
    first, rest = narrow[0], narrow[1:]
    for key in first:
        np.testing.assert_allclose(first[key], wide[0][key], rtol=1e-6, atol=1e-7)
    for (obs_a, r_a), (obs_b, r_b) in zip(rest, wide[1:], strict=True):
        assert r_a == pytest.approx(r_b, rel=1e-9, abs=1e-12)
        for key in obs_a:
            np.testing.assert_allclose(obs_a[key], obs_b[key], rtol=1e-6, atol=1e-7, err_msg=key)
