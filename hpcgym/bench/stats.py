"""Statistics a reviewer accepts: means and IQMs with stratified-bootstrap intervals, paired wins.

Scores come as one array per *stratum*: a training seed of an agent (a heuristic has a single
stratum), holding one value per test episode. :func:`interval` resamples episodes with
replacement *within* each stratum, independently (``scipy.stats.bootstrap`` with one sample per
stratum), and recomputes the statistic over all strata pooled; the interval is the percentile
interval of those resamples.

When every seed of an agent played the *same* episodes (a benchmark's seed sweep: each member
plays every window), the strata are not independent samples: a hard window is hard for every
seed, so resampling each seed's episodes on its own counts 5 seeds x 30 windows as 150 windows
and narrows the interval by up to sqrt(5). :func:`crossed_interval` is the bootstrap for that
design (seeds crossed with episodes): each resample draws the episodes (columns) with
replacement, the *same* draw for every seed, and the seeds (rows) with replacement, and
recomputes the statistic over the resampled table pooled. Windows are the sampling unit because
they are what a benchmark draws from a trace; training seeds are a sample too, so both are
redrawn. One seed reduces to the plain bootstrap over episodes (:func:`interval`, the same
numbers).

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


def crossed_interval(
    table: np.ndarray | Sequence[Sequence[float]],
    statistic: Statistic = "mean",
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> Estimate:
    """The statistic over a seeds x episodes table, resampling episodes and seeds together.

    Args:
        table: Shape ``(seeds, episodes)``: row s, column e is seed s's score on episode e (the
            same episode in every row).
        statistic: ``"mean"`` or ``"iqm"``.
        confidence: Confidence level of the interval.
        seed: Seed of the resampling (the same seed gives the same interval).
        resamples: Bootstrap resamples.
    """
    m = np.asarray(table, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"a crossed interval needs a (seeds, episodes) table, got shape {m.shape}")
    if m.shape[0] == 1:
        return interval(m[0], statistic, confidence, seed, resamples)
    _strata(m)  # at least 2 episodes, finite scores
    func = _statistic(statistic)
    value = float(func(m.ravel(), axis=-1))
    rng = np.random.default_rng(seed)
    n_seeds, n_episodes = m.shape
    values = np.empty(resamples)
    chunk = max(1, 2_000_000 // m.size)  # bounded memory: chunk x seeds x episodes floats
    for lo in range(0, resamples, chunk):
        k = min(chunk, resamples - lo)
        rows = rng.integers(0, n_seeds, size=(k, n_seeds))
        cols = rng.integers(0, n_episodes, size=(k, n_episodes))
        drawn = m[rows[:, :, None], cols[:, None, :]]  # (k, seeds, episodes)
        values[lo : lo + k] = func(drawn.reshape(k, -1), axis=-1)
    alpha = (1.0 - confidence) / 2.0
    low, high = (float(q) for q in np.quantile(values, [alpha, 1.0 - alpha]))
    return Estimate(value, min(low, value), max(high, value), m.size)


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
