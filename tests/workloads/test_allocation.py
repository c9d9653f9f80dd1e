"""Processors as the default unit of allocation, whole nodes on request (issue 20, item 4)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from hpcgym.envs.registration import ALLOCATION, PRESETS
from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.workloads import load, names, read_workload, registry
from hpcgym.workloads.convert import ALLOCATIONS, DEFAULT_ALLOCATION, trace_to_workload
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.stats import describe, format_stats, offered_load, unit_loads
from hpcgym.workloads.swf import SwfTrace, read_swf

# Four 8-processor nodes (32 processors). Jobs: 3, 8, 12 and 32 processors.
FAT = """; Version: 2.2
; MaxNodes: 4
; MaxProcs: 32
1 0 0 100 3 -1 -1 3 200 -1 1 1 1 -1 -1 -1 -1 -1
2 50 0 200 8 -1 -1 8 300 -1 1 2 1 -1 -1 -1 -1 -1
3 100 0 10 -1 -1 -1 12 60 -1 1 1 1 -1 -1 -1 -1 -1
4 200 0 50 32 -1 -1 32 60 -1 1 3 1 -1 -1 -1 -1 -1
"""
# By hand, over the 200 s arrival span:
# processors: 3*100 + 8*200 + 12*10 + 32*50 = 3,620 processor-s on 32 processors -> 0.565625
# nodes: 1*100 + 1*200 + 2*10 + 4*50 = 520 node-s on 4 nodes -> 0.65 (4,160 core-s, x1.149)
PROC_LOAD = 3620 / (32 * 200)
NODE_LOAD = 520 / (4 * 200)


@pytest.fixture
def fat(tmp_path):
    p = tmp_path / "fat.swf"
    p.write_text(FAT)
    return p


def _swf(tmp_path, header: str, records: str):
    p = tmp_path / "t.swf"
    p.write_text(header + records)
    return p


def test_processor_allocation_counts_each_jobs_processors(fat):
    w = read_workload(fat, allocation="processor")
    assert [j.nodes for j in w] == [3, 8, 12, 32]
    assert w.platform == Platform.single(32, cores=1)
    assert offered_load(w) == pytest.approx(PROC_LOAD)
    assert dict(w.provenance[0].params)["allocation"] == "processor"


def test_node_allocation_rounds_up_to_whole_nodes(fat):
    w = read_workload(fat, allocation="node")
    assert [j.nodes for j in w] == [1, 1, 2, 4]
    assert w.platform == Platform.single(4, cores=8)
    assert offered_load(w) == pytest.approx(NODE_LOAD)
    assert dict(w.provenance[0].params)["allocation"] == "node"


def test_the_default_is_processor(fat):
    assert DEFAULT_ALLOCATION == "processor"
    by_default = read_workload(fat)
    assert by_default.jobs == read_workload(fat, allocation="processor").jobs
    assert by_default.platform == Platform.single(32)
    assert trace_to_workload(read_swf(fat)).jobs == by_default.jobs
    # An ad-hoc file set takes the same default, and the option.
    assert registry.load(str(fat)).jobs == by_default.jobs
    assert [j.nodes for j in registry.load(str(fat), allocation="node")] == [1, 1, 2, 4]


def test_unit_loads_gives_both_loads_by_hand(fat):
    for allocation in ALLOCATIONS:
        u = unit_loads(read_workload(fat, allocation=allocation))
        assert u is not None and u.allocation == allocation
        assert (u.processor, u.node) == (pytest.approx(PROC_LOAD), pytest.approx(NODE_LOAD))
        assert (u.processors, u.nodes, u.procs_per_node) == (32, 4, 8)
        assert u.inflation == pytest.approx(4160 / 3620)


def test_procs_per_node_sizes_a_machine_known_by_its_nodes(tmp_path):
    p = _swf(tmp_path, "; MaxNodes: 4\n", FAT.split("\n", 3)[3])
    w = read_workload(p, procs_per_node=8)
    assert w.platform == Platform.single(32) and [j.nodes for j in w] == [3, 8, 12, 32]
    assert [j.nodes for j in read_workload(p, procs_per_node=8, allocation="node")] == [1, 1, 2, 4]


def test_unknown_allocation_is_an_error(fat):
    for bad in ("core", "nodes", None):
        with pytest.raises(WorkloadError, match="allocation must be 'processor' or 'node'"):
            read_workload(fat, allocation=bad)  # type: ignore[arg-type]
    with pytest.raises(WorkloadError, match="allocation must be"):
        registry.load(str(fat), allocation="cores")
    with pytest.raises(WorkloadError, match="allocation must be"):
        registry.WorkloadSet("t/x-v0", "x", lambda s, o: read_workload(fat), allocation="x")  # type: ignore[arg-type]


def test_a_job_larger_than_the_machine_is_an_error(tmp_path):
    records = "1 0 0 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    records += "9 5 0 10 33 -1 -1 33 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    p = _swf(tmp_path, "; MaxNodes: 4\n; MaxProcs: 32\n", records)
    with pytest.raises(WorkloadError) as e:
        read_workload(p)
    assert f"{p}:4: job 9 asks for 33 processors; the machine has 32" in str(e.value)
    with pytest.raises(WorkloadError, match="job 9 needs 5 nodes of 8 processors"):
        read_workload(p, allocation="node")
    with pytest.raises(WorkloadError, match="job 9 asks for 33 processors; the machine has 30"):
        trace_to_workload(read_swf(p), platform=Platform.single(30))


def test_a_header_without_the_machine_says_what_to_pass(tmp_path):
    p = _swf(tmp_path, "; Version: 2.2\n", "1 0 0 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(WorkloadError) as e:
        read_workload(p)
    message = str(e.value)
    assert str(p) in message and "neither MaxProcs nor MaxNodes" in message
    assert "MaxProcs: N" in message and "allocation='node'" in message
    # Whole nodes keep the old behaviour (the machine is the largest job), and a platform works.
    assert read_workload(p, allocation="node").platform == Platform.single(4)
    assert trace_to_workload(read_swf(p), platform=Platform.single(6)).platform.total_nodes == 6


def test_every_set_and_preset_declares_its_unit():
    for name in names():
        assert registry.get(name).allocation in ALLOCATIONS, name
    for env_id, kwargs in PRESETS.items():
        assert ALLOCATION[env_id] == registry.get(kwargs["workload"]).allocation, env_id


@pytest.mark.parametrize(
    "name", ["swf/sdsc-sp2-v0", "swf/kth-sp2-v0", "swf/cea-curie-v0", "swf/lublin256-v0"]
)
def test_one_processor_traces_are_the_same_in_either_unit(name):
    """Their headers give one processor per node, so the default unit changes nothing."""
    w = load(name)
    assert registry.get(name).allocation == "processor"
    assert dict(w.provenance[0].params)["allocation"] == "processor"
    file = registry.resolve_file(registry.get(name).file or "")
    whole = read_workload(file, allocation="node")
    assert [j.nodes for j in w] == [j.nodes for j in whole]
    assert w.platform == whole.platform


def _table_digest(w) -> str:
    h = hashlib.sha256()
    for j in w.jobs:
        row = (j.id, j.submit, j.work, j.nodes, j.min_nodes, j.max_nodes, j.walltime)
        row += (j.cpu_need, j.mem, tuple((s.duration, s.nodes) for s in j.evolution))
        h.update(repr(row).encode())
    h.update(repr([(c.nodes, c.cores) for c in w.platform.clusters]).encode())
    return h.hexdigest()[:16]


# Digests of the job tables as they were before processors became the default unit.
@pytest.mark.parametrize(
    ("name", "options", "digest"),
    [
        ("swf/hpc2n-v0", {}, "2b90b2b3d3146801"),
        ("swf/hpc2n-dfrs-v0", {"week": 2}, "380de4d3e72224d4"),
        ("synthetic/lublin-dfrs-128-v0", {"n_jobs": 200}, "aca60839a21d7cc0"),
        ("synthetic/evolving-klein-v0", {}, "48c9011c4da80297"),
    ],
)
def test_sets_declared_in_nodes_keep_their_job_tables(name, options, digest):
    assert registry.get(name).allocation == "node"
    assert _table_digest(load(name, **options)) == digest


def test_hpc2n_v0_keeps_whole_nodes_and_v1_counts_processors():
    v0, v1 = load("swf/hpc2n-v0"), load("swf/hpc2n-v1")
    assert v0.platform == Platform.single(120, cores=2)
    assert v1.platform == Platform.single(240, cores=1)
    assert [j.id for j in v0] == [j.id for j in v1]
    assert all(a.nodes == -(-b.nodes // 2) for a, b in zip(v0, v1, strict=True))
    assert any(b.nodes % 2 for b in v1)  # odd processor counts: the rounding is real
    u0, u1 = unit_loads(v0), unit_loads(v1)
    assert u0 is not None and u1 is not None
    assert (u0.allocation, u1.allocation) == ("node", "processor")
    assert u0.node == pytest.approx(offered_load(v0)) == pytest.approx(u1.node)
    assert u1.processor == pytest.approx(offered_load(v1)) == pytest.approx(u0.processor)
    assert u0.node > u0.processor


def test_sdpolicy_paper_check_keeps_whole_16_core_nodes():
    from hpcgym.bench.papers import sdpolicy

    w = sdpolicy.workload(sdpolicy.Case("cea-curie", 1, 1.0, "static", 2.0))
    assert w.platform == Platform.single(5832, cores=16)
    assert dict(w.provenance[0].params)["allocation"] == "node"
    assert _table_digest(w) == "0eb7145591a00d91"


def test_stats_table_names_the_unit_and_both_loads(fat):
    table = format_stats(describe(read_workload(fat)))
    assert "platform      32 units of one processor" in table
    assert f"unit          processor (load {PROC_LOAD:.3f}); whole 8-processor nodes" in table
    assert f"would give load {NODE_LOAD:.3f} on 4 nodes (x1.15 core-seconds)" in table
    table = format_stats(describe(read_workload(fat, allocation="node")))
    assert "platform      4 nodes of 8 processors" in table
    assert f"unit          node: whole 8-processor nodes (load {NODE_LOAD:.3f}" in table
    assert f"processors would give load {PROC_LOAD:.3f} on 32 units" in table


def test_unit_loads_is_none_once_sizes_change():
    assert unit_loads(load("swf/hpc2n-dfrs-v0")) is None
    assert unit_loads(load("synthetic/lublin-256-v0", n_jobs=50)) is None


def test_a_header_made_in_memory_cannot_size_a_machine_beyond_the_limit() -> None:
    """The file reader refuses such a header; one made in memory (an import) is refused too."""
    row = [1, 0, 0, 10, 1, -1, -1, 1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1]
    for line, allocation in ((" MaxProcs: 1000000000000", "processor"),
                             (" MaxNodes: 1000000000000", "node")):  # fmt: skip
        trace = SwfTrace(SwfHeader((line,)), np.array([row], dtype=float))
        with pytest.raises(WorkloadError, match="hpcgym simulates"):
            trace_to_workload(trace, allocation=allocation)  # type: ignore[arg-type]
