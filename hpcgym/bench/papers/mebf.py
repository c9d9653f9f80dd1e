"""Paper check: MEBF (malleable EASY backfilling) against EBF on malleable SDSC SP2 windows.

Reproduces the qualitative results of the MEBF paper (``docs/papers.md``, "MEBF") on the
``elastic/sdsc-sp2-mebf-v0`` set: windows of 1,000 and 5,000 consecutive SDSC SP2 jobs from a
seeded start, arrivals as recorded ("normal") or compressed to 75% ("intensive"), MEBF
malleability annotation (min pref/2, max 5 pref, ``PowerLaw(rho)`` speedups, redistribution
costs). The engine does not kill at walltime: a shrunk job legitimately outlives its request.

Experiments (each averaged over seeds, i.e. windows):

- ``arrivals``: EBF vs Handoff, Spare, Intensive; 1K and 5K, normal and intensive, mixed rho.
- ``scalability``: the same at low, medium and high scalability, intensive arrivals.
- ``malleable``: 40, 60, 80 and 100% malleable jobs, 1K, medium scalability, both arrivals.
- ``variants``: basic, shrink+ and expand+ with each policy, 1K and 5K intensive.
- ``cost``: the variants with reconfiguration costs 100 and 1000 times the annotation's
  (which are fractions of a second), 1K intensive, medium scalability.
- ``error``: the jobs' true rho raised by 0.1, MEBF predicting with the true rho ("exact") or
  the old one ("biased", the paper's model error), 1K intensive.

Metrics: mean turnaround (``mean_response``) and mean slowdown, taken per job as turnaround over
the job's static execution time (its work at the preferred size) bounded below by 10 s
(``mean_bounded_stretch``); improvements are ``(EBF - MEBF) / EBF``.

The ``ablation`` experiment (``run``, behind ``hpcgym papers mebf``) tests the issue-21
gaps: each headline under today's settings, the paper's reading (reconfiguration cost at the
paper's scale, resizes at phase boundaries, run times from the scalability model for EBF and
MEBF alike: ``hpcgym.baselines.mebf.settings``) and each of the three toggled alone, over
20 1K intensive windows (``--ablation-windows`` with ``--experiments --only ablation``), with
95% bootstrap intervals over windows.

    hpcgym papers mebf [--quick] [--workers 2] [--out results.md]          # the ablation
    hpcgym papers mebf --experiments [--quick] [--csv runs.csv] [--out results.md]
    hpcgym papers mebf --experiments --only ablation --ablation-windows 20
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from hpcgym.atomic import write_text
from hpcgym.baselines import make
from hpcgym.baselines.mebf.settings import PAPER_COST_SCALE, model_runtime, scale_reconfig
from hpcgym.bench.papers import run_all, tabulated
from hpcgym.bench.stats import interval
from hpcgym.sim import JobSpec, PowerLaw, SimConfig, Simulator
from hpcgym.workloads import load

SET = "elastic/sdsc-sp2-mebf-v0"
CONFIG = SimConfig(kill_on_walltime=False)
POLICIES = ("handoff", "spare", "intensive")


@dataclass(frozen=True)
class Case:
    """One simulation: a workload of the set, a scheduler and its options."""

    experiment: str
    n_jobs: int
    seed: int
    intensive: bool
    scalability: str
    malleable: float
    scheduler: str
    variant: str = "basic"
    policy: str = ""
    cost_scale: float = 1.0
    rho_bias: float = 0.0
    model: str = "exact"
    resize_at: str = "now"
    static: str = "trace"
    setting: str = ""

    @property
    def label(self) -> str:
        """``EBF`` or the MEBF policy (and variant when not basic)."""
        if self.scheduler == "easy":
            return "EBF"
        name = self.policy.capitalize()
        return name if self.variant == "basic" else f"{name} {self.variant}"


def _schedulers(variants: Iterable[str] = ("basic",)) -> list[tuple[str, str, str]]:
    out = [("easy", "basic", "")]
    out += [("mebf", v, p) for v in variants for p in POLICIES]
    return out


def cases(seeds_1k: int, seeds_5k: int) -> list[Case]:
    """Every simulation of the check."""
    out: list[Case] = []

    def add(
        exp: str,
        n: int,
        intensive: bool,
        scal: str,
        mall: float,
        scheds: list,
        cost: float = 1,
        bias: float = 0,
        model: str = "exact",
    ) -> None:
        for seed in range(seeds_1k if n == 1000 else seeds_5k):
            for sched, variant, policy in scheds:
                args = (exp, n, seed, intensive, scal, mall, sched, variant, policy)
                out.append(Case(*args, cost, bias, model))

    for n, intensive in itertools.product((1000, 5000), (False, True)):
        add("arrivals", n, intensive, "mixed", 1.0, _schedulers())
    for n, scal in itertools.product((1000, 5000), ("low", "medium", "high")):
        add("scalability", n, True, scal, 1.0, _schedulers())
    for mall, intensive in itertools.product((0.4, 0.6, 0.8, 1.0), (False, True)):
        add("malleable", 1000, intensive, "medium", mall, _schedulers())
    for n, scal in itertools.product((1000, 5000), ("low", "medium", "high")):
        add("variants", n, True, scal, 1.0, _schedulers(("basic", "shrink+", "expand+")))
    for cost in (100.0, 1000.0):
        add("cost", 1000, True, "medium", 1.0, _schedulers(("basic", "shrink+", "expand+")), cost)
    for bias, model in ((0.0, "exact"), (0.1, "exact"), (0.1, "biased")):
        add("error", 1000, True, "mixed", 1.0, _schedulers(), bias=bias, model=model)
    return out


def simulate(case: Case) -> dict[str, Any]:
    """Run one case; its parameters and metrics as a flat record."""
    w = load(
        SET,
        seed=case.seed,
        n_jobs=case.n_jobs,
        malleable=case.malleable,
        scalability=case.scalability,
        intensive=case.intensive,
    )
    jobs = w.jobs
    if case.cost_scale != 1.0:
        jobs = tuple(scale_reconfig(spec, case.cost_scale) for spec in jobs)
    if case.static == "model":
        jobs = _model_runtimes(case, jobs)
    kwargs: dict[str, Any] = {}
    if case.scheduler != "easy":
        kwargs.update(variant=case.variant, policy=case.policy, resize_at=case.resize_at)
    if case.rho_bias:
        # The jobs scale worse than rho says; a "biased" model still predicts with the old rho
        # (the paper's model error), an "exact" one knows the truth.
        truth = tuple(_biased(spec, case.rho_bias) for spec in jobs)
        if case.scheduler != "easy" and case.model == "biased":
            kwargs["model"] = {s.id: s.speedup for s in jobs}
        jobs = truth
    sim = Simulator(w.platform, jobs, CONFIG)
    sched = make(case.scheduler, **kwargs)
    t0 = time.perf_counter()
    sched.run(sim)
    s = sim.result().summary
    rec: dict[str, Any] = {**case.__dict__, "label": case.label}
    rec.update(
        turnaround=s["mean_response"],
        wait=s["mean_wait"],
        slowdown=s["mean_bounded_stretch"],
        bsld=s["mean_bsld"],
        utilization=s["utilization"],
        reconfigurations=s["reconfigurations"],
        seconds=time.perf_counter() - t0,
    )
    for key, value in getattr(sched, "stats", {}).items():
        rec[key] = value
    return rec


def _model_runtimes(case: Case, jobs: tuple[JobSpec, ...]) -> tuple[JobSpec, ...]:
    """Every job's run time from the scalability model (``settings.model_runtime``).

    Rigid jobs take the rho the annotation drew for them: it draws one per job whatever the
    malleable share, so the fully malleable annotation of the same window holds it.
    """
    if case.malleable >= 1.0:
        return tuple(model_runtime(spec) for spec in jobs)
    full = load(
        SET,
        seed=case.seed,
        n_jobs=case.n_jobs,
        malleable=1.0,
        scalability=case.scalability,
        intensive=case.intensive,
    )
    rho = {s.id: s.speedup.rho for s in full.jobs if isinstance(s.speedup, PowerLaw)}
    return tuple(model_runtime(spec, rho.get(spec.id, 0.0)) for spec in jobs)


def _biased(spec: JobSpec, bias: float) -> JobSpec:
    model = spec.speedup
    if not isinstance(model, PowerLaw):
        return spec
    return replace(spec, speedup=PowerLaw(min(1.0, model.rho + bias)))


def improvement_table(df: pd.DataFrame, by: list[str], metric: str) -> pd.DataFrame:
    """Mean ``metric`` of EBF and % improvement of every MEBF label, per group of ``by``."""
    mean = df.groupby([*by, "label"])[metric].mean().unstack("label")
    ebf = mean.pop("EBF")
    table = mean.rsub(ebf, axis=0).div(ebf, axis=0).mul(100).round(1)
    table.insert(0, f"EBF {metric}", ebf.round(0 if metric == "turnaround" else 1))
    return table


def markdown(table: pd.DataFrame) -> str:
    """``table`` (with its index) as a Markdown table; no optional dependency needed."""
    flat = table.reset_index()
    head = [str(c) for c in flat.columns]

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"
        return str(v)

    rows = [[cell(v) for v in row] for row in flat.itertuples(index=False)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Per policy and variant: in how many windows it beats basic, and the mean difference."""
    key = ["experiment", "n_jobs", "scalability", "cost_scale", "seed", "policy"]
    mebf = df[df["scheduler"] == "mebf"].set_index([*key, "variant"])["slowdown"].unstack()
    rows = []
    for policy, group in mebf.groupby(level="policy"):
        for variant in ("shrink+", "expand+"):
            diff = (group[variant] - group["basic"]) / group["basic"] * 100
            rows.append(
                {
                    "policy": policy,
                    "variant": variant,
                    "windows": len(diff),
                    "better than basic": int((diff < 0).sum()),
                    "mean slowdown change %": round(float(diff.mean()), 1),
                    "median %": round(float(diff.median()), 1),
                }
            )
    return pd.DataFrame(rows).set_index(["policy", "variant"])


def wins(df: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: in how many (window, setting, MEBF configuration) runs MEBF beats EBF."""
    key = ["experiment", "n_jobs", "intensive", "scalability", "malleable", "cost_scale"]
    key += ["rho_bias", "model", "seed"]
    ebf = df[df["scheduler"] == "easy"][[*key, "turnaround", "slowdown"]]
    ebf = ebf.rename(columns={"turnaround": "turnaround_ebf", "slowdown": "slowdown_ebf"})
    mebf = df[df["scheduler"] == "mebf"].merge(ebf, on=key, how="left", validate="many_to_one")
    rows = []
    for exp, g in mebf.groupby("experiment", sort=False):
        rows.append(
            {
                "experiment": exp,
                "runs": len(g),
                "turnaround better": int((g["turnaround"] < g["turnaround_ebf"]).sum()),
                "slowdown better": int((g["slowdown"] < g["slowdown_ebf"]).sum()),
            }
        )
    return pd.DataFrame(rows).set_index("experiment")


def _tables(df: pd.DataFrame) -> str:
    """The ablation's tables (if it ran), then the other experiments' (if any ran)."""
    abl = df["experiment"].isin(["ablation", "ablation-40"])
    parts = []
    if abl.any():
        parts.append(ablation_report(df[abl]))
    if (~abl).any():
        parts.append(report(df[~abl]))
    return "\n".join(parts)


def report(df: pd.DataFrame) -> str:
    """The check's tables in Markdown."""
    parts = []
    specs = [
        ("arrivals", ["n_jobs", "intensive"], ("turnaround", "slowdown")),
        ("scalability", ["n_jobs", "scalability"], ("turnaround", "slowdown")),
        ("malleable", ["intensive", "malleable"], ("turnaround", "slowdown")),
        ("variants", ["n_jobs", "scalability"], ("slowdown", "turnaround", "wait")),
        ("cost", ["cost_scale"], ("slowdown", "turnaround")),
        ("error", ["rho_bias", "model"], ("turnaround", "slowdown")),
    ]
    for exp, by, metrics in specs:
        sub = df[df["experiment"] == exp]
        if sub.empty:
            continue
        seeds = sub.groupby("n_jobs")["seed"].nunique().to_dict()
        for metric in metrics:
            table = improvement_table(sub, by, metric)
            parts.append(f"### {exp}: {metric} (% better than EBF; seeds per size {seeds})\n")
            parts.append(markdown(table) + "\n")
    variants = df[df["experiment"].isin(["variants", "cost"])]
    if not variants.empty:
        parts.append("### variants against basic, window by window\n")
        parts.append(markdown(paired(variants)) + "\n")
    parts.append("### MEBF against EBF, window by window\n")
    parts.append(markdown(wins(df)) + "\n")
    counts = df[df["scheduler"] == "mebf"].groupby("label")[
        ["starts", "backfills", "shrinks", "expands"]
    ]
    parts.append("### events per run (mean over every MEBF run)\n")
    parts.append(markdown(counts.mean().round(0)) + "\n")
    return "\n".join(parts)


# ------------------------------------------------------------------------------- ablation
SETTINGS: dict[str, dict[str, Any]] = {
    "today": {"cost_scale": 1.0, "resize_at": "now", "static": "trace"},
    "paper": {"cost_scale": PAPER_COST_SCALE, "resize_at": "phase", "static": "model"},
    "cost x100 only": {"cost_scale": PAPER_COST_SCALE, "resize_at": "now", "static": "trace"},
    "phase only": {"cost_scale": 1.0, "resize_at": "phase", "static": "trace"},
    "rho run times only": {"cost_scale": 1.0, "resize_at": "now", "static": "model"},
}
"""The ablation's settings: today's, the paper's reading, and each of its three parts alone."""

ABLATION_WINDOWS = 20
"""1K intensive windows of the full ablation (``--quick``: ``QUICK_WINDOWS``)."""
QUICK_WINDOWS = 4


def ablation_cases(windows: int, settings: Iterable[str] = tuple(SETTINGS)) -> list[Case]:
    """The ablation's simulations: per setting and window, the headline and the 40% runs.

    Headline: 1K intensive windows, every job malleable, mixed rho; EBF, the three policies
    basic and expand+. Rigid share: the same windows with 40% malleable jobs, medium rho (the
    paper's Fig. 12 workload); EBF and the three policies basic.
    """
    out: list[Case] = []
    for name in settings:
        opts = SETTINGS[name]
        for seed in range(windows):
            for sched, variant, policy in _schedulers(("basic", "expand+")):
                out.append(
                    Case(
                        "ablation",
                        1000,
                        seed,
                        True,
                        "mixed",
                        1.0,
                        sched,
                        variant,
                        policy,
                        **opts,
                        setting=name,
                    )
                )
            for sched, variant, policy in _schedulers():
                out.append(
                    Case(
                        "ablation-40",
                        1000,
                        seed,
                        True,
                        "medium",
                        0.4,
                        sched,
                        variant,
                        policy,
                        **opts,
                        setting=name,
                    )
                )
    return out


def _gains(df: pd.DataFrame, experiment: str, metric: str) -> pd.DataFrame:
    """Per setting and window: % improvement of every MEBF label over EBF in ``metric``."""
    sub = df[df["experiment"] == experiment]
    wide = sub.pivot_table(index=["setting", "seed"], columns="label", values=metric)
    ebf = wide.pop("EBF")
    return wide.rsub(ebf, axis=0).div(ebf, axis=0).mul(100)


@dataclass(frozen=True)
class Headline:
    """One row of the ablation table: a per-window quantity and what the paper reports."""

    label: str
    paper: str
    value: float | None = None
    """The paper's number, when it gives one (the verdict asks for it inside the interval)."""
    sign: int = 0
    """The paper's direction when it gives no number: -1 below zero, +1 above."""


def headlines(df: pd.DataFrame) -> list[tuple[Headline, pd.Series]]:
    """Each headline with its per-(setting, window) values."""
    rows: list[tuple[Headline, pd.Series]] = []
    tat = _gains(df, "ablation", "turnaround")
    sld = _gains(df, "ablation", "slowdown")
    paper_tat = {"Handoff": 40.0, "Intensive": 33.0, "Spare": 37.0}
    for name, value in paper_tat.items():
        h = Headline(f"turnaround gain over EBF, {name}, 1K intensive (%)", f"{value:g}", value)
        rows.append((h, tat[name]))
    for name in paper_tat:
        h = Headline(
            f"slowdown gain, {name} expand+ minus basic (points)", "< 0 (expand+ worse)", sign=-1
        )
        rows.append((h, sld[f"{name} expand+"] - sld[name]))
    rigid = _gains(df, "ablation-40", "turnaround")
    for name in paper_tat:
        h = Headline(f"turnaround gain at 40% malleable, {name} (%)", "2.1", 2.1)
        rows.append((h, rigid[name]))
    return rows


def verdict(h: Headline, low: float, high: float) -> str:
    """``reproduced`` only when the paper's value (or direction) lies inside the interval."""
    if h.value is not None:
        if low <= h.value <= high:
            return "reproduced"
        return "above" if low > h.value else "below"
    if (h.sign < 0 and high < 0) or (h.sign > 0 and low > 0):
        return "reproduced"
    if low <= 0 <= high:
        return "no direction"
    return "reversed"


def ablation_report(df: pd.DataFrame, preview: bool = False) -> str:
    """The ablation table: each headline per setting, mean over windows [95% interval].

    ``preview`` (the quick check's few windows): each verdict is marked as a preview, and a
    note says that only the full check's sample can give one (``docs/papers.md`` records the
    full check's verdicts, which differ from the quick ones on some rows).
    """
    settings = [s for s in SETTINGS if s in set(df["setting"])]
    windows = df[df["experiment"] == "ablation"]["seed"].nunique()
    word = f"preview ({windows} windows)" if preview else "verdict"
    head = ["headline", "paper", *settings, *(f"{word}, {s}" for s in settings)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for h, values in headlines(df):
        cells, verdicts = [], []
        for setting in settings:
            x = values.xs(setting, level="setting").dropna().to_numpy(float)
            est = interval(x)
            cells.append(f"{est.value:.1f} [{est.low:.1f}, {est.high:.1f}]")
            said = verdict(h, est.low, est.high)
            verdicts.append(f"{said}?" if preview else said)
        lines.append("| " + " | ".join([h.label, h.paper, *cells, *verdicts]) + " |")
    parts = [
        f"### MEBF ablation: {windows} windows of 1,000 jobs, intensive arrivals; "
        "mean over windows [95% bootstrap interval]\n",
        "\n".join(lines) + "\n",
    ]
    if preview:
        parts.append(
            f"Quick check: {windows} windows give intervals too wide to decide, so each verdict "
            "above is a preview (marked ?), not a result; on some rows the full check "
            f"({ABLATION_WINDOWS} windows, `hpcgym papers mebf` without --quick) reaches "
            "another verdict, which docs/papers.md records.\n"
        )
    sub = df[df["experiment"] == "ablation"]
    ctx = sub.groupby(["setting", "label"])[["turnaround", "slowdown", "shrinks", "expands"]]
    ctx_table = ctx.mean().unstack("label")
    rows = []
    for setting in settings:
        row: dict[str, Any] = {"setting": setting}
        for label in ("EBF", "Handoff", "Handoff expand+"):
            row[f"{label} turnaround"] = ctx_table.loc[setting, ("turnaround", label)]
        for label in ("Handoff", "Handoff expand+"):
            row[f"{label} shrinks"] = ctx_table.loc[setting, ("shrinks", label)]
            row[f"{label} expands"] = ctx_table.loc[setting, ("expands", label)]
        rows.append(row)
    parts.append("### MEBF ablation: means per run (all jobs malleable, mixed rho)\n")
    parts.append(markdown(pd.DataFrame(rows).set_index("setting")) + "\n")
    return "\n".join(parts)


def _simulate_all(todo: list[Case], workers: int) -> pd.DataFrame:
    return pd.DataFrame(run_all(simulate, todo, workers))


def run(quick: bool = False, out: Path | None = None, workers: int = 2) -> str:
    """The ``hpcgym papers mebf`` check: the ablation over 20 windows (``quick``: 4).

    Returns the Markdown tables (written to ``out`` too when given).
    """
    text = _ablation(quick, workers)
    if out is not None:
        write_text(out, text)
    return text


def _ablation(quick: bool, workers: int, csv: str | None = None) -> str:
    todo = ablation_cases(QUICK_WINDOWS if quick else ABLATION_WINDOWS)
    report = partial(ablation_report, preview=quick)
    return tabulated(_simulate_all, todo, workers, report, csv)


def command(args: argparse.Namespace) -> str:
    """``hpcgym papers mebf [options]`` (``hpcgym.bench.papers.cli``).

    The check, or the experiments (``--experiments``), or the tables of records (``--from-csv``).
    """
    if args.from_csv:
        df = pd.concat(pd.read_csv(f) for f in args.from_csv)
        # Records from before a column existed have its default.
        df = df.fillna({"cost_scale": 1.0, "rho_bias": 0.0, "model": "exact"})
        text = _tables(df)
    elif not args.experiments:
        text = _ablation(args.quick, args.workers, args.csv)
    else:
        todo = cases(1, 1) if args.quick else cases(args.seeds_1k, args.seeds_5k)
        if args.only:
            todo = [c for c in todo if c.experiment in args.only]
            if "ablation" in args.only:
                windows = QUICK_WINDOWS if args.quick else args.ablation_windows
                todo += ablation_cases(windows or ABLATION_WINDOWS)
        text = tabulated(_simulate_all, todo, args.workers, _tables, args.csv)
    if args.out:
        write_text(args.out, text)
    return text


if __name__ == "__main__":
    from hpcgym.bench.papers.cli import alias

    raise SystemExit(alias("mebf"))
