"""A user's trace plays on its own machine; a named platform must hold every job (issue 42)."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.errors import SpecError


def _trace(path: Path, nodes: int = 100, n: int = 400, wide: int = 3) -> Path:
    """An SWF trace for a ``nodes``-node machine: ``wide`` jobs of all its nodes, rest small."""
    rng = np.random.default_rng(7)
    lines = [f"; MaxNodes: {nodes}", f"; MaxProcs: {nodes}", "; UnixStartTime: 0"]
    for i in range(n):
        size = nodes if i % (n // wide) == 5 else int(rng.integers(1, nodes // 4))
        run = int(rng.integers(60, 4000))
        fields = [
            i + 1,
            i * 120,
            -1,
            run,
            size,
            -1,
            -1,
            size,
            run * 2,
            -1,
            1,
            1,
            1,
            -1,
            1,
            -1,
            -1,
            -1,
        ]
        lines.append(" ".join(str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("preset", ["hpcgym/Rigid-v0", "hpcgym/Malleable-v0"])
def test_a_users_trace_plays_on_its_own_machine(preset: str, tmp_path: Path) -> None:
    trace = str(_trace(tmp_path / "mine.swf"))
    env = gym.make(preset, workload=trace, n_jobs=64, workload_options={})
    env.reset(seed=0)
    assert [c.nodes for c in env.unwrapped._episode.platform.clusters] == [100]
    ep = episode_for(preset, {"workload": trace, "n_jobs": 64, "workload_options": {}}, 3)
    assert ep.platform.total_nodes == 100


def test_the_presets_own_machines_are_unchanged() -> None:
    for preset, nodes in (
        ("hpcgym/Rigid-v0", 256),
        ("hpcgym/Malleable-v0", 128),
        ("hpcgym/Evolving-v0", 75),
        ("hpcgym/Shared-v0", 128),
    ):
        assert env_config(preset, {}).platform is None
        assert episode_for(preset, {}, 0).platform.total_nodes == nodes
    multi = episode_for("hpcgym/MultiCluster-v0", {}, 0).platform
    assert [c.nodes for c in multi.clusters] == [170, 82, 136, 92, 64]


def test_a_named_platform_too_small_for_some_jobs_is_an_error_naming_them(tmp_path: Path) -> None:
    trace = str(_trace(tmp_path / "mine.swf"))
    with pytest.raises(SpecError) as e:
        gym.make("hpcgym/Rigid-v0", workload=trace, platform=[64])
    text = str(e.value)
    assert "3 of the 400 jobs" in text and "needs 100 nodes" in text
    assert "the largest cluster has 64" in text and "drop_oversized=True" in text
    assert "own machine (100 nodes)" in text


def test_dropping_the_jobs_that_never_fit_says_how_many_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    trace = str(_trace(tmp_path / "mine.swf"))
    kwargs = {"workload": trace, "platform": [64], "drop_oversized": True, "n_jobs": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("hpcgym/Rigid-v0", **kwargs)
        env.reset(seed=0)
    said = [str(w.message) for w in caught if "left out" in str(w.message)]
    assert len(said) == 1 and "left out 3 of 400 jobs" in said[0]
    assert env.unwrapped.dropped_jobs == 3
    ep = episode_for("hpcgym/Rigid-v0", kwargs, 0)
    assert len(ep.jobs) == 397 and max(j.nodes for j in ep.jobs) < 64
    # a platform that holds every job drops nothing and says nothing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("hpcgym/Rigid-v0", workload=trace, platform=[100], drop_oversized=True)
        env.reset(seed=0)
    assert not [w for w in caught if "left out" in str(w.message)]
    assert env.unwrapped.dropped_jobs == 0


def test_drop_oversized_must_be_a_switch() -> None:
    with pytest.raises(SpecError, match="drop_oversized must be True or False"):
        gym.make("hpcgym/Rigid-v0", drop_oversized="yes")


@pytest.mark.parametrize("given", ["./nosuch.swf", "sub/nosuch.swf.gz"])
def test_a_path_that_names_no_file_says_no_such_file(given: str) -> None:
    """Issue 42: the answer was about lookup folders and $HPCGYM_WORKLOADS."""
    with pytest.raises(Exception, match="no such trace file") as e:
        gym.make("hpcgym/Rigid-v0", workload=given)
    assert "HPCGYM_WORKLOADS" not in str(e.value) and "does not exist" in str(e.value)
