"""Where the env step and the event loop spend their time: cProfile, self time per function.

Run: ``python benchmarks/env_profile.py [--steps N] [--top K] [--write]``. For every preset (and
``hpcgym/Rigid-v0`` in reserve mode, ``selection="reserve"``) it profiles ``N`` random masked
steps (``gymnasium.make`` with its default wrappers, resets inside, as ``env_speed.py``), and
for every registered scheduler one event loop (``advance`` then ``schedule``, as the env and
every scheduler but the batch core's run) over the first jobs of ``swf/sdsc-sp2-v0``. It prints
the top ``K`` functions by self time with their share of the profiled run; ``--write`` rewrites
the ``## Where the time goes`` section of ``benchmarks/RESULTS.md``.

cProfile inflates the cost of small calls and cannot see inside compiled functions (a mypyc
method is one entry): read shares, not seconds, and the compiled engine's entries as a whole.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np
from results_md import build_note, write_section

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.envs import PRESETS

HEADING = "## Where the time goes"
LOOP_WORKLOAD = "swf/sdsc-sp2-v0"
LOOP_JOBS = 5_000
CASES: list[tuple[str, str, dict[str, Any]]] = [
    *((env_id.split("/")[1], env_id, {}) for env_id in PRESETS if env_id.endswith("-v0")),
    ("Rigid-v0 reserve", "hpcgym/Rigid-v0", {"selection": "reserve"}),
]
"""``(label, env id, extra keyword arguments)`` of every profiled env."""
LOOP_SCHEDULERS = ("fcfs", "sjf", "easy", "easy-sjf", "easy-f1", "conservative", "f1-reserve-bf")
"""The registered schedulers of rigid jobs whose loops are profiled (one of each family: the
malleable, evolving, multi-cluster and shared-node papers' schedulers run on their presets'
jobs, whose env steps are profiled above)."""


def random_steps(env: gym.Env[Any, Any], steps: int, seed: int) -> None:
    """``steps`` uniformly random legal actions, resetting at episode ends."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    for _ in range(steps):
        legal = info["action_mask"].nonzero()[0]  # as ``env_path.random_steps``
        _, _, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if term or trunc:
            _, info = env.reset()


Row = tuple[str, int, float]
"""A function's name, calls and share of the run's self time."""


def top_functions(profile: cProfile.Profile, top: int) -> tuple[float, list[Row]]:
    """Total self time and the ``top`` functions by self time: ``(name, calls, share)``."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values())
    rows = []
    for (path, line, name), (_, calls, self_time, _, _) in stats.items():
        where = os.path.basename(path) if path != "~" else "~"
        rows.append((f"{where}:{line}({name})" if line else name, calls, self_time / total))
    rows.sort(key=lambda r: -r[2])
    return total, rows[:top]


def profile_env(env_id: str, kwargs: dict[str, Any], steps: int) -> tuple[float, cProfile.Profile]:
    """Steps per CPU second without the profiler, and a profile of the same steps."""
    env = gym.make(env_id, **kwargs)
    random_steps(env, min(steps, 2000), seed=99)  # warm-up: workload loading and caches
    c0 = time.process_time()
    random_steps(env, steps, seed=1)
    rate = steps / (time.process_time() - c0)
    profile = cProfile.Profile()
    profile.enable()
    random_steps(env, steps, seed=1)
    profile.disable()
    return rate, profile


def profile_loop(name: str) -> tuple[float, cProfile.Profile]:
    """Jobs per CPU second of scheduler ``name``'s event loop, and a profile of it."""
    from hpcgym.baselines import make
    from hpcgym.sim import Simulator
    from hpcgym.workloads import load

    w = load(LOOP_WORKLOAD)
    jobs = w.jobs[:LOOP_JOBS]

    def loop() -> None:
        sim = Simulator(w.platform, jobs)
        schedule, advance = make(name).schedule, sim.advance
        while advance():
            schedule(sim)

    loop()
    c0 = time.process_time()
    loop()
    rate = len(jobs) / (time.process_time() - c0)
    profile = cProfile.Profile()
    profile.enable()
    loop()
    profile.disable()
    return rate, profile


def block(title: str, rate: str, rows: list[Row]) -> list[str]:
    """One case's table."""
    out = [f"**{title}** ({rate})", "", "| function (file:line(name)) | calls | self time |"]
    out.append("|---|---:|---:|")
    out += [f"| `{name}` | {calls:,} | {share:.0%} |" for name, calls, share in rows]
    return [*out, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--only", default="", help="comma-separated labels (envs, schedulers)")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    only = {x for x in args.only.split(",") if x}
    lines: list[str] = []
    for label, env_id, kwargs in CASES:
        if only and label not in only:
            continue
        rate, profile = profile_env(env_id, kwargs, args.steps)
        _, rows = top_functions(profile, args.top)
        lines += block(f"`{label}`", f"{rate:,.0f} steps/s CPU unprofiled", rows)
        print(lines[-len(rows) - 4 :], flush=True)
    for name in LOOP_SCHEDULERS:
        if only and name not in only:
            continue
        rate, profile = profile_loop(name)
        _, rows = top_functions(profile, args.top)
        lines += block(f"event loop, `{name}`", f"{rate:,.0f} jobs/s CPU unprofiled", rows)
        print(lines[-len(rows) - 4 :], flush=True)
    section = "\n".join(
        [
            HEADING,
            "",
            f"`python benchmarks/env_profile.py --steps {args.steps} --top {args.top} --write`: "
            f"cProfile self time, top {args.top} functions, as a share of the profiled run. Env: "
            f"{args.steps:,} random masked steps per preset (`gymnasium.make`, resets inside, "
            "the benchmark's own loop included). Event loop: `HPCGYM_BATCH_CORE` does not "
            f"matter there (`advance` then `schedule` by hand), first {LOOP_JOBS:,} jobs of "
            f"`{LOOP_WORKLOAD}`, simulator construction included; schedulers: "
            + ", ".join(LOOP_SCHEDULERS)
            + f". {build_note()}: a compiled "
            "method (`~:<method ...>`) is one entry, its inside unseen; cProfile inflates small "
            "calls, so read shares. Python "
            f"{sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs shared.",
            "",
            *lines,
        ]
    )
    if args.write:
        write_section(HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
