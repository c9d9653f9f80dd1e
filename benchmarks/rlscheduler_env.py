"""hpcgym's reserve mode against RLScheduler's own env, steps per CPU-second, interleaved.

Run: ``python benchmarks/rlscheduler_env.py --checkout PATH [--steps N] [--rounds R]
[--write]``, where PATH is a clone of RLScheduler (https://github.com/DIR-LAB/deep-batch-scheduler;
nothing of it is copied here: the script imports its ``HPCSimPickJobs`` from PATH). Its env
needs the old ``gym`` package and imports TensorFlow for its training code; the script gives it
a small ``gym`` made of Gymnasium's spaces and an old-style seeding (``np_random`` as a
``RandomState``, which its ``reset`` calls ``randint`` on) and an empty ``tensorflow`` module,
before importing it. Nothing the env's ``reset`` and ``step`` run is replaced.

Both envs play RLScheduler's setting on ``lublin_256.swf`` (the trace its repository ships;
hpcgym reads its own copy): 256-job sequences drawn at random, a 128-slot queue, the action a
queue slot, without backfilling (``--backfill`` for with). The policy picks a uniformly random
slot that holds a job (hpcgym: a random legal action of ``info["action_mask"]``; RLScheduler: a
random slot whose pair holds a job, its PPO's own masking rule). Resets are inside the timed
loop for both. RLScheduler's reset also schedules the sequence with SJF and F1 for its reward;
that is part of its env's cost as shipped.

Rounds alternate the order (A B, B A, ...); reported: steps per CPU-second (``process_time``)
of each env and the median of the per-round ratios hpcgym / RLScheduler, and, since the two
envs do not take the same number of steps for the same 256 jobs (RLScheduler's backfilling runs
inside a step), the ratio of CPU seconds per finished episode. With ``--write`` it
rewrites the ``## Against RLScheduler's env`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from env_path import RLSCHED, random_steps
from results_md import build_note, write_section

import hpcgym  # noqa: F401  (registers the ids)

HEADING = "## Against RLScheduler's env"
TARGET = 10.0
"""Issue 43's target: hpcgym's reserve mode at least 10x RLScheduler's env."""


def _old_gym() -> types.ModuleType:
    """A ``gym`` module with what RLScheduler's env imports, over Gymnasium."""
    gym = types.ModuleType("gym")
    spaces = types.ModuleType("gym.spaces")
    spaces.Box = gymnasium.spaces.Box  # type: ignore[attr-defined]
    spaces.Discrete = gymnasium.spaces.Discrete  # type: ignore[attr-defined]
    utils = types.ModuleType("gym.utils")
    seeding = types.ModuleType("gym.utils.seeding")

    def np_random(seed: int | None = None) -> tuple[np.random.RandomState, int]:
        seed = int(np.random.SeedSequence(seed).entropy % 2**32) if seed is None else seed
        return np.random.RandomState(seed), seed

    seeding.np_random = np_random  # type: ignore[attr-defined]
    utils.seeding = seeding  # type: ignore[attr-defined]
    gym.Env = gymnasium.Env  # type: ignore[attr-defined]
    gym.spaces = spaces  # type: ignore[attr-defined]
    gym.utils = utils  # type: ignore[attr-defined]
    return gym


def rlscheduler_env(checkout: Path, backfill: bool) -> Any:
    """RLScheduler's ``HPCEnv`` from the clone at ``checkout``, loaded with lublin_256."""
    gym = _old_gym()
    sys.modules.update(
        {
            "gym": gym,
            "gym.spaces": gym.spaces,
            "gym.utils": gym.utils,
            "gym.utils.seeding": gym.utils.seeding,
            "tensorflow": types.ModuleType("tensorflow"),
        }
    )
    sys.path.insert(0, str(checkout))
    from HPCSimPickJobs import HPCEnv  # type: ignore[import-not-found]

    env = HPCEnv(backfil=backfill)
    env.seed(0)
    quiet = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (its loader prints every job count)
    try:
        env.my_init(workload_file=str(checkout / "data" / "lublin_256.swf"))
    finally:
        sys.stdout.close()
        sys.stdout = quiet
    return env


def rlscheduler_steps(env: Any, steps: int, rng: np.random.Generator) -> int:
    """``steps`` random steps of RLScheduler's env; the episodes finished."""
    env.reset()
    episodes = 0
    for _ in range(steps):
        slots = [k for k, pair in enumerate(env.pairs) if pair[0]]
        action = slots[int(rng.random() * len(slots))] if slots else 0
        done = env.step(action)[2]
        if done:
            episodes += 1
            env.reset()
    return episodes


def hpcgym_env(backfill: bool) -> Any:
    """hpcgym's RLScheduler setting (``docs/env.md``, "Reserve mode") on lublin_256."""
    return gymnasium.make("hpcgym/Rigid-v0", **RLSCHED, reserve_backfill=backfill)


def hpcgym_steps(env: Any, steps: int, rng: np.random.Generator) -> int:
    """``steps`` random legal steps of hpcgym's env (``env_path.random_steps``); episodes ended."""
    return random_steps(env, steps, int(rng.integers(2**31)))


def timed(run: Any, env: Any, steps: int, seed: int) -> tuple[float, int]:
    """CPU seconds of ``run(env, steps, rng)`` and the episodes it finished."""
    rng = np.random.default_rng(seed)
    c0 = time.process_time()
    episodes = run(env, steps, rng)
    return time.process_time() - c0, episodes


def main() -> None:
    """Time both envs round by round and print (or write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, required=True, help="a clone of RLScheduler")
    ap.add_argument("--steps", type=int, default=20_000, help="steps per env per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write", action="store_true", help="rewrite the RESULTS.md section")
    args = ap.parse_args()
    rows = []
    for backfill in (False, True):
        theirs = rlscheduler_env(args.checkout, backfill)
        ours = hpcgym_env(backfill)
        cpu: dict[str, list[float]] = {"hpcgym": [], "rlscheduler": []}
        done: dict[str, list[int]] = {"hpcgym": [], "rlscheduler": []}
        for k in range(args.rounds):
            order = [("hpcgym", hpcgym_steps, ours), ("rlscheduler", rlscheduler_steps, theirs)]
            for name, run, env in order if k % 2 == 0 else order[::-1]:
                seconds, episodes = timed(run, env, args.steps, k)
                cpu[name].append(seconds)
                done[name].append(episodes)
        ratios = [b / a for a, b in zip(cpu["hpcgym"], cpu["rlscheduler"], strict=True)]
        # per episode: the two envs take different numbers of steps for the same 256 jobs
        per_episode = {n: sum(cpu[n]) / max(sum(done[n]), 1) for n in cpu}
        mode = "reserve, with backfilling" if backfill else "reserve, no backfilling"
        rate = {n: args.steps / statistics.median(c) for n, c in cpu.items()}
        episode_ratio = per_episode["rlscheduler"] / per_episode["hpcgym"]
        steps_per_episode = {n: args.steps * args.rounds / max(sum(done[n]), 1) for n in cpu}
        rows.append(
            (mode, rate["hpcgym"], rate["rlscheduler"], ratios, episode_ratio, steps_per_episode)
        )
        print(mode, {n: round(r) for n, r in rate.items()}, [round(x, 2) for x in ratios])
        sys.modules.pop("HPCSimPickJobs", None)
    lines = [
        HEADING,
        "",
        f"`python benchmarks/rlscheduler_env.py --checkout PATH --steps {args.steps} --rounds "
        f"{args.rounds} --write` (PATH: a clone of RLScheduler's repository, commit of "
        f"{_commit(args.checkout)}): random legal steps on lublin_256, 256-job sequences, "
        "128 queue slots, resets inside the loop; CPU seconds (`process_time`), rounds "
        "interleaved in alternating order, medians. RLScheduler's reset also runs SJF and F1 "
        "over the sequence for its reward, as shipped.",
        "",
        "| setting | hpcgym steps/s | RLScheduler steps/s | steps per episode (hpcgym, "
        "RLScheduler) | steps/s ratio: median [min, max] of rounds | episodes/s ratio | "
        "target (>= 10x steps/s) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for mode, ours_rate, theirs_rate, ratios, episode_ratio, per in rows:
        med = statistics.median(ratios)
        lines.append(
            f"| {mode} | {ours_rate:,.0f} | {theirs_rate:,.0f} | {per['hpcgym']:.0f}, "
            f"{per['rlscheduler']:.0f} | {med:.1f}x [{min(ratios):.1f}, {max(ratios):.1f}] | "
            f"{episode_ratio:.1f}x | {'met' if med >= TARGET else 'not met'} |"
        )
    lines += [
        "",
        f"Python {platform.python_version()}, {build_note()}, {os.cpu_count()} CPUs shared "
        f"with other work, {time.strftime('%Y-%m-%d')}.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(HEADING, text)


def _commit(checkout: Path) -> str:
    """The short commit of the clone (``?`` when it is not a git clone)."""
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
