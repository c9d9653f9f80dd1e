"""Cross-trace sets: another machine's trace on MEBF's 128 nodes, at its own load."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
from hpcgym.bench import scenarios
from hpcgym.errors import WorkloadError
from hpcgym.sim import JobKind
from hpcgym.workloads import load
from hpcgym.workloads.sets import CEA_CURIE, KTH_SP2, _read
from hpcgym.workloads.splits import time_splits
from hpcgym.workloads.stats import offered_load


@pytest.mark.parametrize(
    ("name", "file"),
    [("elastic/kth-sp2-mebf-128-v0", KTH_SP2), ("elastic/cea-curie-mebf-128-v0", CEA_CURIE)],
)
def test_a_cross_trace_set_is_the_whole_trace_on_128_nodes_at_its_own_load(
    name: str, file: str
) -> None:
    source = _read(file, None, "processor")
    w = load(name)
    assert w.platform.clusters[0].nodes == 128 and len(w.platform.clusters) == 1
    assert len(w.jobs) == len(source.jobs)
    assert offered_load(w) == pytest.approx(offered_load(source), rel=1e-9)
    scale = 128 / source.platform.clusters[0].nodes
    for j, s in zip(w.jobs[:500], source.jobs[:500], strict=True):
        assert j.id == s.id and j.work == s.work
        assert j.nodes == min(max(round(s.nodes * scale), 1), 128)
    malleable = np.mean([j.kind is JobKind.MALLEABLE for j in w.jobs])
    assert 0.55 < malleable < 0.65
    assert load(name).jobs == w.jobs  # deterministic


def test_the_kth_cross_trace_scenario_draws_its_windows_from_the_kth_test_split() -> None:
    sc = scenarios.get("malleable-small-kth-v0")
    assert sc.name in scenarios.CROSS_TRACE["malleable-small-v2"]
    w = load("elastic/kth-sp2-mebf-128-v0")
    test = time_splits(w)["test"]
    allowed = {j.id for j in w.jobs[test.first : test.stop]}
    env = gym.make(sc.env_id, **sc.env_kwargs)
    for seed in sc.seeds[:5]:
        env.reset(seed=seed)
        ids = {j.id for j in env.unwrapped.episode.jobs}
        assert len(ids) == 64 and ids <= allowed


@pytest.mark.parametrize(
    ("name", "workload", "nodes"),
    [("rigid-sdsc-sp2-v0", "swf/sdsc-sp2-v0", 128), ("rigid-kth-v0", "swf/kth-sp2-v0", 100)],
)
def test_the_rigid_cross_trace_scenarios_play_the_traces_test_splits_on_their_machines(
    name: str, workload: str, nodes: int
) -> None:
    sc = scenarios.get(name)
    assert sc.name in scenarios.CROSS_TRACE["rigid-lublin-v1"]
    assert "easy-f1" in sc.policies and "easy-sjf" in sc.policies
    w = load(workload)
    test = time_splits(w)["test"]
    allowed = {j.id for j in w.jobs[test.first : test.stop]}
    env = gym.make(sc.env_id, **sc.env_kwargs)
    for seed in sc.seeds[:5]:
        env.reset(seed=seed)
        episode = env.unwrapped.episode
        ids = {j.id for j in episode.jobs}
        assert len(ids) == 256 and ids <= allowed
        assert episode.platform.clusters[0].nodes == nodes


@pytest.mark.parametrize("name", ["elastic/sdsc-sp2-mebf-v0", "elastic/kth-sp2-mebf-128-v0"])
def test_resize_cost_scales_only_the_costs(name: str) -> None:
    """``resize_cost`` multiplies MEBF's alpha and beta; the jobs are otherwise the same."""
    opts = {"n_jobs": 300}
    paper = load(name, 3, **opts)
    for k in (0.0, 10.0, 1000.0):
        scaled = load(name, 3, **opts, resize_cost=k)
        assert len(scaled.jobs) == len(paper.jobs)
        for a, b in zip(paper.jobs, scaled.jobs, strict=True):
            assert (a.id, a.submit, a.work, a.nodes, a.kind) == (
                b.id,
                b.submit,
                b.work,
                b.nodes,
                b.kind,
            )
            if a.kind.value == "malleable":
                assert b.reconfig.resize(4, 8) == pytest.approx(k * a.reconfig.resize(4, 8))
                assert 0.005 * 4 <= a.reconfig.resize(4, 8) <= 0.05 * 4 + 0.05 / 12
    for bad in (-1.0, float("inf"), "x", True):
        with pytest.raises(WorkloadError, match="resize_cost"):
            load(name, 3, **opts, resize_cost=bad)
