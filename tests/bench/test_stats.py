from __future__ import annotations

import numpy as np
import pytest

from hpcgym.bench.stats import Estimate, interval, iqm, paired_win_rate


def test_iqm_is_the_mean_of_the_middle_half():
    x = np.array([100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -50.0])
    # sorted: -50 1 2 3 4 5 6 100 -> middle half 2 3 4 5
    assert float(iqm(x)) == pytest.approx(3.5)


@pytest.mark.parametrize("statistic", ["mean", "iqm"])
def test_interval_contains_the_estimate_and_shrinks_with_more_episodes(statistic):
    # Nested samples, 9x more episodes each time: the interval narrows about 3x.
    pool = np.random.default_rng(1).lognormal(3.0, 0.5, size=810)
    widths = []
    for n in (10, 90, 810):
        x = pool[:n]
        est = interval(x, statistic)
        assert est.low <= est.value <= est.high
        assert est.n == n
        widths.append(est.high - est.low)
    assert widths[0] > widths[1] > widths[2]


def test_interval_is_deterministic_and_pools_strata():
    strata = [[1.0, 2.0, 3.0, 4.0], [10.0, 11.0, 12.0]]
    a, b = interval(strata, seed=3), interval(strata, seed=3)
    assert a == b
    assert a.value == pytest.approx(np.mean([1, 2, 3, 4, 10, 11, 12]))
    assert a.n == 7


def test_stratified_resampling_keeps_each_seed_in_every_resample():
    # Two seeds far apart: an unstratified bootstrap could draw all episodes from one seed, a
    # stratified one cannot, so the pooled mean stays between the seeds' means.
    strata = np.array([[0.0, 0.1, 0.2, 0.3], [100.0, 100.1, 100.2, 100.3]])
    est = interval(strata, resamples=4000)
    assert 40.0 < est.low <= est.high < 60.0


def test_constant_scores_give_a_point_interval():
    est = interval(np.full(12, 7.0))
    assert (est.low, est.value, est.high) == (7.0, 7.0, 7.0)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        interval([1.0])
    with pytest.raises(ValueError, match="finite"):
        interval([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="statistic"):
        interval([1.0, 2.0], "median")
    with pytest.raises(ValueError, match="same episodes"):
        paired_win_rate([1.0, 2.0], [1.0, 2.0, 3.0])


def test_paired_win_rate_counts_ties_as_half():
    a = [1.0, 2.0, 3.0, 4.0]
    b = [2.0, 2.0, 1.0, 5.0]
    est = paired_win_rate(a, b)
    assert est.value == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0


def test_a_clearly_better_policy_has_a_win_interval_above_one_half():
    rng = np.random.default_rng(7)
    base = rng.lognormal(3.0, 1.0, size=60)
    better = base * rng.uniform(0.6, 0.95, size=60)
    noisy = base * rng.uniform(0.5, 1.5, size=60)
    assert paired_win_rate(better, base).low > 0.5
    est = paired_win_rate(noisy, base)
    assert est.low < 0.5 < est.high


def test_overlap():
    assert Estimate(1, 0, 2, 5).overlaps(Estimate(3, 2, 4, 5))
    assert not Estimate(1, 0, 1.9, 5).overlaps(Estimate(3, 2, 4, 5))


def test_report_intervals_and_win_rates_from_a_results_table():
    import pandas as pd

    from hpcgym.bench.report import intervals, statistics_markdown, win_rates

    rows = []
    for seed in range(10):
        rows.append(
            {
                "scenario": "s",
                "policy": "a",
                "seed": seed,
                "mean_bsld": 1.0 + seed % 3,
                "max_bsld": 5.0 + seed,
            }
        )
        rows.append(
            {
                "scenario": "s",
                "policy": "b",
                "seed": seed,
                "mean_bsld": 2.0 + seed % 3,
                "max_bsld": 9.0,
            }
        )
    results = pd.DataFrame(rows)
    spread = intervals(results)
    a = spread[spread["policy"] == "a"].iloc[0]
    assert a["episodes"] == 10 and a["mean_low"] <= a["mean"] <= a["mean_high"]
    assert a["mean"] == pytest.approx(results[results.policy == "a"]["mean_bsld"].mean())
    assert a["worst_max_bsld"] == 14.0
    wins = win_rates(results)
    ab = wins[(wins.policy == "a") & (wins.versus == "b")].iloc[0]
    ba = wins[(wins.policy == "b") & (wins.versus == "a")].iloc[0]
    assert ab["win_rate"] == 1.0 and ba["win_rate"] == 0.0 and ab["episodes"] == 10
    text = statistics_markdown(spread, wins)
    assert "| a | 1 | 10 |" in text and "1.00 [1.00, 1.00]" in text
