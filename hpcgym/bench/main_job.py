"""The main job: ``hpcgym bench`` with no arguments.

1. Train a small MaskablePPO agent (job-scoring policy, the shipped hyperparameters, seed 0) on
   the training episodes of the main scenario's preset, with the scenario's episode size, for
   ``MAIN_TIMESTEPS`` steps (``--timesteps`` to change). A finished agent is reused: the run
   folder is ``<out>/agent`` and training is skipped when its agent (``agent.safetensors`` and
   ``agent.json``) is there; an interrupted training resumes from its last checkpoint (one
   every ``MAIN_CHECKPOINT_EVERY`` steps) to the same agent.
2. Run the scenario's baselines, ``random``, ``advance`` and the agent on the scenario's
   held-out episode seeds, in 2 worker processes.
3. Print the leaderboard and where the tables and plots are.

Everything is seeded, so a rerun reproduces the numbers.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench

MAIN_TIMESTEPS = 30_000
"""Training steps of the main job's agent (about a minute on one core)."""

MAIN_CHECKPOINT_EVERY = 10_000
"""Steps between the main job's training checkpoints."""


def main_job(args: argparse.Namespace) -> int:
    """Train (unless already trained), benchmark, report."""
    from hpcgym.agents.saved import is_saved_agent
    from hpcgym.agents.train import TrainConfig, train

    sc = scenarios.get(scenarios.MAIN)
    out = Path(args.out) if args.out else Path("hpcgym-bench") / "main"
    run_dir = out / "agent"
    steps = args.timesteps if args.timesteps is not None else MAIN_TIMESTEPS
    print(f"main job: {sc.name} ({sc.description})")
    if is_saved_agent(run_dir):
        print(f"[1/2] reusing the agent in {run_dir} (delete it to retrain)")
    else:
        print(f"[1/2] training MaskablePPO on {sc.env_id} {sc.env_kwargs}, {steps} steps, seed 0")
        t0 = time.perf_counter()
        cfg = TrainConfig(
            env_id=sc.env_id,
            seed=0,
            timesteps=steps,
            env_kwargs=dict(sc.env_kwargs),
            out=str(run_dir),
            checkpoint_every=MAIN_CHECKPOINT_EVERY,
            resume=True,
            progress=True,
        )
        r = train(cfg, announce=lambda line: print(f"      {line}"))
        print(
            f"      trained in {time.perf_counter() - t0:.0f} s (env {r.env_seconds:.0f} s, "
            f"learner {r.learner_seconds:.0f} s); {r.episodes} training episodes"
        )
    print(f"[2/2] benchmarking on {len(sc.seeds)} held-out episodes")
    policies = [*sc.policies, str(run_dir / "agent")]
    return run_bench([sc.name], policies, out, args.executor, args.workers)
