"""Environment steps per second on a 100,000-node machine against ``hpcgym/Rigid-v0``.

Run: ``python benchmarks/env_width.py [--steps N] [--repeat R] [--write]``. Prints a table;
with ``--write`` it rewrites the ``## Environment on a wide machine`` section of
``benchmarks/RESULTS.md`` (other sections are left alone).

Every row is ``gymnasium.make("hpcgym/Rigid-v0", ...)`` (its default wrappers, 256-job windows,
a random masked policy as in ``env_speed.py``, resets inside the timed loop), with:

- nothing changed (the reference of issue 20's target: 100,000 nodes within 1.5x of it);
- ``platform=[100000]``: the same ``lublin256`` jobs on 100,000 nodes (they use 0.3% of it);
- Lublin-Feitelson jobs drawn for 256 and for 100,000 nodes, both scaled to offered load 0.85
  (``benchmarks/scale.py``'s ``nodes-100k`` recipe, 10,000 jobs; a set registered here as
  ``bench/lublin-wide-<nodes>-v0``), each on its own machine: the same queue dynamics, jobs
  390 times wider.

The envs are measured interleaved, round by round (each round one run of every env, all on the
same seed), so that the machine's load drifts over all of them alike; the table gives each env's
best run by CPU time and the ratio of ``Rigid-v0``'s CPU steps/s to the row's, per round
(median) and of the best runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from env_speed import run
from results_md import build_note, write_section
from scale import _wide

import hpcgym  # noqa: F401  (registers the ids)
import hpcgym.workloads as W
from hpcgym.workloads.registry import WorkloadSet, names, register
from hpcgym.workloads.workload import Workload

HEADING = "## Environment on a wide machine"
WIDE = 100_000
WIDE_JOBS = 10_000
SCALE = 390
"""``Rigid-v0 x390``: every job and the machine 390 times wider, 99,840 nodes (the same
decisions: a job fits exactly when it fits at 256 nodes)."""
REFERENCE = "Rigid-v0"


def wide_set(nodes: int) -> str:
    """Register (once) the Lublin set drawn for ``nodes`` nodes at load 0.85; its name."""
    name = f"bench/lublin-wide-{nodes}-v0"

    def build(seed: int, options: Mapping[str, Any]) -> Workload:
        return _wide(nodes)(WIDE_JOBS)

    if name not in names():
        register(
            WorkloadSet(name, f"Lublin, {nodes:,} nodes, load 0.85", build, allocation="processor")
        )
    return name


def scaled_set() -> str:
    """Register (once) ``swf/lublin256-v0`` with every job and the machine ``SCALE`` times wider."""
    name = f"bench/lublin256-x{SCALE}-v0"

    def build(seed: int, options: Mapping[str, Any]) -> Workload:
        w = W.load("swf/lublin256-v0", seed)
        return W.transforms.rescale_nodes(w, SCALE * w.platform.total_nodes)  # exact: integer

    if name not in names():
        register(WorkloadSet(name, f"lublin256, {SCALE}x wider", build, allocation="processor"))
    return name


def envs() -> dict[str, tuple[str, dict[str, Any]]]:
    """Row name -> (what it runs, ``gymnasium.make`` overrides of ``hpcgym/Rigid-v0``)."""
    return {
        REFERENCE: ("`lublin256` windows on 256 nodes (the preset)", {}),
        "Rigid-v0 on 100k nodes": (
            "the same jobs, `platform=[100000]`",
            {"platform": [WIDE]},
        ),
        f"Rigid-v0 x{SCALE}": (
            f"the same jobs and machine, every size x{SCALE} ({SCALE * 256:,} nodes)",
            {"platform": [SCALE * 256], "workload": scaled_set()},
        ),
        "Lublin 256": (
            "Lublin jobs drawn for 256 nodes, load 0.85, on 256 nodes",
            {"platform": [256], "workload": wide_set(256)},
        ),
        "Lublin 100k": (
            "Lublin jobs drawn for 100,000 nodes, load 0.85, on 100,000 nodes",
            {"platform": [WIDE], "workload": wide_set(WIDE)},
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    rows = envs()
    made = {key: gym.make("hpcgym/Rigid-v0", **kw) for key, (_, kw) in rows.items()}
    for env in made.values():
        run(env, min(args.steps, 2000), seed=99)  # warm-up: workload loading and caches
    runs: dict[str, list[tuple[float, float, int]]] = {key: [] for key in rows}
    for r in range(args.repeat):
        for key, env in made.items():
            runs[key].append(run(env, args.steps, seed=r))
        print(
            f"round {r}: "
            + ", ".join(f"{k} {args.steps / runs[k][-1][1]:,.0f}" for k in rows)
            + " CPU steps/s",
            flush=True,
        )
    best = {key: min(v, key=lambda x: x[1]) for key, v in runs.items()}
    ref_cpu = [x[1] for x in runs[REFERENCE]]
    table = [
        "| env | workload | steps/s (wall) | steps/s (CPU) | episodes "
        f"| {REFERENCE} / env, CPU (median of rounds) | {REFERENCE} / env, CPU (best runs) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for key, (what, _) in rows.items():
        wall, cpu, episodes = best[key]
        per_round = statistics.median(
            c / ref for c, ref in zip((x[1] for x in runs[key]), ref_cpu, strict=True)
        )
        table.append(
            f"| {key} | {what} | {args.steps / wall:,.0f} | {args.steps / cpu:,.0f} "
            f"| {episodes} | {per_round:.2f}x | {cpu / best[REFERENCE][1]:.2f}x |"
        )
    section = "\n".join(
        [
            HEADING,
            "",
            f"`python benchmarks/env_width.py --write --repeat {args.repeat}`: "
            f"{args.steps:,} steps of a random masked policy (as in `env_speed.py`) on "
            "`hpcgym/Rigid-v0` and on the same preset with a 100,000-node platform, the envs "
            f"interleaved round by round, {args.repeat} rounds, best run by CPU time. Issue 20's "
            f"target: steps/s on a 100,000-node machine within 1.5x of `{REFERENCE}`'s (the last "
            f"two columns at most 1.5x). Machine: {platform.machine()}, Python "
            f"{sys.version.split()[0]}, numpy {np.__version__}, gymnasium {gym.__version__}, "
            f"{build_note()}; {os.cpu_count()} CPUs shared with other work (load average "
            f"{os.getloadavg()[0]:.1f} when written), so CPU time and the ratios are the "
            "steadier figures.",
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
