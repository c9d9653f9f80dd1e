"""Does the lean learner learn what sb3-contrib's MaskablePPO learns? Several seeds of each.

Run: ``python benchmarks/lean_distribution.py [--seeds N] [--timesteps T] [--preset NAME ...]
[--write]``. ``LeanMaskablePPO``'s job-scoring shortcuts (numpy rollouts, updates over occupied
slots) compute the same function summed in another order, so its runs are not sb3-contrib's bit
for bit: rounding differences grow into other trajectories. This trains ``--seeds`` seeds with
each learner (``exact``: :class:`~hpcgym.agents.rl.lean_ppo.ExactMaskablePPO`, which gives
sb3-contrib's agent bit for bit and runs faster; ``lean``: the default) and compares the learning
curves: the mean training-episode return per stretch of ``--timesteps / 4`` steps, over seeds
(mean and standard deviation across seeds), and the last stretch per seed. With ``--write`` it
rewrites the ``## Lean learner, learning curves`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from results_md import write_section
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


def table(name: str, curves: dict[str, list[list[float]]], timesteps: int) -> list[str]:
    """Rows: per learner, the curve's mean (sd) over seeds, then the last stretch per seed."""
    rows = []
    for learner in LEARNERS:
        cells = []
        for i in range(STRETCHES):
            values = [c[i] for c in curves[learner]]
            cells.append(f"{statistics.mean(values):.2f} ({statistics.stdev(values):.2f})")
        last = ", ".join(f"{c[-1]:.2f}" for c in curves[learner])
        rows.append(f"| {name} | {learner} | {' | '.join(cells)} | {last} |")
    return rows


def main() -> int:
    """Train every seed with both learners, interleaved; print and optionally write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", action="append", choices=sorted(PRESETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--timesteps", type=int, default=49152)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--curves", default=str(CURVES), help="JSON file the curves go to")
    args = parser.parse_args()
    step = args.timesteps // STRETCHES
    rows = [
        "| preset | learner | "
        + " | ".join(f"steps {i * step:,}-{(i + 1) * step:,}" for i in range(STRETCHES))
        + " | last stretch per seed |",
        "|---|---|" + "---:|" * STRETCHES + "---|",
    ]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for name in args.preset or ["rigid"]:
        curves: dict[str, list[list[float]]] = {learner: [] for learner in LEARNERS}
        for seed in range(args.seeds):
            for learner in LEARNERS:
                curves[learner].append(curve(PRESETS[name], learner, seed, args.timesteps))
                print(name, learner, seed, curves[learner][-1], flush=True)
                saved = json.loads(Path(args.curves).read_text()) if Path(args.curves).exists() else {}
                saved[name] = {"timesteps": args.timesteps, "started": started, "curves": curves}
                Path(args.curves).write_text(json.dumps(saved, indent=1) + "\n")
        rows += table(name, curves, args.timesteps)
    command = "python benchmarks/lean_distribution.py" + "".join(
        f" --preset {n}" for n in args.preset or []
    )
    command += f" --seeds {args.seeds} --timesteps {args.timesteps}"
    text = "\n".join(
        [
            HEADING,
            "",
            f"`{command} --write` (started {started}): seeds 0-{args.seeds - 1} of each learner "
            "with the shipped hyperparameters. *exact*: `ExactMaskablePPO`, sb3-contrib's "
            "MaskablePPO bit for bit (the same saved weights, `tests/agents/test_lean_ppo.py`); "
            "*lean*: `LeanMaskablePPO`, the default, whose job-scoring shortcuts compute the "
            "same function in another order. Mean training-episode return per stretch of the "
            "run, mean (standard deviation) over seeds; then the last stretch of each seed.",
            "",
            *rows,
        ]
    )
    print(text)
    if args.write:
        write_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
