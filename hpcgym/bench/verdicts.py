"""Verdicts: every policy of a scenario against the scenario's best heuristic (``verdicts.md``).

A scenario that names its best heuristic (``Scenario.best_heuristic``, chosen on validation
before the test split was played) gets one table: per policy, the method that produced it, the
objective's mean with its 95% interval, the mean response and the worst job beside it, the
paired win rate over the best heuristic on the objective and on mean response, and a verdict
by the **interval rule**:

- ``beats``: the policy's 95% interval of the mean objective lies entirely below the best
  heuristic's (lower is better);
- ``loses``: it lies entirely above;
- ``tie``: the two intervals overlap;
- ``not judged``: the policy left episodes truncated (its objective then covers only the jobs
  that finished, so it is not comparable).

Two non-overlapping 95% intervals are a stricter test than a paired one: a ``beats`` survives
a reviewer who doubts the pairing. A verdict on the objective alone says nothing about the
other axes, so the table keeps them beside it: a policy that ``beats`` while it has the worse
response on most episodes is marked so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.bench.judged import TRIVIAL_RULES
from hpcgym.bench.stats import paired_win_rate
from hpcgym.policies.names import ON_ENV, base_kind

METHODS = ("RL", "search", "planner", "distilled", "heuristic", "trivial", "reference")
"""What produced a policy: an RL algorithm (SB3 / sb3-contrib, imitation then RL included), a
black-box search of a score or order (CMA-ES), a lookahead planner, a network distilled from a
planner, a published heuristic, a trivial reference rule, or a built-in reference policy."""

_ENGINE_METHODS = {
    "score": "search",
    "order": "search",
    "planner": "planner",
    "distilled": "distilled",
}


def method_of(policy: str) -> str:
    """The method (one of :data:`METHODS`) that produced the policy named ``policy``."""
    kind = base_kind(policy)
    if kind == "builtin":
        return "reference"
    if kind in ("baseline", "adapted"):
        return "trivial" if policy.removesuffix(ON_ENV) in TRIVIAL_RULES else "heuristic"
    from hpcgym.agents.cards import is_engine_agent, load_engine_card
    from hpcgym.agents.members import sweep_members

    members = sweep_members(policy)
    path = str(members[0][1]) if members else policy
    if is_engine_agent(path):
        return _ENGINE_METHODS.get(load_engine_card(path).kind, "search")
    return "RL"


def interval_verdict(low: float, high: float, best_low: float, best_high: float) -> str:
    """``beats``, ``loses`` or ``tie`` by the interval rule (module docstring); ``-`` if unknown."""
    if any(math.isnan(x) for x in (low, high, best_low, best_high)):
        return "-"
    if high < best_low:
        return "beats"
    if low > best_high:
        return "loses"
    return "tie"


def _per_episode(results: pd.DataFrame, column: str) -> pd.DataFrame:
    """``column`` per episode seed (rows) and policy (columns), a sweep's seeds averaged."""
    return results.pivot_table(index="seed", columns="policy", values=column, sort=False)


def _win(wide: pd.DataFrame, policy: str, best: str) -> tuple[float, float, float]:
    """The paired win rate of ``policy`` over ``best`` in ``wide`` and its interval (NaN: none)."""
    if policy not in wide or best not in wide:
        return math.nan, math.nan, math.nan
    both = wide[[policy, best]].dropna()
    if len(both) < 2:
        return math.nan, math.nan, math.nan
    est = paired_win_rate(both[policy].to_numpy(), both[best].to_numpy())
    return est.value, est.low, est.high


def verdict_table(
    stats_table: pd.DataFrame,
    results: pd.DataFrame,
    best: dict[str, str],
    methods: dict[str, str] | None = None,
) -> pd.DataFrame:
    """One row per policy of every scenario that names a best heuristic played in the run.

    ``stats_table`` is :func:`hpcgym.bench.report.intervals` of ``results`` (the run's episode
    rows). Scenarios without a named best heuristic, or whose best heuristic did not play, get
    no rows. ``methods`` gives the method of a table's policy name (a label such as
    ``malleable-100k@best`` does not lead back to its files); a name it lacks is read as a
    policy name (:func:`method_of`).
    """
    methods = methods or {}
    rows: list[dict[str, Any]] = []
    for scenario, part in stats_table.groupby("scenario", sort=False):
        name = best.get(str(scenario), "")
        ref = part[part["policy"] == name]
        if not name or not len(ref):
            continue
        ref_row = ref.iloc[0]
        mine = results[results["scenario"] == scenario]
        metric = str(ref_row["metric"])
        objective = _per_episode(mine, metric)
        response = _per_episode(mine, "mean_response") if "mean_response" in mine else None
        for _, r in part.iterrows():
            policy = str(r["policy"])
            row: dict[str, Any] = {"scenario": scenario, "policy": policy, "metric": metric}
            row["method"] = methods.get(policy) or method_of(policy)
            row["train_seeds"] = r.get("train_seeds", 1)
            row["episodes"] = r["episodes"]
            for col in ("mean", "mean_low", "mean_high", "worst_job", "mean_response"):
                row[col] = r.get(col, math.nan)
            row.update(win=math.nan, win_low=math.nan, win_high=math.nan, response_win=math.nan)
            cut = int(r.get("truncated", 0) or 0)
            if policy == name:
                row["verdict"] = "best heuristic"
            elif cut or int(ref_row.get("truncated", 0) or 0):
                # A truncated episode's objective covers only the jobs that finished.
                row["verdict"] = f"not judged ({cut} truncated)" if cut else "-"
            else:
                row["verdict"] = interval_verdict(
                    float(r["mean_low"]),
                    float(r["mean_high"]),
                    float(ref_row["mean_low"]),
                    float(ref_row["mean_high"]),
                )
                win = _win(objective, policy, name)
                row.update(win=win[0], win_low=win[1], win_high=win[2])
                if response is not None:
                    row["response_win"] = _win(response, policy, name)[0]
            rows.append(row)
    return pd.DataFrame(rows)


def _num(value: Any, digits: int = 2) -> str:
    """A table cell: ``-`` for NaN, thousands separated for large values."""
    x = float(value)
    if math.isnan(x):
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.{digits}f}"


def table_lines(part: pd.DataFrame, versus: str = "best") -> list[str]:
    """The Markdown table of one scenario's rows of :func:`verdict_table`.

    ``versus`` names, in the header, the policy the win rates are over (the best heuristic).
    """
    lines = [
        "| policy | method | seeds x episodes | mean [95% CI] | worst job | mean response | "
        f"win rate over {versus} [95% CI] | better response | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for _, r in part.iterrows():
        mean = f"{_num(r['mean'])} [{_num(r['mean_low'])}, {_num(r['mean_high'])}]"
        win = "-"
        if not np.isnan(float(r["win"])):
            win = f"{r['win']:.2f} [{r['win_low']:.2f}, {r['win_high']:.2f}]"
        verdict = str(r["verdict"])
        if verdict == "beats" and float(r["response_win"]) < 0.5:
            verdict += " *(worse response)*"
        seeds = int(r["train_seeds"])
        size = f"{seeds} x {int(r['episodes']) // seeds}" if seeds > 1 else str(r["episodes"])
        lines.append(
            f"| `{r['policy']}` | {r['method']} | {size} | {mean} | {_num(r['worst_job'])} | "
            f"{_num(r['mean_response'])} | {win} | {_num(r['response_win'])} | {verdict} |"
        )
    return lines


def verdicts_markdown(table: pd.DataFrame, best: dict[str, str]) -> str:
    """``verdicts.md``: one section per scenario of :func:`verdict_table`."""
    lines = [
        "# Verdicts against the best heuristic",
        "",
        "Each scenario's best heuristic was named on its validation split before its test split "
        "was played. Verdict by the interval rule: **beats** when a policy's 95% interval of the "
        "mean objective lies entirely below the best heuristic's, **loses** when entirely above, "
        "**tie** when they overlap (lower is better). Win rate: the share of episodes where the "
        "policy scores lower than the best heuristic (ties one half; a sweep's score on an episode "
        "is its mean over training seeds), with its 95% interval; better response: the same share "
        "on mean response. A `beats` with a better response on fewer than half of the episodes is "
        "marked *(worse response)*.",
        "",
    ]
    for scenario, part in table.groupby("scenario", sort=False):
        metric = part["metric"].iloc[0]
        lines += [f"## {scenario} ({metric}), best heuristic `{best[str(scenario)]}`", ""]
        lines += [*table_lines(part), ""]
    return "\n".join(lines)


LEARNED = ("RL", "search", "planner", "distilled")
"""The methods of agents (learned or searched), whose verdicts ``hpcgym bench`` prints."""


def agent_lines(table: pd.DataFrame) -> list[str]:
    """One line per agent of :func:`verdict_table`: its verdict against the best heuristic."""
    lines = []
    for _, r in table[table["method"].isin(LEARNED)].iterrows():
        best = table[(table["scenario"] == r["scenario"]) & (table["verdict"] == "best heuristic")]
        name = str(best["policy"].iloc[0]) if len(best) else "?"
        line = (
            f"{r['scenario']}: {r['policy']} ({r['method']}) {r['verdict']} against {name} by "
            f"the interval rule: mean {_num(r['mean'])} [{_num(r['mean_low'])}, "
            f"{_num(r['mean_high'])}]"
        )
        if len(best):
            b = best.iloc[0]
            line += f" vs {_num(b['mean'])} [{_num(b['mean_low'])}, {_num(b['mean_high'])}]"
        if not np.isnan(float(r["win"])):
            line += f", lower on {float(r['win']):.2f} of the episodes"
        lines.append(line + " (verdicts.md)")
    return lines
