from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.workloads.lublin import (
    BATCH_PARAMS,
    INTERACTIVE_PARAMS,
    MAX_LOG_INTERARRIVAL,
    MAX_LOG_RUNTIME,
    WHOLE_PARAMS,
    bucket_weights,
    gamma_cdf,
    generate_lublin,
    sample,
)


def gamma_pdf(x: np.ndarray, k: float, theta: float) -> np.ndarray:
    return np.exp((k - 1) * np.log(x) - x / theta - math.lgamma(k) - k * math.log(theta))


def two_stage_mass(lo: float, med: float, hi: float, uprob: float, a: float, b: float) -> float:
    """P(a <= U < b) for the two-stage uniform."""

    def overlap(x: float, y: float) -> float:
        return max(0.0, min(b, y) - max(a, x))

    return uprob * overlap(lo, med) / (med - lo) + (1 - uprob) * overlap(med, hi) / (hi - med)


@pytest.mark.parametrize(("x", "k"), [(0.5, 1.0), (3.0, 1.0), (0.7, 2.0), (9.0, 2.0)])
def test_gamma_cdf_against_closed_forms(x, k):
    expected = 1 - math.exp(-x) if k == 1.0 else 1 - math.exp(-x) * (1 + x)
    assert gamma_cdf(x, k, 1.0) == pytest.approx(expected, abs=1e-12)
    assert gamma_cdf(2 * x, k, 2.0) == pytest.approx(expected, abs=1e-12)


def test_daily_cycle_weights_average_one_and_peak_in_daytime():
    w = bucket_weights(WHOLE_PARAMS)
    assert w.mean() == pytest.approx(1.0) and (w > 0).all()
    assert np.argmax(w) // 2 in range(8, 18)  # busiest half hour is in working hours


@pytest.fixture(scope="module")
def big():
    return sample(40_000, 128, seed=2024)


def test_size_model(big):
    p = WHOLE_PARAMS
    n = big["nodes"]
    assert n.min() >= 1 and n.max() <= 128
    assert (n == 1).mean() == pytest.approx(p.serial, abs=0.012)
    # Power-of-two sizes: the pow2 share, plus other parallel jobs whose 2**u rounds to one.
    q = sum(
        two_stage_mass(p.low, p.med, p.high, p.uprob, math.log2(2**k - 0.5), math.log2(2**k + 0.5))
        for k in range(1, 8)
    )
    expected = p.pow2 + (1 - p.serial - p.pow2) * q
    assert ((n > 1) & ((n & (n - 1)) == 0)).mean() == pytest.approx(expected, abs=0.012)


def test_runtime_model_for_serial_jobs(big):
    p = WHOLE_PARAMS
    runs = big["runtime"][big["nodes"] == 1]
    prob = p.pa * 1 + p.pb
    t = math.log(404)

    def tail(a: float, b: float) -> float:
        top = gamma_cdf(MAX_LOG_RUNTIME, a, b)
        return (top - gamma_cdf(t, a, b)) / top

    expected = prob * tail(p.a1, p.b1) + (1 - prob) * tail(p.a2, p.b2)
    assert (runs >= 404).mean() == pytest.approx(expected, abs=0.02)
    assert runs.max() <= math.exp(MAX_LOG_RUNTIME)


def test_mean_interarrival(big):
    p = WHOLE_PARAMS
    k, theta = p.aarr * p.arar, p.barr
    x = np.linspace(1e-6, MAX_LOG_INTERARRIVAL, 200_001)
    pdf = gamma_pdf(x, k, theta)
    mass = np.trapezoid(pdf, x)
    mean = np.trapezoid(np.exp(x) * pdf, x) / mass
    sd = math.sqrt(np.trapezoid(np.exp(2 * x) * pdf, x) / mass - mean**2)
    gaps = np.diff(big["submit"])
    tol = 5 * sd / math.sqrt(len(gaps)) + 1.0
    assert gaps.mean() == pytest.approx(mean, abs=tol)


def test_typed_streams_follow_their_parameters():
    d = sample(30_000, 128, seed=7, typed=True)
    for stream, p in ((0, INTERACTIVE_PARAMS), (1, BATCH_PARAMS)):
        n = d["nodes"][d["stream"] == stream]
        assert len(n) > 3000
        tol = 5 * math.sqrt(p.serial * (1 - p.serial) / len(n))
        assert (n == 1).mean() == pytest.approx(p.serial, abs=tol)


def test_machine_size_bounds_jobs():
    for nodes in (16, 256, 1024):
        n = sample(5000, nodes, seed=1)["nodes"]
        assert n.max() <= nodes and n.max() > nodes // 4


def test_generator_is_deterministic_and_seeded():
    a, b, c = (generate_lublin(2000, 128, s) for s in (5, 5, 6))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()
    assert np.array_equal(a.rows, b.rows)
    assert [j.id for j in a] == list(range(1, 2001))
    assert a.header.max_nodes == 128 and a.provenance[0].seed == 5


def test_the_set_packs_arrivals_by_arrival_scale_and_keeps_its_recipe_at_one() -> None:
    import hpcgym.workloads as W
    from hpcgym.errors import WorkloadError
    from hpcgym.workloads.stats import offered_load

    plain = W.load("synthetic/lublin-256-v0", seed=4, n_jobs=300)
    assert [j.submit for j in plain.jobs] == [
        j.submit for j in generate_lublin(300, 256, 4).jobs
    ]  # the default is the model's own arrivals
    packed = W.load("synthetic/lublin-256-v0", seed=4, n_jobs=300, arrival_scale=0.5)
    t0 = plain.jobs[0].submit
    for a, b in zip(plain.jobs, packed.jobs, strict=True):
        assert b.submit == pytest.approx(t0 + (a.submit - t0) * 0.5)
        assert (a.nodes, a.work, a.walltime) == (b.nodes, b.work, b.walltime)
    assert offered_load(packed) == pytest.approx(2 * offered_load(plain))
    for bad in (0, -1.0, float("inf"), float("nan"), "0.8", True):
        with pytest.raises(WorkloadError, match="arrival_scale must be a finite number > 0"):
            W.load("synthetic/lublin-256-v0", seed=4, n_jobs=30, arrival_scale=bad)


def test_the_set_over_estimates_run_times_by_estimate_sigma_and_leaves_them_by_default() -> None:
    import hpcgym.workloads as W
    from hpcgym.errors import WorkloadError

    plain = W.load("synthetic/lublin-256-v0", seed=4, n_jobs=400, arrival_scale=0.8)
    assert all(j.walltime is None for j in plain.jobs)  # schedulers see the run time
    noisy = W.load(
        "synthetic/lublin-256-v0", seed=4, n_jobs=400, arrival_scale=0.8, estimate_sigma=2
    )
    again = W.load(
        "synthetic/lublin-256-v0", seed=4, n_jobs=400, arrival_scale=0.8, estimate_sigma=2
    )
    assert [j.walltime for j in noisy.jobs] == [j.walltime for j in again.jobs]  # seeded
    for a, b in zip(plain.jobs, noisy.jobs, strict=True):  # the same jobs, estimates added
        assert (a.submit, a.nodes, a.work) == (b.submit, b.nodes, b.work)
        assert b.walltime is not None and b.walltime >= max(a.work, 1.0)  # never killed
    ratio = np.array([j.walltime / max(j.work, 1.0) for j in noisy.jobs])
    # exp(2 |Z|): median exp(2 x 0.674) = 3.85, 90th percentile exp(2 x 1.645) = 26.8
    assert 2.5 < np.median(ratio) < 6 and 12 < np.percentile(ratio, 90) < 60
    for bad in (0, -1.0, float("inf"), "2", True):
        with pytest.raises(WorkloadError, match="estimate_sigma must be a finite number > 0"):
            W.load("synthetic/lublin-256-v0", seed=4, n_jobs=30, estimate_sigma=bad)
