from __future__ import annotations

import numpy as np
import pytest

from hpcgym.sim.spec import JobKind, SizeRule
from hpcgym.workloads.evolving import KleinParams, generate_klein
from hpcgym.workloads.koala import FT, GADGET2, amdahl_through, generate_koala


def test_klein_cases_follow_the_paper():
    cases = [generate_klein(seed) for seed in range(1000)]
    apps = np.array([len(c) for c in cases])
    steps = np.array([len(j.evolution) for c in cases for j in c])
    durations = np.array([s.duration for c in cases for j in c for s in j.evolution])
    nodes = np.array([s.nodes for c in cases for j in c for s in j.evolution])
    assert (apps.min(), apps.max()) == (15, 20) and apps.mean() == pytest.approx(17.5, abs=0.25)
    assert (steps.min(), steps.max()) == (1, 10) and steps.mean() == pytest.approx(5.5, abs=0.12)
    assert (durations.min(), durations.max()) == (500, 3600)
    assert durations.mean() == pytest.approx(2050, abs=15)
    assert (nodes.min(), nodes.max()) == (1, 75) and nodes.mean() == pytest.approx(38, abs=0.5)
    c = cases[0]
    assert all(j.kind is JobKind.EVOLVING and j.submit == 0.0 for j in c)
    assert c.platform.total_nodes == 75
    assert c.jobs[0].work == sum(s.duration for s in c.jobs[0].evolution)


def test_klein_determinism_and_params():
    assert generate_klein(3).fingerprint() == generate_klein(3).fingerprint()
    assert generate_klein(3).fingerprint() != generate_klein(4).fingerprint()
    small = generate_klein(1, KleinParams(apps=(2, 2), nodes=(1, 4), cluster_nodes=4))
    assert len(small) == 2 and max(s.nodes for j in small for s in j.evolution) <= 4
    with pytest.raises(ValueError):
        KleinParams(cluster_nodes=10)


def test_amdahl_through_points():
    f, t1 = amdahl_through(2, 600.0, 46, 240.0)
    assert t1 * (f + (1 - f) / 2) == pytest.approx(600.0)
    assert t1 * (f + (1 - f) / 46) == pytest.approx(240.0)


@pytest.mark.parametrize(("app", "best_at", "best"), [(GADGET2, 46, 240.0), (FT, 32, 60.0)])
def test_koala_app_shapes(app, best_at, best):
    job = app.job(1, 0.0, malleable=True)
    assert job.runtime_at(2) == pytest.approx(app.time_at_min)
    assert job.runtime_at(best_at) == pytest.approx(best)
    assert (job.min_nodes, job.nodes, job.max_nodes) == (2, 2, best_at)


def test_koala_mix():
    ws = [generate_koala(s) for s in range(40)]
    ft = np.array([j.max_nodes == 32 for w in ws for j in w])
    assert ft.mean() == pytest.approx(0.5, abs=5 * np.sqrt(0.25 / len(ft)))
    w = ws[0]
    assert len(w) == 300 and [j.submit for j in w][:3] == [0.0, 120.0, 240.0]
    assert all(j.kind is JobKind.MALLEABLE for j in w)
    assert all(j.size_rule is SizeRule.POWER_OF_TWO for j in w if j.max_nodes == 32)
    assert w.platform.total_nodes == 2 * (85 + 41 + 68 + 46 + 32)
    mixed = generate_koala(1, interarrival=30.0, rigid_fraction=0.5)
    rigid = [j for j in mixed if j.kind is JobKind.RIGID]
    assert len(rigid) == 150 and all(j.nodes == j.max_nodes == 2 for j in rigid)
    assert mixed.jobs[1].submit == 30.0
    assert generate_koala(9).fingerprint() == generate_koala(9).fingerprint()
    assert generate_koala(9).fingerprint() != generate_koala(10).fingerprint()
