"""DFRS building blocks on hand-checked 3-5 job examples: priority, Greedy, yields, MCB8."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.baselines.dfrs import (
    TABLE1,
    TABLE2,
    PackJob,
    Placement,
    avg_yields,
    base_yield,
    greedy_nodes,
    maxmin_yields,
    mcb8,
    pack,
    parse_name,
    priority,
)
from hpcgym.baselines.dfrs.mcb8 import mcb8_stretch
from hpcgym.baselines.dfrs.placement import fits_memory
from hpcgym.baselines.dfrs.relabel import relabel
from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec


def spec(jid: int, tasks: int = 1, cpu: float = 1.0, mem: float = 0.0) -> JobSpec:
    return JobSpec(jid, 0.0, work=100.0, nodes=tasks, cpu_need=cpu, mem=mem)


def test_priority_is_flow_over_squared_virtual_time() -> None:
    assert priority(100.0, 10.0) == pytest.approx(1.0)
    assert priority(400.0, 10.0) == pytest.approx(4.0)
    assert priority(5.0, 0.0) == math.inf


def test_greedy_picks_least_loaded_node_with_memory() -> None:
    p = Placement(3)
    p.add(spec(1, cpu=0.5, mem=0.9), np.array([0]))
    p.add(spec(2, cpu=0.25, mem=0.0), np.array([1]))
    p.add(spec(3, cpu=0.5, mem=0.5), np.array([2]))
    p.remove(3)
    p.add(spec(3, cpu=0.1, mem=0.5), np.array([2]))
    # loads [0.5, 0.25, 0.1], memory [0.9, 0, 0.5]; a 2-task job needing 0.5 memory per task:
    # node 0 lacks memory; task 1 -> node 2 (load 0.1), then node 2 is full -> task 2 -> node 1.
    new = spec(4, tasks=2, cpu=1.0, mem=0.5)
    assert greedy_nodes(p, new).tolist() == [2, 1]
    assert fits_memory(p, new)
    # Room for 0.5-memory tasks: none on node 0, two on node 1, one on node 2.
    assert fits_memory(p, spec(5, tasks=3, mem=0.5))
    assert not fits_memory(p, spec(5, tasks=4, mem=0.5))
    assert greedy_nodes(p, spec(5, tasks=4, mem=0.5)) is None


def test_greedy_stacks_tasks_of_one_job() -> None:
    p = Placement(2)
    p.add(spec(1, cpu=1.0, mem=0.2), np.array([0]))
    # Three quarter-core tasks: node 1 (0), node 1 again (0.25 < 1), node 1 (0.5 < 1).
    assert greedy_nodes(p, spec(2, tasks=3, cpu=0.25, mem=0.1)).tolist() == [1, 1, 1]


def _chain() -> Placement:
    """Node 0: A, B, C (load 3); node 1: B, D (load 2)."""
    p = Placement(2)
    p.add(spec(1), np.array([0]))
    p.add(spec(2, tasks=2), np.array([0, 1]))
    p.add(spec(3), np.array([0]))
    p.add(spec(4), np.array([1]))
    return p


def test_base_and_maxmin_yields() -> None:
    p = _chain()
    assert base_yield(p) == pytest.approx(1 / 3)
    y = maxmin_yields(p)
    # Node 0 is the bottleneck at 1/3 for A, B, C; D then takes what B leaves on node 1.
    assert y == pytest.approx({1: 1 / 3, 2: 1 / 3, 3: 1 / 3, 4: 2 / 3})


def test_maxmin_second_level() -> None:
    p = Placement(2)
    p.add(spec(1), np.array([0]))
    p.add(spec(2, tasks=2), np.array([0, 1]))
    p.add(spec(3, cpu=0.5), np.array([1]))
    assert maxmin_yields(p) == pytest.approx({1: 0.5, 2: 0.5, 3: 1.0})


def test_avg_yields_feasible_and_at_least_maxmin_sum() -> None:
    p = _chain()
    y = avg_yields(p)
    assert all(v >= 1 / 3 - 1e-9 for v in y.values())
    assert y[1] + y[2] + y[3] <= 1 + 1e-9 and y[2] + y[4] <= 1 + 1e-9
    assert sum(y.values()) >= sum(maxmin_yields(p).values()) - 1e-9
    assert sum(y.values()) == pytest.approx(5 / 3)


def test_pack_by_hand() -> None:
    jobs = [PackJob(1, 2, 1.0, 0.5, order=1), PackJob(2, 1, 0.25, 0.1, order=2)]
    jobs.append(PackJob(3, 1, 1.0, 0.8, order=3))
    # Y = 0.5: memory-heavy list [3 (0.8), 1 (0.5) x2], CPU-heavy [2 (0.125)]. Node 0 takes 3,
    # then (more CPU free than memory) the CPU-heavy 2; node 1 takes both tasks of 1.
    assert pack(jobs, [0.5, 0.125, 0.5], 2) == {1: [1, 1], 2: [0], 3: [0]}
    # Y = 1 on two nodes: both tasks of 1 fill the two CPUs; 3 and 2 are left over.
    assert pack(jobs, [1.0, 0.25, 1.0], 2) is None


def test_mcb8_finds_the_yield_within_accuracy() -> None:
    jobs = [PackJob(1, 2, 1.0, 0.5, order=1), PackJob(2, 1, 0.25, 0.1, order=2)]
    jobs.append(PackJob(3, 1, 1.0, 0.8, order=3))
    mapping, y = mcb8(jobs, 3)
    # 3 cannot share with a task of 1 (memory 1.3), so it shares with 2: 1.25 Y <= 1.
    assert 0.79 <= y <= 0.8
    assert mapping[3] == mapping[2]
    assert sorted(mapping[1]) != [mapping[3][0]] * 2 and mapping[3][0] not in mapping[1]
    full, y_full = mcb8(jobs, 4)
    assert y_full == 1.0 and len({n for v in full.values() for n in v}) == 4


def test_mcb8_drops_the_lowest_priority_job() -> None:
    # Priority order 7, 5, 3. 7 and 3 never share the node (memory 1.2): 3, the lowest, goes;
    # 7 and 5 share the CPU at 1.25 Y <= 1.
    jobs = [PackJob(7, 1, 1.0, 0.6), PackJob(5, 1, 0.25, 0.3), PackJob(3, 1, 1.0, 0.6)]
    mapping, y = mcb8(jobs, 1)
    assert set(mapping) == {7, 5}
    assert 0.79 <= y <= 0.8
    # With 3 ahead of 5 in priority, 5 is dropped first, then 3 still does not fit: only 7.
    mapping, y = mcb8([jobs[0], jobs[2], jobs[1]], 1)
    assert set(mapping) == {7} and y == 1.0


def test_mcb8_keeps_pinned_jobs_on_their_nodes() -> None:
    jobs = [PackJob(1, 1, 1.0, 0.2, pinned=(2,)), PackJob(2, 2, 1.0, 0.2), PackJob(3, 1, 1.0, 0.2)]
    mapping, y = mcb8(jobs, 3)
    # Four full-CPU tasks on three nodes: some node holds two, so Y <= 1/2.
    assert mapping[1] == [2]
    assert 0.49 <= y <= 0.5
    assert len(mapping[2]) == 2 and len(mapping[3]) == 1


def test_mcb8_stretch_equalizes_estimated_stretch() -> None:
    jobs = [PackJob(1, 1, 1.0, 0.1), PackJob(2, 1, 1.0, 0.1)]
    # Job 1 has waited long with little progress, job 2 is fresh; one node, period 600.
    mapping, x = mcb8_stretch(jobs, {1: 1000.0, 2: 0.0}, {1: 100.0, 2: 0.0}, 600.0, 1)
    assert set(mapping) == {1, 2}
    # Yields y1 + y2 <= 1 with (1600) / (100 + 600 y1) = 600 / (600 y2) = 1 / x.
    y1 = (x * 1600 - 100) / 600
    y2 = x
    assert y1 + y2 == pytest.approx(1.0, abs=1e-3)


def test_relabel_keeps_bins_on_the_nodes_that_hold_them() -> None:
    # A fresh packing puts job 1 in bin 0 and job 2 in bin 1; they run on nodes 1 and 0.
    named = relabel({1: [0], 2: [1]}, {1: np.array([1]), 2: np.array([0])}, set(), 2)
    assert named[1].tolist() == [1] and named[2].tolist() == [0]


def test_names_round_trip() -> None:
    assert len(TABLE1) == 14 and len(TABLE2) == 18
    for name in TABLE1:
        cfg = parse_name(name + ("/opt=max" if "stretch" in name else "/opt=min"))
        assert parse_name(cfg.name) == cfg
    for name in TABLE2:
        assert parse_name(name).name.replace(" ", "") == name.replace(" ", "")
    cfg = parse_name("GreedyPM */per/opt=min/minvt=600")
    got = (cfg.submit, cfg.completion, cfg.periodic, cfg.minvt)
    assert got == ("greedypm", "greedy", "mcb8", 600)
    assert parse_name("MCB8 */opt=avg").completion == "mcb8"
    with pytest.raises(SpecError):
        parse_name("Greedy/per/opt=max")
    with pytest.raises(SpecError):
        parse_name("Fancy/per")
