"""The verdict tables of ``docs/results.md``: every judged preset, its agents, its best heuristic.

Run: ``python studies/verdicts.py [--preset NAME ...] [--scenario NAME ...] [--out DIR]
[--write]``. For each preset below it runs, as a user would, ``hpcgym bench --scenario S
--with-defaults --policy A ...`` on each of its judged scenarios (every heuristic and reference
rule of the scenario plus the shipped agents; with ``--scenario``, only the named ones, the
others' finished runs shown as they are), resumable (``--resume``: an interrupted study
continues where it stopped), and reads the run's ``verdicts.csv`` (``hpcgym.bench.verdicts``:
method, objective interval, mean response, worst job, win rate over the scenario's best
heuristic named on validation, verdict by the interval rule). It prints one table per preset;
with ``--write`` it rewrites the section ``## Verdicts per preset`` of ``docs/results.md``. Each
table keeps the agents, the best heuristic, and every other policy whose verdict is not
``loses``.

The agents are the shipped ones (``agents/``, their cards say how each was trained); a scenario
marked *cross-trace* plays a trace the agents never trained on.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hpcgym.bench import scenarios
from hpcgym.bench.judged import episodes_note
from hpcgym.bench.policy_names import policy_label
from hpcgym.bench.verdicts import table_lines, verdict_table
from hpcgym.envs.episodes import env_config

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results.md"
HEADING = "## Verdicts per preset"


@dataclass(frozen=True)
class Judged:
    """A scenario a preset is judged on, and whether its trace is new to the agents."""

    scenario: str
    cross_trace: bool = False
    also: tuple[str, ...] = ()
    """Policies kept in the table whatever their verdict (a mode's own best rules, where the
    best heuristic is a rule the agents' mode cannot play)."""


@dataclass(frozen=True)
class Preset:
    """A judged preset: its scenarios and the shipped agents played on them."""

    name: str
    scenarios: tuple[Judged, ...]
    agents: tuple[str, ...]


# Reserve mode's own rules (RLScheduler's F1 and SJF): the judged best heuristic of these
# scenarios is a rule the agents' mode cannot play (backfilling, or EASY), so the tables also
# show what the agents face inside their mode.
MODE_RULES = ("f1-reserve", "sjf-reserve")
MODE_RULES_BF = ("f1-reserve-bf", "sjf-reserve-bf")

PRESETS = {
    p.name: p
    for p in (
        Preset(
            "malleable",
            (Judged("malleable-small-v3"), Judged("malleable-small-kth-v1", cross_trace=True)),
            ("agents/malleable-100k@best", "agents/malleable-bc-bstretch@best"),
        ),
        Preset(
            "rigid-easy",
            (
                Judged("rigid-synlublin-large-v0"),
                Judged("rigid-sdsc-sp2-v1", cross_trace=True),
                Judged("rigid-kth-v1", cross_trace=True),
            ),
            ("agents/rigid-lublin-kind@best", "agents/score-synlublin-easy"),
        ),
        Preset(
            "rlscheduler-reserve",
            (
                Judged("rlsched-synlublin-large-v0", also=MODE_RULES),
                Judged("rlsched-sdsc-sp2-cross-v0", cross_trace=True, also=MODE_RULES),
            ),
            (
                "agents/rlsched-nobf-1m-relf1@best",
                "agents/score-rlsched-nobf",
                "agents/score-synlublin-nobf",
            ),
        ),
        Preset(
            "rlscheduler-reserve-bf",
            (
                Judged("rlsched-synlublin-bf-large-v0", also=MODE_RULES_BF),
                Judged("rlsched-sdsc-sp2-bf-cross-v0", cross_trace=True, also=MODE_RULES_BF),
            ),
            (
                "agents/rlsched-bf-1m-relf1@best",
                "agents/score-rlsched-bf",
                "agents/score-synlublin-bf",
                "agents/distilled-bf",
                "agents/distilled-dagger-bf",
            ),
        ),
        Preset(
            "evolving",
            (
                Judged("evolving-klein-large-v1"),
                Judged("evolving-klein-wide-v0", cross_trace=True),
            ),
            ("agents/evolving-bc-infx-kind@best", "agents/evolving-order"),
        ),
        Preset("shared", (Judged("shared-dfrs-v1"),), ()),
        Preset("multicluster", (Judged("multicluster-koala-v1"),), ()),
    )
}
"""Every judged preset. Planner agents are left out: a forward play per decision makes their
large tests cost hours; their published-sequence results stay in the tables above."""


def bench_argv(scenario: str, agents: tuple[str, ...], out: Path) -> list[str]:
    """The ``hpcgym bench`` command of one scenario (printed beside its table)."""
    argv = ["hpcgym", "bench", "--scenario", scenario, "--with-defaults"]
    for agent in agents:
        argv += ["--policy", agent]
    return [*argv, "--run-dir", str(out / scenario)]


def run_scenario(scenario: str, agents: tuple[str, ...], out: Path) -> pd.DataFrame:
    """Run (or finish) the scenario's bench and return its verdicts table."""
    argv = bench_argv(scenario, agents, out)
    run_dir = ROOT / out / scenario
    set_aside_if_other_agents(run_dir, agents)
    resume = ["--resume"] if (run_dir / "run.json").exists() else []
    command = [str(Path(sys.executable).parent / "hpcgym"), *argv[1:], "--no-progress", *resume]
    print("$ " + shlex.join(argv), flush=True)
    done = subprocess.run(command, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"{shlex.join(argv)} failed ({done.returncode}); rerun to resume it")
    return pd.read_csv(run_dir / "verdicts.csv")


def set_aside_if_other_agents(run_dir: Path, agents: tuple[str, ...]) -> None:
    """Move a stored run of other agents (the preset gained or lost one) out of the way.

    ``hpcgym bench --resume`` refuses a run of another configuration; the old run is kept,
    renamed ``<scenario>.<its start time>``, and the scenario is played again in full.
    """
    record = run_dir / "run.json"
    if not record.is_file():
        return
    stored = json.loads(record.read_text())
    command = stored.get("command", [])
    played = {command[i + 1] for i, arg in enumerate(command[:-1]) if arg == "--policy"}
    if played == set(agents):
        return
    stamp = str(stored.get("started", "unknown")).replace(":", "")
    aside = run_dir.with_name(f"{run_dir.name}.{stamp}")
    run_dir.rename(aside)
    print(f"{run_dir.name}: the stored run played other agents; kept as {aside}", flush=True)


def agent_labels(agents: tuple[str, ...]) -> set[str]:
    """The labels the agents' rows carry in a run's tables (``malleable-100k@best``)."""
    return {policy_label(str(ROOT / agent)) for agent in agents}


def kept(table: pd.DataFrame, agents: tuple[str, ...], also: tuple[str, ...] = ()) -> pd.DataFrame:
    """The agents and ``also`` (any verdict), the best heuristic, what beats or ties it."""
    shown = agent_labels(agents) | set(also)
    keep = table["policy"].isin(shown) | (table["verdict"] != "loses")
    return table[keep]


def finished(scenario: str, agents: tuple[str, ...], out: Path) -> pd.DataFrame | None:
    """The scenario's verdicts table if its run finished with every agent, else None."""
    path = ROOT / out / scenario / "verdicts.csv"
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    return table if agent_labels(agents) <= set(table["policy"]) else None


def markdown(preset: Preset, tables: dict[str, pd.DataFrame | None], out: Path) -> str:
    """One preset's section: per scenario, its command and its table (or that it is not run)."""
    lines = [f"### {preset.name}", ""]
    if not preset.agents:
        lines += ["No agent is trained for this preset yet: the heuristics only.", ""]
    for judged in preset.scenarios:
        whole = tables.get(judged.scenario)
        if whole is None:
            lines += [
                f"**`{judged.scenario}`**: not run yet. Its command:",
                "",
                "```bash",
                f"python studies/verdicts.py --scenario {judged.scenario} --write",
                "```",
                "",
            ]
            continue
        table = kept(whole, preset.agents, judged.also)
        best = table.loc[table["verdict"] == "best heuristic", "policy"]
        cross = " (cross-trace: a trace the agents never trained on)" if judged.cross_trace else ""
        metric = table["metric"].iloc[0]
        sc = scenarios.get(judged.scenario)
        split = env_config(sc.env_id, dict(sc.env_kwargs)).split
        lines += [
            f"**`{judged.scenario}`**{cross}: objective `{metric}`, best heuristic on validation "
            f"`{best.iloc[0] if len(best) else '?'}`; episodes: {episodes_note(sc)} (split "
            f"`{split}`).",
            "",
            "```bash",
            shlex.join(bench_argv(judged.scenario, preset.agents, out)),
            "```",
            "",
        ]
        lines += table_lines(table)
        lines.append("")
        if judged.also:
            lines += mode_lines(judged, preset.agents, ROOT / out / judged.scenario)
    return "\n".join(lines)


def mode_lines(judged: Judged, agents: tuple[str, ...], run_dir: Path) -> list[str]:
    """The agents against their mode's F1 (``judged.also[0]``), judged as against the best.

    Where the best heuristic is a rule the agents' mode cannot play, the question the issue's
    goal asks is whether they beat F1 inside the mode ("below F1 on the large fresh test"): the
    same interval rule and paired win rates, from the run's own tables, with F1 in the best
    heuristic's place. F1 was named by that goal before the test was played.
    """
    rule = judged.also[0]
    try:
        stats = pd.read_csv(run_dir / "intervals.csv")
        results = pd.read_csv(run_dir / "results.csv")
        methods = pd.read_csv(run_dir / "verdicts.csv").set_index("policy")["method"].to_dict()
    except FileNotFoundError:
        return []
    table = verdict_table(stats, results, {judged.scenario: rule}, methods)
    if not len(table):
        return []
    table = table[table["policy"].isin(agent_labels(agents) | {rule})].copy()
    table.loc[table["policy"] == rule, "verdict"] = "reference"
    table = pd.concat([table[table["policy"] == rule], table[table["policy"] != rule]])
    return [
        f"Inside the agents' mode, against `{rule}` (F1, the reference the issue's goal names): "
        "the same interval rule and paired win rates, with F1 in the best heuristic's place.",
        "",
        *table_lines(table, f"`{rule}`"),
        "",
    ]


def write_section(text: str) -> None:
    """Replace (or add before the first ``## `` after the title) the section in results.md."""
    from hpcgym.atomic import write_text

    old = RESULTS.read_text()
    start = old.find(HEADING + "\n")
    if start >= 0:
        end = old.find("\n## ", start + len(HEADING))
        new = old[:start] + text.rstrip("\n") + "\n" + (old[end:] if end >= 0 else "")
    else:
        first = old.find("\n## ")
        new = old[: first + 1] + text.rstrip("\n") + "\n\n" + old[first + 1 :]
    write_text(RESULTS, new)


def main() -> None:
    """Run the chosen presets' scenarios, print their tables, write them with ``--write``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", action="append", choices=sorted(PRESETS), help="(default: all)")
    ap.add_argument("--out", type=Path, default=Path("hpcgym-bench") / "verdicts")
    ap.add_argument(
        "--write",
        action="store_true",
        help="rewrite the docs/results.md section after each preset, from every finished run",
    )
    ap.add_argument(
        "--scenario",
        action="append",
        choices=sorted({j.scenario for p in PRESETS.values() for j in p.scenarios}),
        help="run only this judged scenario of the chosen presets (repeatable; the others' "
        "finished runs are shown as they are)",
    )
    args = ap.parse_args()
    chosen = [PRESETS[n] for n in (args.preset or PRESETS)]
    for preset in chosen:
        judged = [j.scenario for j in preset.scenarios]
        if args.scenario and not set(args.scenario) & set(judged):
            continue
        tables = {
            s: run_scenario(s, preset.agents, args.out)
            if not args.scenario or s in args.scenario
            else finished(s, preset.agents, args.out)
            for s in judged
        }
        print(markdown(preset, tables, args.out), flush=True)
        if args.write:
            write_all(args.out)


def write_all(out: Path) -> None:
    """Rewrite the results.md section: every preset, from its finished runs in ``out``."""
    sections = []
    for preset in PRESETS.values():
        tables = {j.scenario: finished(j.scenario, preset.agents, out) for j in preset.scenarios}
        sections.append(markdown(preset, tables, out))
    intro = f"{HEADING}\n\n" + " ".join(
        [
            "`python studies/verdicts.py --write` runs each judged preset's scenarios with",
            "every heuristic and the shipped agents and keeps, per scenario, the agents, the",
            "best heuristic named on validation before the test was played, and every policy",
            "that does not lose to it. Verdict by the interval rule (`docs/bench.md`,",
            '"Verdicts"): **beats** when the 95% interval of the mean lies entirely below the',
            "best heuristic's, **loses** when entirely above, **tie** otherwise. Method: RL",
            "(SB3 / sb3-contrib, imitation then RL included), search (CMA-ES), planner,",
            "distilled, heuristic, trivial, reference. In reserve mode, where the best",
            "heuristic is a rule the agents' mode cannot play, a second table judges the agents",
            "the same way against the mode's F1. A preset whose runs have not finished says so,",
            "with the command that runs them.\n",
        ]
    )
    write_section(intro + "\n" + "\n".join(sections))


if __name__ == "__main__":
    main()
