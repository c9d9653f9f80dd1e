"""Statistics a reviewer accepts: means and IQMs with stratified-bootstrap intervals, paired wins.

Scores come as one array per *stratum*: a training seed of an agent (a heuristic has a single
stratum), holding one value per test episode. The bootstrap resamples episodes with replacement
*within* each stratum, independently (``scipy.stats.bootstrap`` with one sample per stratum),
and recomputes the statistic over all strata pooled; the interval is the percentile interval
of those resamples. The episodes are the sampling unit because they are what a benchmark draws
from a trace; seeds are strata, so that each keeps its weight in every resample.

The paired win rate of A over B counts, on the episodes both ran, the fraction where A's score
is lower (better) than B's, a tie counting one half; its interval resamples the episodes'
win indicators, so both policies' scores of an episode stay together (a paired bootstrap).

The interquartile mean (IQM) is the mean of the middle 50% of the values
(``scipy.stats.trim_mean(x, 0.25)``): robust to a few extreme episodes, yet using more of the
data than the median.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

Statistic = Literal["mean", "iqm"]

RESAMPLES = 2000
"""Bootstrap resamples per interval."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its confidence interval.

    Attributes:
        value: The statistic on the data.
        low: Lower end of the interval.
        high: Upper end of the interval.
        n: Observations behind it.
    """

    value: float
    low: float
    high: float
    n: int

    def overlaps(self, other: Estimate) -> bool:
        """Whether the two intervals share a point."""
        return self.low <= other.high and other.low <= self.high


def iqm(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """The interquartile mean along ``axis``."""
    return np.asarray(stats.trim_mean(x, 0.25, axis=axis))


def _statistic(kind: Statistic):  # type: ignore[no-untyped-def]
    if kind == "mean":
        return np.mean
    if kind == "iqm":
        return iqm
    raise ValueError(f"statistic must be 'mean' or 'iqm', got {kind!r}")


def _strata(
    scores: np.ndarray | Sequence[Sequence[float]] | Sequence[np.ndarray],
) -> list[np.ndarray]:
    groups: Any = [scores] if np.ndim(scores[0]) == 0 else scores  # flat: one stratum
    strata = [np.asarray(s, dtype=float).ravel() for s in groups]
    if not strata or any(len(s) < 2 for s in strata):
        raise ValueError("each stratum needs at least 2 episodes for an interval")
    if any(not np.isfinite(s).all() for s in strata):
        raise ValueError("scores must be finite")
    return strata


def interval(
    scores: np.ndarray | Sequence[Sequence[float]] | Sequence[np.ndarray],
    statistic: Statistic = "mean",
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> Estimate:
    """The statistic over all scores, with a stratified-bootstrap percentile interval.

    Args:
        scores: One episode score per entry: a 1-D array (one stratum), a 2-D array of shape
            ``(strata, episodes)``, or a list of per-stratum sequences (lengths may differ).
        statistic: ``"mean"`` or ``"iqm"``.
        confidence: Confidence level of the interval.
        seed: Seed of the resampling (the same seed gives the same interval).
        resamples: Bootstrap resamples.
    """
    strata = _strata(scores)
    func = _statistic(statistic)
    pooled = np.concatenate(strata)
    value = float(func(pooled, axis=-1))

    def pooled_stat(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(func(np.concatenate(samples, axis=axis), axis=axis))

    res = stats.bootstrap(
        tuple(strata),
        pooled_stat,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    # Percentiles of resampled statistics may miss the point estimate by rounding when every
    # resample is equal (all scores the same); the interval then is that point.
    return Estimate(value, min(low, value), max(high, value), len(pooled))


def paired_win_rate(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> Estimate:
    """How often ``a`` scores lower (better) than ``b`` on the same episode, ties one half.

    ``a`` and ``b`` hold one score per episode, in the same episode order (average a policy's
    seeds per episode first, or pass one seed's scores).
    """
    x, y = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired scores need the same episodes, got {x.size} and {y.size}")
    if x.size < 2:
        raise ValueError("a paired win rate needs at least 2 episodes")
    wins = (x < y) + 0.5 * (x == y)
    # The mean of the win indicators, resampled by episode: both scores of an episode together.
    return interval(wins, "mean", confidence, seed, resamples)
