"""What ``hpcgym bench`` writes: tidy tables, a leaderboard and plots, in one output folder.

Files: ``results.csv`` (one row per episode; also ``results.parquet`` when pyarrow is present),
``jobs.csv`` (one row per job), ``leaderboard.md``, and under ``plots/`` for each scenario
``<scenario>_slowdown.png`` (per-policy bounded-slowdown distributions over every episode),
``<scenario>_timeline.png`` (utilization and queue length over the first episode, sampled at
the decision points each policy saw) and ``<scenario>_gantt_<policy>.png`` (the first episode's
Gantt chart with resize events).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from hpcgym.bench.evaluate import HEADLINE
from hpcgym.bench.runner import TaskOutcome, jobs_table, results_table


def leaderboard(results: pd.DataFrame, metrics: dict[str, str] | None = None) -> pd.DataFrame:
    """Per scenario and policy: episodes, mean of the headline metrics, and a rank.

    Ranked by each scenario's metric (``metrics[scenario]``, default ``mean_bsld``; lower is
    better), except that policies with truncated episodes come last.
    """
    metrics = metrics or {}
    cols = list(
        dict.fromkeys([c for c in HEADLINE if c in results.columns] + list(metrics.values()))
    )
    groups = results.groupby(["scenario", "policy"], sort=False)
    table = groups[cols].mean()
    table.insert(0, "episodes", groups.size())
    table.insert(1, "truncated", groups["truncated"].sum())
    table = table.reset_index()
    # A truncated episode's metrics cover only the jobs that ended: such policies rank last.
    score = [row[metrics.get(row["scenario"], "mean_bsld")] for _, row in table.iterrows()]
    key = list(zip(table["scenario"], table["truncated"] > 0, score, strict=True))
    order = sorted(range(len(table)), key=lambda i: key[i])
    table = table.iloc[order].reset_index(drop=True)
    table.insert(0, "rank", table.groupby("scenario", sort=False).cumcount() + 1)
    return table


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def markdown(board: pd.DataFrame, title: str) -> str:
    """The leaderboard as a markdown document, one table per scenario."""
    lines = [f"# {title}", ""]
    for scenario, part in board.groupby("scenario", sort=False):
        cols = [
            "rank",
            "policy",
            *[c for c in part.columns if c not in ("scenario", "rank", "policy")],
        ]
        lines += [f"## {scenario}", "", "| " + " | ".join(cols) + " |"]
        lines.append("|" + "|".join("---:" if c != "policy" else "---" for c in cols) + "|")
        for _, row in part.iterrows():
            lines.append("| " + " | ".join(_fmt(row[c]) for c in cols) + " |")
        lines.append("")
    return "\n".join(lines)


def terminal(board: pd.DataFrame) -> str:
    """The leaderboard as a fixed-width table."""
    view = board.set_index(["scenario", "rank", "policy"])
    return view.to_string(float_format=lambda x: f"{x:,.2f}")


def _plots(outcomes: Sequence[TaskOutcome], jobs: pd.DataFrame, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for scenario, part in jobs.groupby("scenario", sort=False):
        policies = list(dict.fromkeys(part["policy"]))
        data = [part.loc[part["policy"] == p, "bsld"].dropna().to_numpy() for p in policies]
        cut = {
            o.row["policy"]
            for o in outcomes
            if o.row["scenario"] == scenario and o.row["truncated"]
        }
        labels = [f"{p}\n(truncated)" if p in cut else p for p in policies]
        fig = Figure(figsize=(max(6.0, 1.1 * len(policies)), 4.0))
        ax = fig.add_subplot(1, 1, 1)
        ax.boxplot(data, tick_labels=labels, showfliers=True, flierprops={"markersize": 2})
        ax.set_yscale("log")
        ax.set_ylabel("bounded slowdown (per ended job, all episodes)")
        ax.set_title(str(scenario))
        fig.tight_layout()
        path = folder / f"{scenario}_slowdown.png"
        fig.savefig(path, dpi=100)
        written.append(path)
    detailed = [o for o in outcomes if o.timeline is not None]
    for scenario in dict.fromkeys(o.row["scenario"] for o in detailed):
        mine = [o for o in detailed if o.row["scenario"] == scenario]
        fig = Figure(figsize=(9.0, 5.0))
        ax_u, ax_q = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
        for o in mine:
            tl = o.timeline
            assert tl is not None
            t = (tl["time"] - tl["time"].iloc[0]) / 3600.0
            ax_u.step(t, tl["utilization"], where="post", label=o.row["policy"], linewidth=0.9)
            ax_q.step(t, tl["queued"], where="post", label=o.row["policy"], linewidth=0.9)
        ax_u.set_ylabel("busy node fraction")
        ax_q.set_ylabel("queued jobs")
        ax_q.set_xlabel(f"hours since the first decision point (seed {mine[0].row['seed']})")
        ax_u.legend(fontsize=7, ncol=4, loc="lower right")
        ax_u.set_title(str(scenario))
        fig.tight_layout()
        path = folder / f"{scenario}_timeline.png"
        fig.savefig(path, dpi=100)
        written.append(path)
        for o in mine:
            if o.gantt is None:
                continue
            import matplotlib.pyplot as plt

            path = folder / f"{scenario}_gantt_{o.row['policy']}.png"
            plt.imsave(path, o.gantt)
            written.append(path)
    return written


def write_report(
    outcomes: Sequence[TaskOutcome],
    folder: Path,
    title: str,
    metrics: dict[str, str] | None = None,
) -> tuple[pd.DataFrame, list[Path]]:
    """Write every output into ``folder``; return the leaderboard and the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    results = results_table(outcomes)
    jobs = jobs_table(outcomes)
    written = [folder / "results.csv", folder / "jobs.csv", folder / "leaderboard.md"]
    results.to_csv(written[0], index=False)
    jobs.to_csv(written[1], index=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        results.to_parquet(folder / "results.parquet", index=False)
        written.append(folder / "results.parquet")
    board = leaderboard(results, metrics)
    written[2].write_text(markdown(board, title) + "\n")
    written += _plots(outcomes, jobs, folder / "plots")
    return board, written
