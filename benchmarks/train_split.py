"""Where MaskablePPO's training time goes: the env against the learner, per VecEnv.

Run: ``python benchmarks/train_split.py [--timesteps N] [--repeats R] [--vec mask --vec dummy]
[--env ID ...] [--learner lean|sb3] [--write]``. Each run is ``hpcgym.agents.rl.train.train`` with
the shipped hyperparameters (job-scoring policy, 2 envs, ``n_steps`` 512, 1 torch thread), in
this process, one after the other. With ``--write`` it rewrites the ``## Training time split``
section of ``benchmarks/RESULTS.md``.

What is measured (``hpcgym.agents.rl.callbacks.TimedVecEnv`` and ``UpdateTimer``):

* **env**: time inside the VecEnv: ``reset``, ``step_async``/``step_wait`` (the envs, their
  wrappers, the VecEnv's copies and resets of finished episodes) and ``env_method`` (the action
  masks MaskablePPO fetches before every step);
* **updates**: the gradient updates (``train()``, between two rollouts);
* **rollout learner**: the rest of ``learn``: policy forward passes during rollouts, tensor
  conversion, the rollout buffer, callbacks, returns and advantages.

Shares are of this process's CPU time (``time.process_time``), which the other work on a
shared machine disturbs far less than wall time; wall shares are reported beside them. The
workload is loaded once per process before the timed runs (its cost is reported on its own:
it is paid once per training process, whatever the run's length). With ``--vec subproc`` the
envs run in worker processes (started by a forkserver, so not even this process's children):
the CPU columns miss their time and only the wall share means anything.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import gymnasium as gym
import torch
from results_md import build_note, write_section

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.agents.rl.train import LEARNERS, TrainConfig, load_hyperparams, train

HEADING = "## Training time split"
ENVS = ("hpcgym/Rigid-v0", "hpcgym/Malleable-v0")


def warm(env_id: str) -> float:
    """Load the preset's workload (cached per process) and train briefly (torch's first calls).

    Returns:
        The wall seconds the workload took to load.
    """
    kwargs = dict(load_hyperparams("maskable_ppo", env_id).get("env_kwargs") or {})
    env = gym.make(env_id, **kwargs)
    t0 = time.perf_counter()
    env.reset(seed=0)
    seconds = time.perf_counter() - t0
    env.close()
    one_run(env_id, "mask", 1024, seed=1)
    return seconds


def one_run(
    env_id: str, vec: str, timesteps: int, seed: int, learner: str = "lean"
) -> dict[str, float]:
    """Train once; return the time split."""
    with tempfile.TemporaryDirectory(prefix="train_split_") as tmp:
        cfg = TrainConfig(
            env_id=env_id,
            seed=seed,
            timesteps=timesteps,
            out=tmp,
            vec_env=vec,
            tensorboard="",
            learner=learner,
        )
        r = train(cfg)
    return {
        "steps": r.timesteps,
        "wall": r.seconds,
        "cpu": r.cpu_seconds,
        "env_cpu": r.env_cpu_seconds,
        "update_cpu": r.update_cpu_seconds,
        "rollout_cpu": r.cpu_seconds - r.env_cpu_seconds - r.update_cpu_seconds,
        "env_share_cpu": r.env_cpu_seconds / r.cpu_seconds,
        "env_share_wall": r.env_seconds / r.seconds,
        "load": os.getloadavg()[0],
    }


def measure(
    env_id: str, vec: str, timesteps: int, repeats: int, learner: str = "lean"
) -> dict[str, float]:
    """Medians over ``repeats`` runs (same seed: the same work each time)."""
    runs = [one_run(env_id, vec, timesteps, seed=0, learner=learner) for _ in range(repeats)]
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out["share_min"] = min(r["env_share_cpu"] for r in runs)
    out["share_max"] = max(r["env_share_cpu"] for r in runs)
    out["load_max"] = max(r["load"] for r in runs)
    return out


def main() -> None:
    """Measure every (preset, VecEnv) pair; print and optionally write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", action="append", help=f"env ids (default: {', '.join(ENVS)})")
    parser.add_argument("--vec", action="append", help="VecEnvs (default: dummy, mask)")
    parser.add_argument("--timesteps", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--learner",
        choices=LEARNERS,
        default="lean",
        help="MaskablePPO's rollouts (hpcgym train --learner; default lean)",
    )
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    envs, vecs = args.env or list(ENVS), args.vec or ["dummy", "mask"]
    rows = [
        "| preset | VecEnv | steps | CPU s | env CPU s | updates CPU s | rollout learner CPU s "
        "| env share (CPU) | env share (wall) | wall s | steps/s (CPU) | load avg |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    loads = []
    for env_id in envs:
        load_s = warm(env_id)
        loads.append(f"`{env_id}` {load_s:.1f} s")
        for vec in vecs:
            m = measure(env_id, vec, args.timesteps, args.repeats, args.learner)
            share = f"{m['env_share_cpu']:.1%} ({m['share_min']:.1%}-{m['share_max']:.1%})"
            if vec == "subproc":  # the envs' CPU time is in the workers: wall share only
                share = "n/a"
            row = (
                f"| `{env_id}` | {vec} | {int(m['steps'])} | {m['cpu']:.1f} | {m['env_cpu']:.1f} "
                f"| {m['update_cpu']:.1f} | {m['rollout_cpu']:.1f} | {share} "
                f"| {m['env_share_wall']:.1%} | {m['wall']:.1f} | {m['steps'] / m['cpu']:,.0f} "
                f"| {m['load']:.1f} (max {m['load_max']:.1f}) |"
            )
            rows.append(row)
            print(row, flush=True)
    text = "\n".join(
        [
            HEADING,
            "",
            "`python benchmarks/train_split.py"
            + ("" if args.timesteps == 16384 else f" --timesteps {args.timesteps}")
            + ("" if args.repeats == 3 else f" --repeats {args.repeats}")
            + "".join(f" --vec {v}" for v in (args.vec or []))
            + ("" if args.learner == "lean" else f" --learner {args.learner}")
            + " --write`: MaskablePPO with the shipped hyperparameters (job-scoring policy, "
            f"2 envs, n_steps 512, batch 256, 4 epochs, 1 torch thread, {args.learner} "
            "rollouts: see `## Training throughput`), medians of "
            f"{args.repeats} runs (range of the env share in brackets). Env: time inside the "
            "VecEnv (reset, step, the action masks fetched through `env_method`); updates: "
            "`train()`; rollout learner: the rest (policy forward passes, buffer, callbacks). "
            "Shares of process CPU time; the workload is loaded once per process before the "
            f"runs ({', '.join(loads)}, not in the table). Target: env share under 15%.",
            "",
            *rows,
            "",
            f"Python {platform.python_version()}, {build_note()}, torch {torch.__version__}, "
            f"{os.cpu_count()} CPUs, {platform.machine()}, "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}.",
        ]
    )
    print(text)
    if args.write:
        write_section(HEADING, text)


if __name__ == "__main__":
    sys.exit(main())
