"""Does the lean learner learn what sb3-contrib's MaskablePPO learns? Several seeds of each.

Run: ``python benchmarks/lean_distribution.py [--seeds N] [--timesteps T] [--preset NAME ...]
[--write]``. ``LeanMaskablePPO``'s job-scoring shortcuts (numpy rollouts, updates over occupied
slots) compute the same function summed in another order, so its runs are not sb3-contrib's bit
for bit: rounding differences grow into other trajectories. This trains ``--seeds`` seeds with
each learner (``exact``: :class:`~hpcgym.agents.rl.lean_ppo.ExactMaskablePPO`, which gives
sb3-contrib's agent bit for bit and runs faster; ``lean``: the default), interleaved seed by
seed, and compares the learning curves: the mean training-episode return per stretch of
``--timesteps / 4`` steps, over seeds (mean and standard deviation across seeds), and the last
stretch per seed, with two t-tests of lean against exact on the last stretch's per-seed
means (difference lean - exact, its 95% interval and p-value): Welch's (the two learners'
spreads need not be equal) and the paired one (a seed's two runs train on the same episodes).

Each preset's curves go to ``benchmarks/lean_distribution.json`` (``--curves``) as they come,
merged with the presets already there, so one preset can be re-run without losing the others;
the table shows every preset of that file. With ``--write`` it rewrites the
``## Lean learner, learning curves`` section of ``benchmarks/RESULTS.md``. A preset recorded
before the file kept whole curves (``"summary"`` instead of ``"curves"``) shows its published
means and standard deviations, and its test uses the last stretch per seed it kept.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from results_md import write_section
from scipy import stats
from train_throughput import PRESETS, Preset

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.agents.rl.train import TrainConfig, train

HEADING = "## Lean learner, learning curves"
LEARNERS = ("exact", "lean")
STRETCHES = 4
CURVES = Path(__file__).with_name("lean_distribution.json")


def curve(preset: Preset, learner: str, seed: int, timesteps: int) -> list[float]:
    """Mean training-episode return per stretch of the run (episodes by their end step)."""
    with tempfile.TemporaryDirectory(prefix="lean_distribution_") as tmp:
        cfg = TrainConfig(
            env_id=preset.env_id,
            seed=seed,
            timesteps=timesteps,
            hyperparams_file=preset.hyperparams,
            out=tmp,
            tensorboard="",
            learner=learner,
        )
        train(cfg)
        episodes = pd.read_csv(Path(tmp, "episodes.csv"))
    stretch = (episodes["timesteps"] - 1) * STRETCHES // timesteps
    return [float(episodes["return"][stretch == i].mean()) for i in range(STRETCHES)]


def welch(lean: list[float], exact: list[float]) -> str:
    """``lean - exact`` of the means, Welch's 95% interval and two-sided p-value."""
    result = stats.ttest_ind(lean, exact, equal_var=False)
    low, high = result.confidence_interval(0.95)
    diff = statistics.mean(lean) - statistics.mean(exact)
    return f"{diff:+.2f} [{low:+.2f}, {high:+.2f}], p = {result.pvalue:.2f}"


def paired(lean: list[float], exact: list[float]) -> str:
    """The mean of the seeds' ``lean - exact``, its paired-t 95% interval and p-value.

    A seed's two runs train on the same episodes (the envs draw their job windows at reset
    from the seed, whatever the actions), which makes much of the spread across seeds common.
    """
    result = stats.ttest_rel(lean, exact)
    low, high = result.confidence_interval(0.95)
    diff = statistics.mean(a - b for a, b in zip(lean, exact, strict=True))
    return f"{diff:+.2f} [{low:+.2f}, {high:+.2f}], p = {result.pvalue:.2f}"


def stretch_cells(record: dict[str, Any], learner: str) -> list[str]:
    """Each stretch's mean (sd) over seeds."""
    if "curves" not in record:
        return list(record["summary"][learner]["stretches"])
    curves = record["curves"][learner]
    cells = []
    for i in range(STRETCHES):
        values = [c[i] for c in curves]
        cells.append(f"{statistics.mean(values):.2f} ({statistics.stdev(values):.2f})")
    return cells


def last_stretch(record: dict[str, Any], learner: str) -> list[float]:
    """The last stretch's mean return of each seed."""
    if "curves" not in record:
        return [float(v) for v in record["summary"][learner]["last"]]
    return [c[-1] for c in record["curves"][learner]]


def table(records: dict[str, Any]) -> list[str]:
    """Rows: per preset and learner, the curve's mean (sd) over seeds, the last stretch per
    seed, and (on the lean row) Welch's test of lean against exact on the last stretch."""
    rows = [
        "| preset | steps per run | seeds | learner | "
        + " | ".join(f"stretch {i + 1}" for i in range(STRETCHES))
        + " | last stretch per seed | lean - exact, last stretch, Welch: difference [95% CI], p"
        " | the same, paired by seed |",
        "|---|---:|---:|---|" + "---:|" * STRETCHES + "---|---|---|",
    ]
    for name in [n for n in PRESETS if n in records] + [n for n in records if n not in PRESETS]:
        record = records[name]
        seeds = len(last_stretch(record, "exact"))
        for learner in LEARNERS:
            last = ", ".join(f"{v:.2f}" for v in last_stretch(record, learner))
            lean, exact = last_stretch(record, "lean"), last_stretch(record, "exact")
            test = f"{welch(lean, exact)} | {paired(lean, exact)}" if learner == "lean" else " | "
            rows.append(
                f"| {name} | {record['timesteps']:,} | {seeds} | {learner} | "
                f"{' | '.join(stretch_cells(record, learner))} | {last} | {test} |"
            )
    return rows


def load(path: Path) -> dict[str, Any]:
    """The recorded presets (empty without a file)."""
    return dict(json.loads(path.read_text())) if path.exists() else {}


def main() -> int:
    """Train every seed with both learners, interleaved; record, print and optionally write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", action="append", choices=sorted(PRESETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--more",
        action="store_true",
        help="add --seeds seeds after the preset's recorded ones (same --timesteps) to its curves",
    )
    parser.add_argument("--timesteps", type=int, default=49152)
    parser.add_argument("--curves", type=Path, default=CURVES, help="the JSON file of curves")
    parser.add_argument(
        "--table-only", action="store_true", help="train nothing: the table of --curves"
    )
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    for name in [] if args.table_only else args.preset or ["rigid"]:
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        curves: dict[str, list[list[float]]] = {learner: [] for learner in LEARNERS}
        first, earlier = 0, load(args.curves).get(name)
        if args.more:
            if not earlier or "curves" not in earlier or earlier["timesteps"] != args.timesteps:
                sys.exit(f"--more: no recorded curves of {name} at --timesteps {args.timesteps}")
            first = len(earlier["curves"]["exact"])
        for seed in range(first, first + args.seeds):
            for learner in LEARNERS:
                curves[learner].append(curve(PRESETS[name], learner, seed, args.timesteps))
                print(name, learner, seed, curves[learner][-1], flush=True)
        records = load(args.curves)  # re-read: another run may have added a preset meanwhile
        command = (
            f"python benchmarks/lean_distribution.py --preset {name} "
            f"--seeds {args.seeds} --timesteps {args.timesteps}"
        )
        if first:  # seeds first.. appended to the recorded ones
            old = records[name]
            curves = {k: old["curves"][k] + curves[k] for k in LEARNERS}
            command = f"{old['command']}`, then `{command} --more"
            started = old["started"]
        records[name] = {
            "timesteps": args.timesteps,
            "started": started,
            "command": command,
            "curves": curves,
        }
        args.curves.write_text(json.dumps(records, indent=1) + "\n")
    records = load(args.curves)
    runs = [f"{name}: `{r['command']}` (started {r['started']})" for name, r in records.items()]
    text = "\n".join(
        [
            HEADING,
            "",
            "`python benchmarks/lean_distribution.py --table-only --write` over the runs recorded "
            f"in `benchmarks/lean_distribution.json`: {'; '.join(runs)}. Seeds 0 to n-1 of "
            "each learner with the shipped hyperparameters, interleaved seed by seed. *exact*: "
            "`ExactMaskablePPO`, sb3-contrib's MaskablePPO bit for bit (the same saved weights, "
            "`tests/agents/test_lean_ppo.py`); *lean*: `LeanMaskablePPO`, the default, whose "
            "job-scoring shortcuts compute the same function in another order. Mean "
            "training-episode return per quarter of the run (stretch), mean (standard "
            "deviation) over seeds; then the last stretch of each seed, and two t-tests of lean "
            "against exact on those per-seed values (the difference of the means, its 95% "
            "interval and the two-sided p-value): Welch's, and the paired one (a seed's two runs "
            "train on the same episodes: the envs draw their job windows from the seed).",
            "",
            *table(records),
        ]
    )
    print(text)
    if args.write:
        write_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
