from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcgym.bench.report import intervals, statistics_markdown, win_rates
from hpcgym.bench.stats import Estimate, crossed_interval, interval, iqm, paired_win_rate


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


@pytest.mark.parametrize("statistic", ["mean", "iqm"])
def test_seeds_that_replay_the_same_episodes_add_no_episodes(statistic):
    # Five seeds with the same score on each of 30 windows: the windows' spread is all there is,
    # so the crossed interval is as wide as one seed's; resampling each seed's episodes on its
    # own (the stratified interval) would count 150 windows and be about sqrt(5) narrower.
    x = np.random.default_rng(2).lognormal(3.0, 0.8, size=30)
    table = np.tile(x, (5, 1))
    one = interval(x, statistic)
    crossed = crossed_interval(table, statistic)
    stratified = interval(table, statistic)
    width = one.high - one.low
    assert crossed.value == pytest.approx(one.value, rel=0.01)  # IQM trims 37 of 150, 7 of 30
    assert crossed.high - crossed.low == pytest.approx(width, rel=0.15)
    assert stratified.high - stratified.low < 0.6 * width
    assert crossed.n == 150


def test_crossed_interval_redraws_seeds():
    # Two seeds far apart on identical windows: redrawing seeds may pick one seed twice, so the
    # interval reaches towards both seeds' means; episodes alone could not move it.
    table = np.array([[0.0, 0.1, 0.2, 0.3], [100.0, 100.1, 100.2, 100.3]])
    est = crossed_interval(table, resamples=4000)
    assert est.low < 1.0 and est.high > 99.0
    assert crossed_interval(table, seed=5) == crossed_interval(table, seed=5)


def test_crossed_interval_of_one_seed_is_the_episode_bootstrap():
    x = np.random.default_rng(3).normal(10.0, 2.0, size=20)
    assert crossed_interval(x[None, :], "iqm") == interval(x, "iqm")


def test_crossed_interval_refuses_bad_tables():
    with pytest.raises(ValueError, match="seeds, episodes"):
        crossed_interval(np.ones(5))
    with pytest.raises(ValueError, match="at least 2"):
        crossed_interval(np.ones((3, 1)))
    with pytest.raises(ValueError, match="finite"):
        crossed_interval(np.array([[1.0, 2.0], [np.inf, 1.0]]))


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


def _sweep_rows(seeds: list[int], episodes: list[int]) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    hard = {e: rng.lognormal(3.0, 1.0) for e in episodes}  # a window's difficulty, shared
    rows = [
        {
            "scenario": "s",
            "policy": "sweep",
            "train_seed": k,
            "seed": e,
            "mean_bsld": hard[e] * (1.0 + 0.01 * k),
            "max_bsld": 10.0,
        }
        for k in seeds
        for e in episodes
    ]
    return pd.DataFrame(rows)


def test_a_sweep_that_played_the_same_episodes_is_resampled_crossed():
    results = _sweep_rows([0, 1, 2, 3, 4], list(range(1000, 1030)))
    row = intervals(results).iloc[0]
    assert row["resampling"] == "crossed" and row["train_seeds"] == 5 and row["episodes"] == 150
    table = results.pivot(index="train_seed", columns="seed", values="mean_bsld").to_numpy()
    est = crossed_interval(table, "iqm")
    assert (row["iqm_low"], row["iqm"], row["iqm_high"]) == (est.low, est.value, est.high)
    # Rows in another order give the same table, so the same interval.
    shuffled = intervals(results.sample(frac=1.0, random_state=1)).iloc[0]
    assert shuffled["iqm_low"] == row["iqm_low"] and shuffled["iqm_high"] == row["iqm_high"]


def test_a_sweep_with_a_missing_episode_falls_back_to_strata_and_says_so():
    results = _sweep_rows([0, 1], list(range(1000, 1010))).iloc[1:]  # seed 0 lacks episode 1000
    spread = intervals(results)
    row = spread.iloc[0]
    assert row["resampling"] == "stratified" and row["episodes"] == 19
    strata = [g["mean_bsld"].to_numpy() for _, g in results.groupby("train_seed")]
    assert row["mean_low"] == interval(strata, "mean").low
    assert "| sweep | 2 (stratified) | 19 |" in statistics_markdown(spread, win_rates(results))
