"""What every table of ``hpcgym evaluate`` and ``hpcgym bench`` shows beside the objective.

A policy can win its objective by paying on another axis: the malleable agents that started
every job at its minimum size won mean bounded slowdown while their mean response, makespan and
utilization were worse than MEBF's. So each table shows, per policy, the objective, the worst
job by the same measure, mean response, makespan, utilization, resizes per job and the killed,
rejected and unfinished jobs; and a policy that beats another on the objective while that other
has the lower mean response on most of the episodes both played is marked *dominated on
response* (:func:`dominated_on_response`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

OBJECTIVE_OF_REWARD: Mapping[str, str] = {
    "bsld": "mean_bsld",
    "bstretch": "mean_bounded_stretch",
    "wait": "mean_wait",
    "makespan": "makespan",
    "utilization": "normalized_underutilization",
}
"""The episode summary's column each single-term reward is minus the sum of (ranking key)."""

AXES = ("mean_response", "makespan", "utilization", "resizes_per_job")
"""The cost axes shown beside every objective."""

COUNTS = ("killed", "rejected", "unfinished")
"""Job counts shown beside the axes (means per episode)."""

OTHERS = ("mean_wait", "mean_bsld", "max_bsld", "mean_bounded_stretch")
"""Shown too, after the axes, where they are not the objective."""

DOMINATED = "dominated_on_response"
"""The column that marks a policy dominated on response (empty when it is not)."""


def objective_of(reward: object) -> str:
    """The summary column a preset's reward ranks by (``mean_bsld`` for a weighted sum)."""
    return OBJECTIVE_OF_REWARD.get(reward, "mean_bsld") if isinstance(reward, str) else "mean_bsld"


def worst_of(metric: str) -> str | None:
    """The worst job's column for a per-job mean (``mean_x`` -> ``max_x``), else ``None``."""
    return f"max_{metric[5:]}" if metric.startswith("mean_") else None


def with_axes(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with ``resizes_per_job`` (reconfigurations over the episode's jobs)."""
    if "reconfigurations" not in results or "jobs" not in results:
        return results
    jobs = results["jobs"].astype(float).clip(lower=1.0)
    return results.assign(resizes_per_job=results["reconfigurations"].astype(float) / jobs)


def columns(metrics: Iterable[str], present: Iterable[str]) -> list[str]:
    """The table's metric columns, objectives first, then their worst jobs, axes, the rest."""
    have = set(present)
    metrics = list(dict.fromkeys(metrics))
    worst = [w for m in metrics if (w := worst_of(m)) is not None]
    wanted = [*metrics, *worst, *AXES, *OTHERS, *COUNTS]
    return [c for c in dict.fromkeys(wanted) if c in have]


def dominated_on_response(
    results: pd.DataFrame, metric: str, policies: Sequence[str], skip: Iterable[str] = ()
) -> dict[str, str]:
    """Policies that win ``metric`` over another while that one mostly has the lower response.

    For each policy ``p`` (not in ``skip``, e.g. truncated ones) and each other ``q`` (not in
    ``skip``) whose mean ``metric`` is higher than ``p``'s: the share of the episodes both
    played (paired by ``seed``; ties one half) where ``q``'s mean response is lower. If that
    share is above one half for some ``q``, ``p`` is marked with the ``q`` of the largest share:
    ``"by q (share)"``.
    """
    if "mean_response" not in results or metric not in results or "seed" not in results:
        return {}
    skipped = set(skip)
    live = [p for p in policies if p not in skipped]
    means = results.groupby("policy")[metric].mean()
    resp = results.pivot_table(index="seed", columns="policy", values="mean_response")
    out: dict[str, str] = {}
    for p in live:
        best, best_share = "", 0.5
        for q in live:
            if q == p or not means[p] < means[q] or p not in resp or q not in resp:
                continue
            both = resp[[p, q]].dropna().to_numpy(dtype=float)
            if len(both) == 0:
                continue
            share = float(np.mean((both[:, 1] < both[:, 0]) + 0.5 * (both[:, 1] == both[:, 0])))
            if share > best_share:
                best, best_share = q, share
        if best:
            out[p] = f"by {best} ({best_share:.2f})"
    return out
