"""What ``hpcgym bench`` writes: tidy tables, a leaderboard and plots, in one run folder.

Files (each written atomically, ``hpcgym.atomic``): ``results.csv`` (one row per episode; also
``results.parquet`` when pyarrow is present), ``jobs.csv`` (one row per job: submit, start and
end times, requested and largest held size, final state, wait, slowdowns; ``jobs.parquet`` too),
``leaderboard.md``, ``intervals.md`` with ``intervals.csv`` (each policy's ranking metric: mean
and IQM with 95% bootstrap intervals, worst case) and ``win_rates.csv`` (paired win rates of
every pair of policies, with intervals), ``failures.csv`` when a cell failed, and under
``plots/`` for each scenario
``<scenario>_slowdown.png`` (per-policy bounded-slowdown distributions over every episode),
``<scenario>_timeline.png`` (one panel per policy: utilization and queue length over the first
episode, sampled at the decision points the policy saw) and ``<scenario>_gantt_<policy>.png``
(the first episode's Gantt chart with resize events).

The job table is the bulk of a large run (16 million rows, 2.5 GB of CSV, for 1,000 traces
and 16 policies): ``job_table="parquet"`` writes only ``jobs.parquet`` (about a fifth of the
size), ``"none"`` neither file nor the slowdown plots. The stored cells keep every job either
way, so a later ``--resume`` of the finished run writes the table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.atomic import atomic_path, write_text
from hpcgym.bench.axes import (
    AXES,
    COUNTS,
    DOMINATED,
    columns,
    dominated_on_response,
    with_axes,
    worst_of,
)
from hpcgym.bench.cells import failures_table, save_png
from hpcgym.bench.csv_text import write_like_arrow
from hpcgym.bench.runner import TaskFailure, TaskOutcome, jobs_table, results_table
from hpcgym.bench.stats import Statistic, crossed_interval, interval, paired_win_rate
from hpcgym.bench.verdicts import verdict_table, verdicts_markdown
from hpcgym.errors import SpecError

JOB_TABLES = ("csv", "parquet", "none")
"""How the job table is written: CSV (and parquet with pyarrow), parquet only, or not at all."""

__all__ = ["COUNTS", "intervals", "leaderboard", "markdown", "win_rates", "write_report"]


def leaderboard(
    results: pd.DataFrame,
    metrics: dict[str, str] | None = None,
    failures: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per scenario and policy: episodes, the objective and the other axes, a rank.

    Columns (``hpcgym.bench.axes``): each scenario's metric (``metrics[scenario]``, default
    ``mean_bsld``) and its worst job, mean response, makespan, utilization, resizes per job,
    other slowdowns, killed, rejected and unfinished jobs (means over episodes), and
    ``dominated_on_response``. Ranked by the scenario's metric (lower is better), except that a
    policy with truncated episodes comes after every policy without them (its metrics cover
    only the jobs that started), and one with failed episodes (``failures``) after those (its
    means cover only the episodes that ran).
    """
    metrics = metrics or {}
    results = with_axes(results)
    cols = columns([*metrics.values(), "mean_bsld"], results.columns)
    groups = results.groupby(["scenario", "policy"], sort=False)
    table = groups[cols].mean()
    table.insert(0, "episodes", groups.size())
    table.insert(1, "truncated", groups["truncated"].sum())
    table = table.reset_index()
    failed = failures if failures is not None and len(failures) else None
    if failed is not None:
        counts = failed.groupby(["scenario", "policy"], sort=False).size()
        have = set(zip(table["scenario"], table["policy"], strict=True))
        missing = [k for k in counts.index if k not in have]
        if missing:
            extra = pd.DataFrame(missing, columns=["scenario", "policy"])
            extra["episodes"] = 0
            extra["truncated"] = 0
            table = pd.concat([table, extra], ignore_index=True)
        keys = list(zip(table["scenario"], table["policy"], strict=True))
        table.insert(4, "failed", [int(counts.get(k, 0)) for k in keys])
    bad = table["failed"] > 0 if "failed" in table else pd.Series(False, index=table.index)
    score = [
        row.get(metrics.get(row["scenario"], "mean_bsld"), math.nan) for _, row in table.iterrows()
    ]
    score = [math.inf if pd.isna(x) else x for x in score]
    idle = _started_no_job(results, table)
    key = list(zip(table["scenario"], idle, bad, table["truncated"] > 0, score, strict=True))
    order = sorted(range(len(table)), key=lambda i: key[i])
    table = table.iloc[order].reset_index(drop=True)
    idle = [idle[i] for i in order]
    ranks = table.groupby("scenario", sort=False).cumcount() + 1
    table.insert(0, "rank", [UNRANKED if i else int(r) for r, i in zip(ranks, idle, strict=True)])
    marks: dict[tuple[str, str], str] = {}
    for scenario, part in table.groupby("scenario", sort=False):
        cut = part["truncated"] > 0
        if "failed" in part:
            cut |= part["failed"] > 0
        skip = part.loc[cut, "policy"]
        rows = results[results["scenario"] == scenario] if len(results) else results
        metric = metrics.get(str(scenario), "mean_bsld")
        found = dominated_on_response(rows, metric, list(part["policy"]), set(skip))
        marks.update({(str(scenario), p): v for p, v in found.items()})
    pairs = zip(table["scenario"], table["policy"], strict=True)
    table[DOMINATED] = [marks.get((str(sc), str(p)), "") for sc, p in pairs]
    return table


UNRANKED = "-"
"""The rank of a policy that started no job in any of its episodes (it has no score to rank)."""


def _started_no_job(results: pd.DataFrame, table: pd.DataFrame) -> list[bool]:
    """Per row of ``table``: whether the policy started no job in any episode it played.

    Its slowdowns cover no job, so it would rank by nothing (first, when benchmarked alone, or
    with every other policy truncated); it is listed last and unranked instead.
    """
    if not {"unstarted", "jobs"} <= set(results.columns) or not len(results):
        return [False] * len(table)
    rejected = results.get("rejected", 0)
    none = results["unstarted"].astype(float) >= results["jobs"].astype(float) - rejected
    idle = none.groupby([results["scenario"], results["policy"]], sort=False).all()
    pairs = zip(table["scenario"], table["policy"], strict=True)
    return [bool(idle.get((sc, p), False)) for sc, p in pairs]


def intervals(results: pd.DataFrame, metrics: dict[str, str] | None = None) -> pd.DataFrame:
    """Per scenario and policy: the ranking metric's mean and IQM with 95% bootstrap intervals.

    Also the worst case (the largest per-episode ``max_bsld``), the episodes behind them and the
    training seeds. A seed sweep whose members all played the same episodes is resampled as a
    seeds x episodes table, episodes and seeds redrawn together (``crossed``:
    :func:`hpcgym.bench.stats.crossed_interval`); a sweep whose members did not (a failed
    episode) falls back to resampling each seed's episodes on its own (``stratified``, narrower
    than it should be: the column ``resampling`` says which); any other policy resamples its
    episodes. A stratum with fewer than 2 episodes leaves the policy without an interval (NaN).
    """
    metrics = metrics or {}
    results = with_axes(results)
    rows = []
    for (scenario, policy), part in results.groupby(["scenario", "policy"], sort=False):
        metric = metrics.get(str(scenario), "mean_bsld")
        crossed = None
        if "train_seed" in part and part["train_seed"].notna().any():
            strata = [g[metric].to_numpy(dtype=float) for _, g in part.groupby("train_seed")]
            crossed = _crossed_table(part, metric)
        else:
            strata = [part[metric].to_numpy(dtype=float)]
        row: dict[str, object] = {"scenario": scenario, "policy": policy, "metric": metric}
        row["episodes"] = sum(len(s) for s in strata)
        row["train_seeds"] = len(strata)
        row["resampling"] = (
            "episodes" if len(strata) == 1 else "crossed" if crossed is not None else "stratified"
        )
        for name in ("mean", "iqm"):
            try:
                stat: Statistic = "mean" if name == "mean" else "iqm"
                est = (
                    crossed_interval(crossed, stat)
                    if crossed is not None
                    else interval(strata, stat)
                )
                row.update({name: est.value, f"{name}_low": est.low, f"{name}_high": est.high})
            except ValueError:  # fewer than 2 episodes, or a metric that is not finite
                row.update({name: math.nan, f"{name}_low": math.nan, f"{name}_high": math.nan})
        row["worst_max_bsld"] = float(part["max_bsld"].max()) if "max_bsld" in part else math.nan
        worst = worst_of(metric)
        row["worst_job"] = float(part[worst].max()) if worst and worst in part else math.nan
        for col in _AXES_SHOWN:
            row[col] = float(part[col].mean()) if col in part else math.nan
        row["truncated"] = int(part["truncated"].sum()) if "truncated" in part else 0
        rows.append(row)
    return pd.DataFrame(rows)


_AXES_SHOWN = (*AXES, "killed", "unfinished")
"""The cost axes ``intervals`` gives beside the objective's intervals (means over episodes)."""


def _crossed_table(part: pd.DataFrame, metric: str) -> np.ndarray | None:
    """A sweep's scores as a (training seeds, episodes) table.

    None when the seeds did not all play the same episodes once each (then the strata are
    resampled independently).
    """
    if "seed" not in part or part.duplicated(["train_seed", "seed"]).any():
        return None
    wide = part.pivot(index="train_seed", columns="seed", values=metric)
    table = wide.to_numpy(dtype=float)
    if np.isnan(table).any() or table.shape[1] < 2:
        return None
    return table


def win_rates(results: pd.DataFrame, metrics: dict[str, str] | None = None) -> pd.DataFrame:
    """Every ordered pair of policies of a scenario: how often the first scores lower.

    Paired by episode seed (the episodes both ran), ties one half, with a 95% interval
    (``hpcgym.bench.stats.paired_win_rate``).
    """
    metrics = metrics or {}
    rows = []
    for scenario, part in results.groupby("scenario", sort=False):
        metric = metrics.get(str(scenario), "mean_bsld")
        wide = part.pivot_table(index="seed", columns="policy", values=metric, sort=False)
        for a in wide.columns:
            for b in wide.columns:
                if a == b:
                    continue
                both = wide[[a, b]].dropna()
                if len(both) < 2:
                    continue
                est = paired_win_rate(both[a].to_numpy(), both[b].to_numpy())
                rows.append(
                    {
                        "scenario": scenario,
                        "policy": a,
                        "versus": b,
                        "metric": metric,
                        "win_rate": est.value,
                        "low": est.low,
                        "high": est.high,
                        "episodes": est.n,
                    }
                )
    return pd.DataFrame(rows)


def statistics_markdown(
    stats_table: pd.DataFrame,
    wins: pd.DataFrame,
    episodes_note: dict[str, str] | None = None,
    best: dict[str, str] | None = None,
) -> str:
    """The interval and win-rate tables as markdown sections, one per scenario.

    ``episodes_note[scenario]`` says how independent its episodes are (printed under its
    heading); without one, the section says that the intervals treat them as independent.
    """
    lines = ["# Intervals and paired win rates", ""]
    lines += [
        "95% percentile-bootstrap intervals over episodes (`hpcgym.bench.stats`); for a seed "
        "sweep, episodes and training seeds are redrawn together (the same episodes for every "
        "seed: a hard window is hard for all of them); the win rate of a row's policy over a "
        "column's is the "
        "share of episodes where it scored lower (ties one half; a sweep's score on an episode "
        "is its mean over training seeds). Intervals that overlap do not separate two policies.",
        "",
    ]
    for scenario, part in stats_table.groupby("scenario", sort=False):
        metric = part["metric"].iloc[0]
        worst_col = worst_of(str(metric)) or "max_bsld"
        note = (episodes_note or {}).get(str(scenario)) or (
            "the intervals treat the episodes as independent samples"
        )
        lines += [f"## {scenario} ({metric})", "", f"Episodes: {note}.", ""]
        if (best or {}).get(str(scenario)):
            lines += [best_heuristic_line((best or {})[str(scenario)]), ""]
        lines += ["| policy | train seeds | episodes | mean [95% CI] | IQM [95% CI] | "]
        lines[-1] += f"worst job ({worst_col}) | mean response | makespan | utilization | "
        lines[-1] += "resizes/job | killed | unfinished | truncated |"
        lines.append("|---|" + "---:|" * 12)
        for _, r in part.iterrows():
            mean = f"{_fmt(r['mean'])} [{_fmt(r['mean_low'])}, {_fmt(r['mean_high'])}]"
            iqm_ = f"{_fmt(r['iqm'])} [{_fmt(r['iqm_low'])}, {_fmt(r['iqm_high'])}]"
            worst = _fmt(r.get("worst_job", r["worst_max_bsld"]))
            seeds = r.get("train_seeds", 1)
            if r.get("resampling") == "stratified":  # members did not play the same episodes
                seeds = f"{seeds} (stratified)"
            axes = " | ".join(_fmt(r.get(c, math.nan)) for c in _AXES_SHOWN)
            cut = int(r.get("truncated", 0))
            lines.append(
                f"| {r['policy']} | {seeds} | {r['episodes']} | {mean} | {iqm_} | {worst} | "
                f"{axes} | {cut} |"
            )
        lines.append("")
        mine = wins[wins["scenario"] == scenario] if len(wins) else wins
        if len(mine):
            names = list(dict.fromkeys(part["policy"]))
            lines += ["| wins over → | " + " | ".join(names) + " |"]
            lines.append("|---|" + "---:|" * len(names))
            cell = {
                (r["policy"], r["versus"]): f"{r['win_rate']:.2f} [{r['low']:.2f}, {r['high']:.2f}]"
                for _, r in mine.iterrows()
            }
            for a in names:
                lines.append(f"| {a} | " + " | ".join(cell.get((a, b), "") for b in names) + " |")
            lines.append("")
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def best_heuristic_line(name: str) -> str:
    """The sentence that names a scenario's best heuristic in the tables."""
    return (
        f"Best heuristic: **{name}**, named on the validation split by the objective before the "
        "test split was played; every goal on this scenario compares with it."
    )


def markdown(board: pd.DataFrame, title: str, best: dict[str, str] | None = None) -> str:
    """The leaderboard as a markdown document, one table per scenario.

    ``best[scenario]`` names the scenario's best heuristic (a line under its heading).
    """
    lines = [f"# {title}", ""]
    for scenario, part in board.groupby("scenario", sort=False):
        cols = [
            "rank",
            "policy",
            *[c for c in part.columns if c not in ("scenario", "rank", "policy")],
        ]
        lines += [f"## {scenario}", ""]
        if (best or {}).get(str(scenario)):
            lines += [best_heuristic_line((best or {})[str(scenario)]), ""]
        lines += ["| " + " | ".join(cols) + " |"]
        lines.append("|" + "|".join("---:" if c != "policy" else "---" for c in cols) + "|")
        for _, row in part.iterrows():
            lines.append("| " + " | ".join(_fmt(row[c]) for c in cols) + " |")
        lines.append("")
        if (part["truncated"] > 0).any():
            lines += [
                "Policies with truncated episodes (cut at the step limit) rank after the others: "
                "their slowdowns cover only the jobs that started; `mean_wait` counts the "
                "jobs that never started up to the cut, `unfinished` counts them.",
                "",
            ]
        if (part["rank"] == UNRANKED).any():
            lines += [
                f"Policies ranked `{UNRANKED}` started no job in any episode: their slowdowns "
                "cover no job, so they have no score to rank.",
                "",
            ]
        if "failed" in part and (part["episodes"] == 0).all():
            lines += ["No results: every episode failed; see `failures.csv`.", ""]
        elif "failed" in part and (part["failed"] > 0).any():
            lines += ["Policies with failed episodes rank last: see `failures.csv`.", ""]
    return "\n".join(lines)


def terminal(board: pd.DataFrame) -> str:
    """The leaderboard as a fixed-width table."""
    view = board.set_index(["scenario", "rank", "policy"])
    return view.to_string(float_format=lambda x: f"{x:,.2f}")


LABEL_CHARS = 12
"""Policy labels are broken into lines of at most this many characters (at ``-``, ``/``,
``@``), so neighbouring names never overlap under the box plots."""


def label_lines(name: str, width: int = LABEL_CHARS) -> str:
    """``name`` broken after ``-``, ``/`` or ``@`` into lines of at most ``width`` characters.

    A piece with no break inside longer than ``width`` is cut there.
    """
    pieces = re.findall(r"[^-/@]*[-/@]?", name)
    lines = [""]
    for piece in filter(None, pieces):
        while len(piece) > width:
            if lines[-1]:
                lines.append("")
            lines[-1], piece = piece[:width], piece[width:]
            lines.append("")
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(line for line in lines if line)


def slowdown_figure(scenario: str, part: pd.DataFrame, cut: set[str]) -> Any:
    """Box plots of every started job's bounded slowdown, one per policy (a matplotlib Figure).

    Long policy names are broken into short lines (:func:`label_lines`) so they never overlap.
    """
    from matplotlib.figure import Figure

    policies = list(dict.fromkeys(part["policy"]))
    data = [part.loc[part["policy"] == p, "bsld"].dropna().to_numpy() for p in policies]
    labels = [label_lines(p) + ("\n(truncated)" if p in cut else "") for p in policies]
    fig = Figure(figsize=(max(6.0, 1.1 * len(policies)), 4.0))
    ax = fig.add_subplot(1, 1, 1)
    ax.boxplot(data, tick_labels=labels, showfliers=True, flierprops={"markersize": 2})
    ax.tick_params(axis="x", labelsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("bounded slowdown per job (log)")
    ax.set_title(f"{scenario}: bounded slowdown of every started job, all episodes", fontsize=10)
    fig.tight_layout()
    return fig


def _save_figure(fig: Any, path: Path) -> Path:
    """``fig`` as a PNG at ``path``, atomically."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    return path


def _slowdown_plot(scenario: str, part: pd.DataFrame, cut: set[str], path: Path) -> Path:
    return _save_figure(slowdown_figure(scenario, part, cut), path)


def _timeline_plot(scenario: str, mine: list[TaskOutcome], path: Path) -> Path:
    return _save_figure(timeline_figure(scenario, mine), path)


def timeline_figure(scenario: str, mine: list[TaskOutcome]) -> Any:
    """Small multiples: one panel per policy, utilization (left) and queue length (right).

    Each panel has its own time axis: episodes of one seed end at very different times (a
    truncated or slow policy runs far longer), and a shared axis squeezed every other panel.
    """
    from matplotlib.figure import Figure

    cols = 2 if len(mine) > 1 else 1
    rows = math.ceil(len(mine) / cols)
    fig = Figure(figsize=(5.0 * cols, 2.2 * rows + 0.6))
    axes = fig.subplots(rows, cols, sharex=False, sharey=True, squeeze=False)
    queue_max = max(float(o.timeline["queued"].max()) for o in mine if o.timeline is not None)
    for k, ax in enumerate(axes.flat):
        if k >= len(mine):
            ax.set_visible(False)
            continue
        o = mine[k]
        tl = o.timeline
        assert tl is not None
        t = (tl["time"] - tl["time"].iloc[0]) / 3600.0
        ax.step(t, tl["utilization"], where="post", color="tab:blue", linewidth=0.9)
        ax.set_ylim(0, 1.05)
        q = ax.twinx()
        q.step(t, tl["queued"], where="post", color="tab:orange", linewidth=0.8)
        q.set_ylim(0, max(1.0, queue_max) * 1.05)
        flag = " (truncated)" if o.row["truncated"] else ""
        ax.set_title(f"{o.row['policy']}{flag}", fontsize=9)
        if k % cols == 0:
            ax.set_ylabel("busy node fraction", color="tab:blue", fontsize=8)
        if k % cols == cols - 1 or k == len(mine) - 1:
            q.set_ylabel("queued jobs", color="tab:orange", fontsize=8)
        else:
            q.tick_params(labelright=False)
        if k >= len(mine) - cols:  # the lowest panel of its column
            ax.set_xlabel("hours since the first decision point", fontsize=8)
    fig.suptitle(
        f"{scenario}, episode seed {mine[0].row['seed']}: busy node fraction (blue) and "
        "queue length (orange)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def _plots(outcomes: Sequence[TaskOutcome], jobs: pd.DataFrame | None, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg", force=False)

    written = []
    for scenario, part in () if jobs is None else jobs.groupby("scenario", sort=False):
        cut = {
            o.row["policy"]
            for o in outcomes
            if o.row["scenario"] == scenario and o.row["truncated"]
        }
        path = folder / f"{scenario}_slowdown.png"
        written.append(_slowdown_plot(str(scenario), part, cut, path))
    detailed = [o for o in outcomes if o.timeline is not None]
    for scenario in dict.fromkeys(o.row["scenario"] for o in detailed):
        mine = [o for o in detailed if o.row["scenario"] == scenario]
        written.append(_timeline_plot(scenario, mine, folder / f"{scenario}_timeline.png"))
        for o in mine:
            if o.gantt is not None:
                path = folder / f"{scenario}_gantt_{o.row['policy']}.png"
                written.append(save_png(path, o.gantt))
    return written


def _write_csv(table: pd.DataFrame, path: Path) -> None:
    """``table`` as CSV, atomically; through pyarrow's writer when present.

    pyarrow's writer is several times faster (``benchmarks/jobs_csv.py``: a 2-million-row job
    table in 6.3 s against 30.3 s, whole process; a 1,000-trace scenario's 16 million job rows
    took pandas 6 minutes). Without pyarrow, :func:`hpcgym.bench.csv_text.write_like_arrow`
    writes the very same text, so two identical runs give identical files on any installation.
    """
    with atomic_path(path) as tmp:
        try:
            import pyarrow as pa
            import pyarrow.csv as pa_csv
        except ImportError:
            write_like_arrow(table, tmp)
            return
        options = pa_csv.WriteOptions(quoting_style="needed")
        pa_csv.write_csv(pa.Table.from_pandas(table, preserve_index=False), str(tmp), options)


def has_pyarrow() -> bool:
    """Whether pyarrow is installed (parquet files, the fast CSV writer)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def check_job_table(job_table: str) -> None:
    """Refuse a ``job_table`` that is not one of :data:`JOB_TABLES` or cannot be written.

    Raises:
        SpecError: An unknown choice, or ``"parquet"`` without pyarrow.
    """
    if job_table not in JOB_TABLES:
        raise SpecError(f"job_table must be one of {', '.join(JOB_TABLES)}, not {job_table!r}")
    if job_table == "parquet" and not has_pyarrow():
        raise SpecError(
            "--job-table parquet needs pyarrow: pip install pyarrow, or use --job-table csv"
        )


def _write_tables(
    results: pd.DataFrame, jobs: pd.DataFrame | None, folder: Path, job_table: str
) -> list[Path]:
    # results.csv is small: pandas writes it and keeps its ".0"s, which readers may rely on
    written = [folder / "results.csv"]
    with atomic_path(written[0]) as tmp:
        results.to_csv(tmp, index=False)
    if jobs is not None and job_table == "csv":
        written.append(folder / "jobs.csv")
        _write_csv(jobs, written[-1])
    tables = [("results", results)]
    if jobs is not None:
        tables.append(("jobs", jobs))
    if not has_pyarrow():
        return written
    for name, table in tables:
        path = folder / f"{name}.parquet"
        with atomic_path(path) as tmp:
            table.to_parquet(tmp, index=False)
        written.append(path)
    return written


def _drop_stale(folder: Path, job_table: str, scenarios: Sequence[str]) -> None:
    """Remove job outputs an earlier report of this folder wrote and this one will not.

    They would describe fewer episodes than the run now holds.
    """
    stale = [] if job_table == "csv" else [folder / "jobs.csv"]
    if job_table == "none":
        stale.append(folder / "jobs.parquet")
        stale += [folder / "plots" / f"{sc}_slowdown.png" for sc in scenarios]
    if not has_pyarrow():  # parquet copies of an earlier report, written with pyarrow
        stale += [folder / "results.parquet", folder / "jobs.parquet"]
    for path in stale:
        path.unlink(missing_ok=True)


def _in_board_order(
    board: pd.DataFrame, spread: pd.DataFrame, wins: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The interval and win-rate tables with their policies in the leaderboard's order."""
    pairs = zip(board["scenario"], board["policy"], strict=True)
    rank = {(str(sc), str(p)): i for i, (sc, p) in enumerate(pairs)}

    def key(sc: pd.Series, p: pd.Series) -> list[int]:
        return [rank.get((str(a), str(b)), len(rank)) for a, b in zip(sc, p, strict=True)]

    if len(spread):
        spread = spread.assign(_k=key(spread["scenario"], spread["policy"]))
        spread = spread.sort_values("_k", kind="stable").drop(columns="_k").reset_index(drop=True)
    if len(wins):
        wins = wins.assign(
            _a=key(wins["scenario"], wins["policy"]), _b=key(wins["scenario"], wins["versus"])
        )
        wins = wins.sort_values(["_a", "_b"], kind="stable").drop(columns=["_a", "_b"])
        wins = wins.reset_index(drop=True)
    return spread, wins


def write_report(
    outcomes: Sequence[TaskOutcome],
    folder: Path,
    title: str,
    metrics: dict[str, str] | None = None,
    failures: Sequence[TaskFailure] = (),
    job_table: str = "csv",
    episodes_note: dict[str, str] | None = None,
    best: dict[str, str] | None = None,
    methods: dict[str, str] | None = None,
) -> tuple[pd.DataFrame, list[Path]]:
    """Write every output into ``folder``; return the leaderboard and the files written.

    The job table is written as ``job_table`` says (one of :data:`JOB_TABLES`); job outputs an
    earlier report of the folder wrote and this one does not are removed. Every table lists
    policies in the leaderboard's order, so a truncated or failed policy is never first.
    ``episodes_note`` says, per scenario, how independent its episodes are (``intervals.md``);
    ``best`` names each scenario's best heuristic (``leaderboard.md`` and ``intervals.md``);
    ``methods`` gives each table name's method (``verdicts.md``, :mod:`hpcgym.bench.verdicts`).
    """
    check_job_table(job_table)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    failed = failures_table(folder, list(failures))
    jobs = jobs_table(outcomes) if outcomes and job_table != "none" else None
    _drop_stale(folder, job_table, list(dict.fromkeys(o.row["scenario"] for o in outcomes)))
    if outcomes:
        results = results_table(outcomes)
        written += _write_tables(results, jobs, folder, job_table)
    else:
        results = pd.DataFrame(columns=["scenario", "policy", "truncated"])
    if len(failed):
        path = folder / "failures.csv"
        with atomic_path(path) as tmp:
            failed.to_csv(tmp, index=False)
        written.append(path)
    board = leaderboard(results, metrics, failed)
    written.append(write_text(folder / "leaderboard.md", markdown(board, title, best) + "\n"))
    if outcomes:
        spread, wins = intervals(results, metrics), win_rates(results, metrics)
        spread, wins = _in_board_order(board, spread, wins)
        for name, table in (("intervals", spread), ("win_rates", wins)):
            path = folder / f"{name}.csv"
            with atomic_path(path) as tmp:
                table.to_csv(tmp, index=False)
            written.append(path)
        text = statistics_markdown(spread, wins, episodes_note, best) + "\n"
        written.append(write_text(folder / "intervals.md", text))
        verdicts = verdict_table(spread, with_axes(results), best or {}, methods)
        if len(verdicts):  # scenarios that name their best heuristic
            with atomic_path(folder / "verdicts.csv") as tmp:
                verdicts.to_csv(tmp, index=False)
            text = verdicts_markdown(verdicts, best or {}) + "\n"
            written += [folder / "verdicts.csv", write_text(folder / "verdicts.md", text)]
    if outcomes:
        written += _plots(outcomes, jobs, folder / "plots")
    return board, written
