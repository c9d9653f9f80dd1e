"""Training throughput: MaskablePPO steps per CPU-second, sb3-contrib's learner against hpcgym's.

Run: ``python benchmarks/train_throughput.py [--timesteps N] [--rounds R] [--preset NAME ...]
[--write]``. Each run is ``hpcgym.agents.rl.train.train`` with the shipped hyperparameters, in this
process; the three learners (``--learner sb3``: sb3-contrib's ``MaskablePPO``; ``exact``:
:class:`hpcgym.agents.rl.lean_ppo.ExactMaskablePPO`; ``lean``:
:class:`hpcgym.agents.rl.lean_ppo.LeanMaskablePPO`, the default) run interleaved, round by round
in alternating order (sb3, exact, lean, then lean, exact, sb3, ...), so a drift of the shared
machine's speed falls on all. Every run of a preset has the same seed: the same work; ``exact``
must give sb3-contrib's agent bit for bit (checked here on the saved weights), ``lean`` the same
agent in distribution (``benchmarks/lean_distribution.py``), the same one at every run.

Reported per preset: steps per CPU-second (``time.process_time`` of the process, which the
other work on a shared machine disturbs far less than wall time) of each learner, the ratio
sb3 / learner of each round's CPU times (median, min and max), and the CPU split of the sb3 and
lean runs (env: inside the VecEnv; updates: ``train()``; rollout learner: the rest), as
``benchmarks/train_split.py`` splits it. With ``--write`` it rewrites the
``## Training throughput`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import torch
from results_md import build_note, write_section

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.agents.rl.train import HYPERPARAMS, TrainConfig, load_hyperparams, train

HEADING = "## Training throughput"
LEARNERS = ("sb3", "exact", "lean")


@dataclass(frozen=True)
class Preset:
    """A training setting: an env id and its hyperparameter file (``None``: the shipped one)."""

    name: str
    env_id: str
    hyperparams: str | None = None


PRESETS = {
    p.name: p
    for p in (
        Preset("rigid", "hpcgym/Rigid-v0"),
        Preset("malleable", "hpcgym/Malleable-v0"),
        Preset("rlsched-reserve", "hpcgym/Rigid-v0", str(HYPERPARAMS / "maskable_ppo_rlsched.yml")),
    )
}


@dataclass(frozen=True)
class Run:
    """One training's CPU seconds, their split, and a digest of the agent's weights."""

    steps: int
    cpu: float
    env_cpu: float
    update_cpu: float
    weights: str

    @property
    def steps_per_cpu_second(self) -> float:
        """Training steps per CPU-second of the whole ``learn`` (envs included)."""
        return self.steps / self.cpu


def one_run(preset: Preset, learner: str, timesteps: int, seed: int = 0) -> Run:
    """Train once with ``learner``; its time split and the digest of its weights."""
    with tempfile.TemporaryDirectory(prefix="train_throughput_") as tmp:
        cfg = TrainConfig(
            env_id=preset.env_id,
            seed=seed,
            timesteps=timesteps,
            hyperparams_file=preset.hyperparams,
            out=tmp,
            tensorboard="",
            learner=learner,
        )
        r = train(cfg)
        digest = hashlib.sha256(Path(tmp, "agent.safetensors").read_bytes()).hexdigest()
    return Run(r.timesteps, r.cpu_seconds, r.env_cpu_seconds, r.update_cpu_seconds, digest)


def warm(preset: Preset) -> None:
    """Load the preset's workload (cached per process) and train briefly with both learners."""
    kwargs = load_hyperparams("maskable_ppo", preset.env_id, preset.hyperparams)
    env = gym.make(preset.env_id, **dict(kwargs.get("env_kwargs") or {}))
    env.reset(seed=0)
    env.close()
    for learner in LEARNERS:
        one_run(preset, learner, 1024, seed=1)


def measure(preset: Preset, timesteps: int, rounds: int) -> dict[str, list[Run]]:
    """``rounds`` runs of each learner, interleaved in alternating order."""
    runs: dict[str, list[Run]] = {learner: [] for learner in LEARNERS}
    for i in range(rounds):
        for learner in LEARNERS if i % 2 == 0 else LEARNERS[::-1]:
            runs[learner].append(one_run(preset, learner, timesteps))
    return runs


def _split(runs: list[Run]) -> str:
    """Median env / updates / rollout-learner CPU seconds of ``runs``."""
    median = statistics.median
    return (
        f"{median([r.env_cpu for r in runs]):.1f} / {median([r.update_cpu for r in runs]):.1f} / "
        f"{median([r.cpu - r.env_cpu - r.update_cpu for r in runs]):.1f}"
    )


def _speed_up(base: list[Run], runs: list[Run]) -> str:
    """Median (min-max) of the rounds' CPU-time ratios base / runs."""
    ratios = [b.cpu / f.cpu for b, f in zip(base, runs, strict=True)]
    return f"**{statistics.median(ratios):.2f}x** ({min(ratios):.2f}-{max(ratios):.2f})"


def row(preset: Preset, runs: dict[str, list[Run]], load: float) -> str:
    """The table row of one preset."""
    median = statistics.median
    base, exact, lean = runs["sb3"], runs["exact"], runs["lean"]
    same = len({r.weights for r in base + exact}) == 1
    repeatable = len({r.weights for r in lean}) == 1
    cpu = " | ".join(f"{median([r.cpu for r in runs[k]]):.2f}" for k in LEARNERS)
    rate = " | ".join(f"{median([r.steps_per_cpu_second for r in runs[k]]):,.0f}" for k in LEARNERS)
    return (
        f"| {preset.name} (`{preset.env_id}`) | {base[0].steps} | {cpu} | {rate} "
        f"| {_speed_up(base, exact)} | {_speed_up(base, lean)} "
        f"| {_split(base)} | {_split(lean)} | {'yes' if same else '**no**'} "
        f"| {'yes' if repeatable else '**no**'} | {load:.1f} |"
    )


def main() -> int:
    """Measure every preset; print and optionally write the section."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", action="append", choices=sorted(PRESETS))
    parser.add_argument("--timesteps", type=int, default=16384)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    names = args.preset or list(PRESETS)
    rows = [
        "| preset | steps | CPU s, sb3 | CPU s, exact | CPU s, lean | steps/CPU-s, sb3 "
        "| steps/CPU-s, exact | steps/CPU-s, lean | speed-up, exact (range) "
        "| speed-up, lean (range) | sb3 env / updates / rollout CPU s "
        "| lean env / updates / rollout CPU s | exact = sb3 | lean repeatable | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    same_everywhere = True
    for name in names:
        preset = PRESETS[name]
        warm(preset)
        runs = measure(preset, args.timesteps, args.rounds)
        same_everywhere &= len({r.weights for r in runs["sb3"] + runs["exact"]}) == 1
        rows.append(row(preset, runs, os.getloadavg()[0]))
        print(rows[-1], flush=True)
    command = "python benchmarks/train_throughput.py" + (
        "" if args.timesteps == 16384 else f" --timesteps {args.timesteps}"
    )
    command += "" if args.rounds == 5 else f" --rounds {args.rounds}"
    command += "".join(f" --preset {n}" for n in args.preset or [])
    text = "\n".join(
        [
            HEADING,
            "",
            f"`{command} --write`: MaskablePPO with the shipped hyperparameters (job-scoring "
            "policy, 2 envs, n_steps 512, batch 256, 4 epochs, 1 torch thread; rlsched-reserve: "
            "`hpcgym/agents/hyperparams/maskable_ppo_rlsched.yml`, RLScheduler's reserve mode "
            "with 128 queue slots), seed 0, in one process. *sb3*: sb3-contrib's `MaskablePPO` "
            "(`hpcgym train --learner sb3`), the baseline; *exact*: "
            "`hpcgym.agents.rl.lean_ppo.ExactMaskablePPO` (`--learner exact`): rollouts and "
            "updates without distribution objects, the policy's own modules, sb3-contrib's "
            "numbers bit for bit; *lean*: `LeanMaskablePPO` (the default): the same, plus the "
            "job-scoring policy's shortcuts (numpy rollouts, the context's share of the slot "
            "layer computed once, updates over occupied slots only): the same function and "
            "algorithm summed in another order, the same agent in distribution (section *Lean "
            f"learner, learning curves*). {args.rounds} rounds per preset, the learners "
            "interleaved in alternating order; medians, and each speed-up as the median "
            "(min-max) of the rounds' CPU-time ratios sb3 / learner. CPU is the process's "
            "(`time.process_time`) over `learn` (envs included, workload loaded before). "
            "*exact = sb3*: every sb3 and exact run of the preset saved the same weights (SHA-256 "
            "of `agent.safetensors`); *lean repeatable*: every lean run saved the same weights.",
            "",
            *rows,
            "",
            f"Python {platform.python_version()}, {build_note()}, torch {torch.__version__}, "
            f"{os.cpu_count()} CPUs shared with other work, {platform.machine()}, "
            f"{platform.processor() or 'unknown processor'}, started {started}.",
        ]
    )
    print(text)
    if args.write:
        write_section(HEADING, text)
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
