from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.sim.reconfig import RedistributionCost
from hpcgym.sim.spec import JobKind, SizeRule
from hpcgym.sim.speedup import PowerLaw
from hpcgym.workloads import transforms as T
from hpcgym.workloads.convert import read_workload
from hpcgym.workloads.dfrs import annotate_dfrs, hpc2n_dfrs, hpc2n_tasks
from hpcgym.workloads.elastic import RHO_HIGH, RHO_LOW, RHO_MEDIUM, ElasticConfig, annotate_elastic
from hpcgym.workloads.lublin import generate_lublin
from hpcgym.workloads.swf import COL, N_FIELDS


@pytest.fixture(scope="module")
def kth(traces_dir):
    return T.first(read_workload(traces_dir / "KTH-SP2-1996-2.1-cln.swf.gz"), 3000)


def test_mebf_rules(kth):
    cfg = ElasticConfig(malleable=0.6)
    w = annotate_elastic(kth, cfg, seed=1)
    kinds = [j.kind for j in w]
    assert kinds.count(JobKind.MALLEABLE) == round(0.6 * len(w))
    assert kinds.count(JobKind.RIGID) == len(w) - round(0.6 * len(w))
    cap = kth.platform.largest_cluster
    mall = [j for j in w if j.kind is JobKind.MALLEABLE]
    for orig, j in zip(kth, w, strict=True):
        assert (j.id, j.submit, j.work) == (orig.id, orig.submit, orig.work)
        if j.kind is JobKind.MALLEABLE:
            assert j.nodes == orig.nodes
            assert j.min_nodes == max(1, math.floor(orig.nodes / 2))
            assert j.max_nodes == max(orig.nodes, min(cap, 5 * orig.nodes))
        else:
            assert j == orig
    rhos = np.array([j.speedup.rho for j in mall])
    assert all(isinstance(j.speedup, PowerLaw) for j in mall)
    assert ((rhos > 0) & (rhos <= 0.3)).all()
    classes = np.digitize(rhos, [0.1, 0.2], right=True)
    assert np.bincount(classes) / len(rhos) == pytest.approx([1 / 3] * 3, abs=0.05)
    costs = [j.reconfig for j in mall]
    assert all(isinstance(c, RedistributionCost) for c in costs)
    alphas = np.array([c.alpha for c in costs])
    betas = np.array([c.beta for c in costs])
    for v in (alphas, betas):
        assert v.min() >= 0.005 and v.max() <= 0.05
        assert v.mean() == pytest.approx(0.0275, abs=0.002)
    assert w.provenance[-1].op == "annotate_elastic" and w.provenance[-1].seed == 1


@pytest.mark.parametrize(
    ("cls", "lo", "hi"), [(RHO_HIGH, 0, 0.1), (RHO_MEDIUM, 0.1, 0.2), (RHO_LOW, 0.2, 0.3)]
)
def test_single_scalability_class(kth, cls, lo, hi):
    w = annotate_elastic(kth, ElasticConfig(rho_classes=(cls,)), seed=2)
    rhos = np.array([j.speedup.rho for j in w if j.kind is JobKind.MALLEABLE])
    assert ((rhos > lo) & (rhos <= hi)).all()


def test_mixed_kinds_and_determinism(kth):
    cfg = ElasticConfig(malleable=0.3, moldable=0.3, evolving=0.2)
    a = annotate_elastic(kth, cfg, seed=9)
    b = annotate_elastic(kth, cfg, seed=9)
    c = annotate_elastic(kth, cfg, seed=10)
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    n = len(kth)
    counts = {k: sum(j.kind is k for j in a) for k in JobKind}
    assert counts[JobKind.MOLDABLE] == round(0.3 * n) and counts[JobKind.EVOLVING] == round(0.2 * n)
    for orig, j in zip(kth, a, strict=True):
        if j.kind is JobKind.EVOLVING:
            assert 2 <= len(j.evolution) <= 4
            assert j.evolution[0].nodes == orig.nodes
            assert j.work == pytest.approx(orig.work)
        if j.kind is JobKind.MOLDABLE:
            assert j.reconfig.resize(1, 2) == 0.0 and isinstance(j.speedup, PowerLaw)
            assert j.min_nodes <= j.nodes <= j.max_nodes


def test_power_of_two_rule_keeps_misfits_rigid(kth):
    w = annotate_elastic(kth, ElasticConfig(size_rule="power_of_two"), seed=3)
    for orig, j in zip(kth, w, strict=True):
        pow2 = orig.nodes & (orig.nodes - 1) == 0
        assert (j.kind is JobKind.MALLEABLE) == pow2
        if pow2:
            assert j.size_rule is SizeRule.POWER_OF_TWO
    misfits = dict(w.provenance[-1].params)["rule_misfits"]
    assert misfits == sum(1 for j in kth if j.nodes & (j.nodes - 1))


def test_bad_elastic_config():
    with pytest.raises(WorkloadError):
        ElasticConfig(malleable=0.7, moldable=0.5)
    with pytest.raises(ValueError):
        ElasticConfig(size_rule="odd")


def test_dfrs_synthetic_rules():
    w = generate_lublin(20_000, 128, seed=1)
    d = annotate_dfrs(w, seed=4, cores=4)
    mem = np.array([j.mem for j in d])
    assert (mem == 0.1).mean() == pytest.approx(0.55, abs=0.015)
    x = np.round(mem[mem > 0.1] * 10).astype(int)
    assert set(x) == set(range(2, 11))
    assert np.bincount(x, minlength=11)[2:] / len(x) == pytest.approx([1 / 9] * 9, abs=0.015)
    for j in d:
        assert j.cpu_need == (0.25 if j.nodes == 1 else 1.0)
    assert annotate_dfrs(w, seed=4).fingerprint() == d.fingerprint()
    assert annotate_dfrs(w, seed=5).fingerprint() != d.fingerprint()


def test_hpc2n_conversion_by_hand():
    rows = np.full((5, N_FIELDS), -1.0)
    rows[:, COL["alloc_procs"]] = [4, 3, 2, 6, 2]
    rows[0, COL["used_memory"]] = 200_000  # 0.095 of 2 GB -> raised to 0.1
    rows[1, COL["req_memory"]] = 524_288  # 0.25
    rows[2, COL["used_memory"]] = 1_258_291.2  # 0.6
    rows[4, COL["req_memory"]] = 3_000_000  # above one node
    tasks, cpu, mem, missing = hpc2n_tasks(rows)
    assert tasks.tolist() == [2, 3, 2, 3, 2]
    assert cpu.tolist() == [1.0, 0.5, 0.5, 1.0, 0.5]
    assert mem == pytest.approx([0.2, 0.25, 0.6, 0.2, 1.0])
    assert missing == 1


def test_hpc2n_dfrs_on_the_trace(traces_dir):
    w = read_workload(traces_dir / "hpc2n.swf.gz", procs_per_node=1)
    d = hpc2n_dfrs(w)
    assert d.platform.total_nodes == 120 and d.platform.clusters[0].cores == 2
    procs = np.where(w.rows[:, 4] > 0, w.rows[:, 4], w.rows[:, 7])
    # Work per job is kept, and tasks * CPU need equals half the processors (2 per node).
    assert [j.work for j in d] == [j.work for j in w]
    assert np.array([j.nodes * j.cpu_need for j in d]) == pytest.approx(procs / 2)
    no_mem = int(((w.rows[:, 6] <= 0) & (w.rows[:, 9] <= 0)).sum())
    assert dict(d.provenance[-1].params)["memory_missing"] == no_mem
    with pytest.raises(WorkloadError, match="no SWF records"):
        hpc2n_dfrs(
            generate_lublin(10, 16, 0).derive(list(generate_lublin(10, 16, 0)), d.provenance[0])
        )
