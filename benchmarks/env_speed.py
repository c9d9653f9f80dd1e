"""Measure environment steps per second of a random masked policy on every preset.

Run: ``python benchmarks/env_speed.py [--steps N] [--write]``. Prints a table; with ``--write``
it rewrites the ``## Environment speed`` section of ``benchmarks/RESULTS.md`` (other sections
are left alone). Episodes are reset inside the timed loop (their cost counts), each env comes
from ``gymnasium.make`` with its default wrappers, and the policy draws a uniformly random
legal action from ``info["action_mask"]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np
from results_md import build_note, write_section

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.envs import PRESETS

HEADING = "## Environment speed"
REPEATS = 5


def run(env: gym.Env[Any, Any], steps: int, seed: int) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``steps`` random masked steps, and the episodes finished."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    episodes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if term or trunc:
            episodes += 1
            _, info = env.reset()
    return time.perf_counter() - t0, time.process_time() - c0, episodes


def bare_loop(steps: int) -> tuple[float, float]:
    """A bare numpy step loop: a (32, 15) observation, a mask, a random legal action."""
    rng = np.random.default_rng(0)
    mask = np.ones(33, dtype=np.int8)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        obs = np.zeros((32, 15), dtype=np.float32)
        obs[0, 0] = 1.0
        legal = np.flatnonzero(mask)
        _ = legal[int(rng.random() * legal.size)]
    return time.perf_counter() - t0, time.process_time() - c0


def measure(env: gym.Env[Any, Any], steps: int) -> dict[str, float]:
    """Best of ``REPEATS`` runs (by CPU time), and the bare loop measured right after."""
    run(env, min(steps, 2000), seed=99)  # warm-up: workload loading and caches
    wall, cpu, episodes = min((run(env, steps, seed=r) for r in range(REPEATS)), key=lambda x: x[1])
    _, bare_cpu = min((bare_loop(steps) for _ in range(REPEATS)), key=lambda x: x[1])
    return {
        "wall": steps / wall,
        "cpu": steps / cpu,
        "episodes": episodes,
        "ratio": cpu / bare_cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    rows = []
    for env_id in PRESETS:
        r = measure(gym.make(env_id), args.steps)
        kwargs = PRESETS[env_id]
        n = kwargs.get("n_jobs") or "all"
        rows.append((f"`{env_id}`", kwargs["workload"], n, r))
        print(f"{env_id}: {r['wall']:,.0f} steps/s wall, {r['cpu']:,.0f} CPU", flush=True)
    rigid = PRESETS["hpcgym/Rigid-v0"]
    r = measure(gym.make("hpcgym/Rigid-v0").unwrapped, args.steps)
    rows.append(("`hpcgym/Rigid-v0`, unwrapped", rigid["workload"], rigid["n_jobs"], r))
    bw, bc = min((bare_loop(args.steps) for _ in range(REPEATS)), key=lambda x: x[1])
    table = [
        "| env | workload set | jobs per episode | steps/s (wall) | steps/s (CPU) "
        "| episodes | CPU time / bare loop |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, workload, n, r in rows:
        table.append(
            f"| {name} | `{workload}` | {n} | {r['wall']:,.0f} | {r['cpu']:,.0f} "
            f"| {r['episodes']:.0f} | {r['ratio']:.1f}x |"
        )
    table.append(
        f"| bare numpy step loop | | | {args.steps / bw:,.0f} | {args.steps / bc:,.0f} | | 1x |"
    )
    section = "\n".join(
        [
            HEADING,
            "",
            f"`python benchmarks/env_speed.py --write`: {args.steps:,} steps of a random masked "
            "policy per preset (`gymnasium.make` with its default wrappers; resets and the final "
            f"`sim.result()` included), best of {REPEATS}. Machine: {platform.machine()}, "
            f"Python {sys.version.split()[0]}, numpy {np.__version__}, gymnasium "
            f"{gym.__version__}, {build_note()}; {os.cpu_count()} CPUs shared with other work, "
            "so the CPU column "
            "(process time) is the steadier one. Target: at least 20,000 steps/s on "
            "`hpcgym/Rigid-v0` (256-job windows of `lublin_256.swf`). The bare loop (a (32, 15) "
            "observation, a mask, a random legal action) is re-measured after each env, under "
            "the same load, for the last column. Absolute figures move by a factor of 1.5 "
            "with the machine's load; `docs/env.md` (Speed) compares commits interleaved in one "
            "process instead.",
            "",
            *table,
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
