from __future__ import annotations

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import transforms as T
from hpcgym.workloads.convert import read_workload
from hpcgym.workloads.stats import describe, format_stats, offered_load


@pytest.fixture(scope="module")
def hpc2n(traces_dir):
    return read_workload(traces_dir / "hpc2n.swf.gz", procs_per_node=2)


def test_first_and_window(hpc2n):
    w = T.first(hpc2n, 100)
    assert len(w) == 100 and w.jobs[0].submit == 0.0
    assert [j.id for j in w] == [j.id for j in hpc2n.jobs[:100]]
    assert w.rows is not None and len(w.rows) == 100
    day = T.window(hpc2n, 86400.0, 2 * 86400.0)
    expected = [j.id for j in hpc2n if 86400.0 <= j.submit < 2 * 86400.0]
    assert [j.id for j in day] == expected
    assert all(0.0 <= j.submit < 86400.0 for j in day)
    assert day.provenance[-1].op == "window"


def test_segments_cover_every_job_once(hpc2n):
    weeks = T.segments(hpc2n, T.WEEK)
    assert len(weeks) == int(hpc2n.jobs[-1].submit // T.WEEK) + 1
    ids = [j.id for w in weeks for j in w]
    assert ids == [j.id for j in hpc2n]
    assert [w.provenance[-1].params for w in weeks][2] == (("index", 2), ("length", T.WEEK))


def test_random_start_is_seeded(hpc2n):
    a = T.random_start(hpc2n, 5, n_jobs=200)
    b = T.random_start(hpc2n, 5, n_jobs=200)
    starts = {T.random_start(hpc2n, s, n_jobs=200).jobs[0].id for s in range(10)}
    assert a.fingerprint() == b.fingerprint() and len(a) == 200
    assert len(starts) > 1
    d = T.random_start(hpc2n, 2, duration=3 * 86400.0)
    assert d.jobs[-1].submit < 3 * 86400.0 and d.jobs[0].submit == 0.0
    with pytest.raises(WorkloadError):
        T.random_start(hpc2n, 1)


@pytest.mark.parametrize("target", [0.2, 0.7, 1.3])
def test_scale_load_hits_target(hpc2n, target):
    w = T.scale_load(T.first(hpc2n, 500), target)
    assert offered_load(w) == pytest.approx(target, rel=1e-9)
    # Only submit times change; relative order is kept.
    assert [j.id for j in w] == [j.id for j in hpc2n.jobs[:500]]
    assert [j.work for j in w] == [j.work for j in hpc2n.jobs[:500]]


def test_offered_load_by_hand():
    from hpcgym.sim.platform import Platform
    from hpcgym.sim.spec import JobSpec
    from hpcgym.workloads.workload import Workload

    jobs = (JobSpec(1, 0.0, 100.0, 2), JobSpec(2, 50.0, 10.0, 4, cpu_need=0.5))
    w = Workload("hand", jobs, Platform.single(4))
    assert offered_load(w) == pytest.approx((200 + 20) / (4 * 50))
    assert T.scale_arrivals(w, 2.0).jobs[1].submit == 100.0


def test_estimate_models(hpc2n):
    w = T.first(hpc2n, 300)
    exact = T.estimates(w, "exact")
    assert all(j.walltime == max(j.work, 1.0) for j in exact)
    user = T.estimates(w, "user")
    req = w.rows[:, 8]
    assert [j.walltime for j in user] == [
        r if r > 0 else max(j.work, 1.0) for r, j in zip(req, w, strict=True)
    ]
    n1 = T.estimates(w, "noisy", seed=1)
    n2 = T.estimates(w, "noisy", seed=1)
    n3 = T.estimates(w, "noisy", seed=2)
    assert n1.fingerprint() == n2.fingerprint() != n3.fingerprint()
    ratios = np.array([j.walltime / max(j.work, 1.0) for j in n1])
    assert (ratios >= 1).all()
    # exp(0.5|Z|): E = 2 exp(sigma^2/2) Phi(sigma) for sigma = 0.5.
    assert ratios.mean() == pytest.approx(2 * np.exp(0.125) * 0.691462, rel=0.06)
    with pytest.raises(WorkloadError):
        T.estimates(w, "noisy")


def test_stats_table(hpc2n):
    s = describe(hpc2n)
    assert s.jobs == len(hpc2n) and s.size.max == max(j.nodes for j in hpc2n)
    assert s.runtime.median == float(np.median([j.work for j in hpc2n]))
    table = format_stats(s)
    assert "offered load" in table and "runtime (s)" in table


def test_rescale_nodes_keeps_the_jobs_shape_relative_to_the_machine():
    from hpcgym.workloads import load

    kth = load("swf/kth-sp2-v0")  # 100 nodes
    big = T.rescale_nodes(kth, 128)
    assert big.platform.total_nodes == 128 and len(big) == len(kth)
    for a, b in zip(kth.jobs, big.jobs, strict=True):
        assert b.nodes == min(max(round(a.nodes * 1.28), 1), 128)
        assert (b.id, b.submit, b.work, b.walltime) == (a.id, a.submit, a.work, a.walltime)
        assert b.min_nodes == b.max_nodes == b.nodes
    assert max(j.nodes for j in big.jobs) == 128  # the 100-node jobs fill the new machine
    assert big.provenance[-1].op == "rescale_nodes"
    small = T.rescale_nodes(kth, 10)
    assert min(j.nodes for j in small.jobs) == 1


def test_rescale_nodes_refuses_elastic_jobs_and_bad_sizes():
    from hpcgym.workloads import load

    with pytest.raises(WorkloadError, match="rigid"):
        T.rescale_nodes(load("elastic/sdsc-sp2-mebf-v0", n_jobs=50), 100)
    with pytest.raises(WorkloadError, match="nodes must be"):
        T.rescale_nodes(load("swf/kth-sp2-v0"), 0)
