from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads import transforms as T
from hpcgym.workloads.elastic import ElasticConfig, annotate_elastic
from hpcgym.workloads.stats import offered_load
from hpcgym.workloads.workload import Workload


@st.composite
def workloads(draw):
    n = draw(st.integers(2, 40))
    gaps = draw(st.lists(st.integers(0, 5000), min_size=n - 1, max_size=n - 1))
    works = draw(st.lists(st.integers(1, 10**5), min_size=n, max_size=n))
    nodes = draw(st.lists(st.integers(1, 64), min_size=n, max_size=n))
    submits = [0]
    for g in gaps:
        submits.append(submits[-1] + g)
    jobs = tuple(
        JobSpec(i + 1, float(s), float(w), k)
        for i, (s, w, k) in enumerate(zip(submits, works, nodes, strict=True))
    )
    return Workload("prop", jobs, Platform.single(64))


@settings(max_examples=60, deadline=None)
@given(workloads(), st.floats(0.05, 3.0))
def test_scale_load_keeps_jobs_and_hits_target(w, target):
    if w.jobs[-1].submit == 0:
        return
    out = T.scale_load(w, target)
    assert offered_load(out) == pytest.approx(target, rel=1e-9)
    assert [(j.id, j.work, j.nodes) for j in out] == [(j.id, j.work, j.nodes) for j in w]
    assert len(out.provenance) == len(w.provenance) + 1


@settings(max_examples=60, deadline=None)
@given(workloads(), st.floats(0, 10**5), st.floats(1, 10**5))
def test_window_selects_exactly_the_submitted_jobs(w, start, length):
    out = T.window(w, start, start + length)
    assert [j.id for j in out] == [j.id for j in w if start <= j.submit < start + length]
    assert all(0 <= j.submit < length for j in out)


@settings(max_examples=40, deadline=None)
@given(workloads(), st.integers(0, 2**32 - 1), st.floats(0, 1))
def test_elastic_annotation_respects_rules(w, seed, fraction):
    out = annotate_elastic(w, ElasticConfig(malleable=fraction), seed)
    assert (
        out.fingerprint()
        == annotate_elastic(w, ElasticConfig(malleable=fraction), seed).fingerprint()
    )
    for before, after in zip(w, out, strict=True):
        assert after.min_nodes <= before.nodes <= after.max_nodes <= 64
        assert (after.id, after.submit, after.work) == (before.id, before.submit, before.work)
