"""Issue 43's table: the env path against bare loops, in one interleaved run, with its targets.

Run: ``python benchmarks/env_path.py [--steps N] [--rounds R] [--max-jobs J] [--least S]
[--only KEYS] [--rlscheduler PATH] [--write]``. Prints the tables; ``--write`` rewrites the
``## The env path against bare loops`` section of ``benchmarks/RESULTS.md``. Three parts, each
interleaved (A B A B, the order reversed every other time: round by round for the env rows, run
by run within a round for the shapes), CPU seconds (``time.process_time``), medians of rounds:

- *env*: ``N`` uniformly random legal steps of every preset from ``gymnasium.make`` (resets
  inside), and of ``hpcgym/Rigid-v0`` in reserve mode, against ``N`` steps of
  ``bare_step.bare_steps``, a bare numpy step loop of ``Rigid-v0``'s interaction model;
- *event loop*: ``sim.drive(scheduler)``, the loop every scheduler's ``run`` (and
  ``simulate()``) takes without the batch core (``HPCGYM_BATCH_CORE=0``), under
  ``make("fcfs")`` and ``make("easy")``, and the same loop *by hand* (``advance`` then
  ``schedule`` in a Python loop, as a user stepping the simulator writes it), against
  ``bare_loops``'s plain-Python loops, on every shape of ``scale.py`` (its first ``J`` jobs);
  the start times must be equal, job for job, or the run fails. A round runs each loop
  ``reps`` times, interleaved run by run (one of each, then one of each in reverse order...),
  ``reps`` chosen per shape so that the bare loop's take at least ``S`` CPU seconds (0.2 s),
  after one untimed pass, and the tables give the CPU seconds of one run;
- *simulate()*: ``make(name).simulate(platform, jobs)`` counted whole (the setting, the
  simulator's construction, the run, which takes the C batch core, and the result tables) from
  the ``JobSpec``s, against the same bare loops.

Speed ratios are *bare CPU / hpcgym CPU* (above 1: hpcgym is faster), except the env's, which
is *env steps/s / bare steps/s*. The targets row says met or not met for each target of issue
43. With ``--rlscheduler PATH`` (a clone of RLScheduler), the same run also times hpcgym's
reserve mode against RLScheduler's own env (``rlscheduler_env.py``'s setting and policies,
``--steps`` 4x the env rows', without and with backfilling, interleaved round by round), and the
targets row of that target gives its figure; without it, that row points at
``rlscheduler_env.py``'s own section.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from bare_loops import BARE
from bare_step import Jobs, bare_steps, lublin_jobs
from results_md import build_note, write_section
from scale import SHAPES, cached, job_specs, mismatch, specs_of

import hpcgym  # noqa: F401  (registers the ids)
from hpcgym.baselines import make
from hpcgym.envs import PRESETS
from hpcgym.sim import Platform, Simulator

HEADING = "## The env path against bare loops"
ENV_CASES: list[tuple[str, str, dict[str, Any]]] = [
    *((env_id, env_id, {}) for env_id in PRESETS if env_id.endswith("-v0")),
    ("hpcgym/Rigid-v0, reserve mode", "hpcgym/Rigid-v0", {"selection": "reserve"}),
]
"""``(label, env id, extra keyword arguments)`` of every env row."""
SCHEDULERS = ("fcfs", "easy")
TARGET_ENV, TARGET_LOOP, TARGET_SIMULATE, TARGET_RLSCHEDULER = 0.5, 1.0, 2.0, 10.0


RLSCHED: dict[str, Any] = {
    "workload": "rlsched/lublin256-v0",
    "platform": None,
    "n_jobs": 256,
    "selection": "reserve",
    "queue_slots": 128,
    "kill_on_walltime": False,
}
"""RLScheduler's setting in reserve mode (``rlscheduler_env.py``): lublin_256, 256-job
episodes, 128 queue slots; add ``reserve_backfill=True`` for its backfilling."""


def cpu_of(run: Callable[[], float | None]) -> float:
    """CPU seconds of ``run()`` after a full collection, or what it returned (a part of it)."""
    gc.collect()
    c0 = time.process_time()
    part = run()
    return time.process_time() - c0 if part is None else part


def random_steps(env: gym.Env[Any, Any], steps: int, seed: int) -> int:
    """``steps`` uniformly random legal actions, resetting at episode ends; episodes ended."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    episodes = 0
    for _ in range(steps):
        # The mask is 1-d: ``nonzero`` directly, not ``np.flatnonzero``'s three Python layers
        # (about 1.3 us a step, the agent's cost, not the env's).
        legal = info["action_mask"].nonzero()[0]
        _, _, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if term or trunc:
            episodes += 1
            _, info = env.reset()
    return episodes


def interleave(runs: dict[str, Callable[[], float | None]], rounds: int) -> dict[str, list[float]]:
    """CPU seconds of every run, round by round, the order reversed every other round."""
    out: dict[str, list[float]] = {k: [] for k in runs}
    keys = list(runs)
    for r in range(rounds):
        for k in keys if r % 2 == 0 else keys[::-1]:
            out[k].append(cpu_of(runs[k]))
    return out


def interleave_runs(
    runs: dict[str, Callable[[], float]], rounds: int, reps: int
) -> dict[str, list[float]]:
    """CPU seconds of ``reps`` runs of each, round by round, the runs themselves interleaved.

    A round is ``reps`` passes, each running every one once (``run()`` returns its CPU
    seconds), the order reversed every other pass; a run's seconds are summed over the round.
    So the runs compared share whatever state the machine is in: with ``reps`` runs of one
    back to back, then of the next, a change of state of the shared machine between two blocks
    (measured here: bimodal, 1.6x apart, lasting seconds) decided a round's ratio.
    """
    out: dict[str, list[float]] = {k: [] for k in runs}
    keys = list(runs)
    for _ in range(rounds):
        gc.collect()
        total = dict.fromkeys(keys, 0.0)
        for p in range(reps):
            for k in keys if p % 2 == 0 else keys[::-1]:
                total[k] += runs[k]()
        for k in keys:
            out[k].append(total[k])
    return out


def ratios(num: list[float], den: list[float]) -> tuple[float, float, float]:
    """Median, min and max of the round-by-round ratios ``num / den``."""
    r = [a / b for a, b in zip(num, den, strict=True)]
    return statistics.median(r), min(r), max(r)


def env_row(
    label: str, env_id: str, kwargs: dict[str, Any], steps: int, rounds: int, jobs: Jobs
) -> dict[str, Any]:
    """One env case against the bare step loop, interleaved."""
    env = gym.make(env_id, **kwargs)
    random_steps(env, min(steps, 2000), seed=99)  # warm-up: workload loading, caches
    bare_steps(jobs, min(steps, 2000), 99)
    seeds = iter(range(10 * rounds))

    def run_env() -> None:
        random_steps(env, steps, next(seeds))

    def run_bare() -> None:
        bare_steps(jobs, steps, next(seeds))

    cpu = interleave({"env": run_env, "bare": run_bare}, rounds)
    mid, lo, hi = ratios(cpu["bare"], cpu["env"])  # speed env/bare = bare CPU / env CPU
    row = {
        "label": label,
        "env": steps / statistics.median(cpu["env"]),
        "bare": steps / statistics.median(cpu["bare"]),
        "ratio": (mid, lo, hi),
    }
    print(f"{label}: {row['env']:,.0f} steps/s, bare {row['bare']:,.0f}, x{mid:.2f}", flush=True)
    return row


def event_loop(
    d: dict[str, np.ndarray], name: str, by_hand: bool = False
) -> tuple[np.ndarray, float]:
    """``make(name)``'s event loop: start times in ``d``'s order, and the CPU seconds of the
    loop alone (the simulator's construction excluded).

    ``sim.drive(scheduler)``, the loop ``sim.run``, a scheduler's ``run`` and ``simulate()``
    take without the batch core (``HPCGYM_BATCH_CORE=0``); ``by_hand``: ``advance`` then
    ``schedule`` in a Python loop, as a user stepping the simulator writes it.
    """
    total, cores = (int(x) for x in d["machine"])
    sim = Simulator(Platform.single(total, cores), job_specs(d))
    scheduler = make(name)
    if by_hand:
        schedule, advance = scheduler.schedule, sim.advance
        c0 = time.process_time()
        while advance():
            schedule(sim)
    else:
        c0 = time.process_time()
        sim.drive(scheduler)
    cpu = time.process_time() - c0
    jobs = sim.jobs
    return np.array([jobs[i].start_time for i in d["id"].tolist()]), cpu


def repeats_for(run: Callable[[], Any], least: float) -> int:
    """How many back-to-back runs of ``run`` take at least ``least`` CPU seconds (one timed)."""
    c0 = time.process_time()
    run()
    return max(1, math.ceil(least / max(time.process_time() - c0, 1e-6)))


def scheduler_row(
    key: str, d: dict[str, np.ndarray], name: str, rounds: int, least: float
) -> dict[str, Any]:
    """The event loop and ``simulate()`` of ``make(name)`` against its bare loop on ``d``.

    A round runs each of the four (bare, event loop, by hand, ``simulate()``) ``reps`` times,
    interleaved run by run (``interleave_runs``), ``reps`` chosen once so that the bare loop's
    take about ``least`` CPU seconds; the CPU seconds of one run are reported.
    """
    specs, capacity = specs_of(d), int(d["machine"][0])
    total, cores = (int(x) for x in d["machine"])
    jobs = job_specs(d)
    machine = Platform.single(total, cores)
    bare = BARE[name]
    want = np.array(bare(specs, capacity))
    for hand in (False, True):
        msg = mismatch(key, name, d["id"], event_loop(d, name, hand)[0], want)
        if msg:
            raise SystemExit(msg)
    reps = repeats_for(lambda: bare(specs, capacity), least)

    def run_bare() -> float:
        c0 = time.process_time()
        bare(specs, capacity)
        return time.process_time() - c0

    def run_simulate() -> float:
        c0 = time.process_time()
        make(name).simulate(machine, jobs)
        return time.process_time() - c0

    runs: dict[str, Callable[[], float]] = {
        "bare": run_bare,
        "loop": lambda: event_loop(d, name)[1],
        "hand": lambda: event_loop(d, name, True)[1],
        "simulate": run_simulate,
    }
    # One untimed pass first: a loop's first calls in a process can be slower than the rest
    # (measured here: the bare FCFS loop on HPC2N's 3,145 jobs, 2x faster from about its 8th
    # call on, steady after).
    interleave_runs(runs, 1, reps)
    cpu = interleave_runs(runs, rounds, reps)
    row = {
        "shape": key,
        "jobs": len(jobs),
        "scheduler": name,
        "reps": reps,
        "bare": statistics.median(cpu["bare"]) / reps,
        "loop": statistics.median(cpu["loop"]) / reps,
        "hand": statistics.median(cpu["hand"]) / reps,
        "simulate": statistics.median(cpu["simulate"]) / reps,
        "loop_ratio": ratios(cpu["bare"], cpu["loop"]),
        "hand_ratio": ratios(cpu["bare"], cpu["hand"]),
        "simulate_ratio": ratios(cpu["bare"], cpu["simulate"]),
    }
    print(
        f"{key} {name}: bare {row['bare']:.3f} s, loop {row['loop']:.3f} s "
        f"(x{row['loop_ratio'][0]:.2f}), by hand x{row['hand_ratio'][0]:.2f}, "
        f"simulate {row['simulate']:.3f} s "
        f"(x{row['simulate_ratio'][0]:.2f})",
        flush=True,
    )
    return row


def shape_rows(
    keys: list[str], max_jobs: int, rounds: int, cache: Path, least: float
) -> list[dict[str, Any]]:
    """Event loop and ``simulate()`` against the bare loops, per shape and scheduler."""
    rows = []
    for shape in SHAPES:
        if keys and shape.key not in keys:
            continue
        n = shape.jobs if max_jobs <= 0 else min(shape.jobs, max_jobs)
        with np.load(cached(shape, n, cache)) as f:
            d = {k: f[k] for k in f.files}
        rows += [scheduler_row(shape.key, d, name, rounds, least) for name in SCHEDULERS]
    return rows


def fmt(r: tuple[float, float, float]) -> str:
    """``median (min-max)`` of a ratio."""
    return f"{r[0]:.2f}x ({r[1]:.2f}-{r[2]:.2f})"


def targets(
    env: list[dict[str, Any]], shapes: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> list[str]:
    """The targets table: each target met or not met, with the figure that decides."""
    out = ["| target | figure (medians of rounds) | status |", "|---|---|---|"]
    rigid = next((r for r in env if r["label"] == "hpcgym/Rigid-v0"), None)
    if rigid is not None:
        ok = rigid["ratio"][0] >= TARGET_ENV
        out.append(
            f"| `Rigid-v0` steps/s >= {TARGET_ENV} of the bare step loop | "
            f"{fmt(rigid['ratio'])} | {'met' if ok else 'not met'} |"
        )
    for key, what, bound in (
        ("loop_ratio", "event loop", TARGET_LOOP),
        ("simulate_ratio", "`simulate()` whole", TARGET_SIMULATE),
    ):
        if not shapes:
            continue
        worst = min(shapes, key=lambda r: r[key][0])
        met = sum(r[key][0] >= bound for r in shapes)
        status = "met" if met == len(shapes) else "not met"
        out.append(
            f"| {what} >= {bound:g}x the bare loop on every shape (FCFS and EASY) | "
            f"{met} of {len(shapes)} runs; worst {worst['shape']} {worst['scheduler']} "
            f"{fmt(worst[key])} | {status} |"
        )
    if theirs:
        worst = min(theirs, key=lambda r: r["ratio"][0])
        ok = worst["ratio"][0] >= TARGET_RLSCHEDULER
        out.append(
            f"| `>= {TARGET_RLSCHEDULER:g}x` RLScheduler's env in reserve mode (without and with "
            f"backfilling) | worst {worst['label']} {fmt(worst['ratio'])} | "
            f"{'met' if ok else 'not met'} |"
        )
    else:
        out.append(
            "| `>= 10x` RLScheduler's env in reserve mode | `## Against RLScheduler's env` "
            "(`rlscheduler_env.py`) | see there |"
        )
    return out


def rlscheduler_rows(checkout: Path, steps: int, rounds: int) -> list[dict[str, Any]]:
    """hpcgym's reserve mode against RLScheduler's env, without and with backfilling.

    ``rlscheduler_env.py``'s envs and random policies; the speed ratio of a round is
    RLScheduler's CPU seconds over hpcgym's for the same number of steps.
    """
    from rlscheduler_env import (
        hpcgym_env,
        hpcgym_steps,
        rlscheduler_env,
        rlscheduler_steps,
        timed,
    )

    rows = []
    for backfill in (False, True):
        theirs = rlscheduler_env(checkout, backfill)
        ours = hpcgym_env(backfill)
        timed(hpcgym_steps, ours, min(steps, 2000), 99)  # warm-up
        timed(rlscheduler_steps, theirs, min(steps, 2000), 99)
        seeds = iter(range(10 * rounds))

        def run_ours(env: Any = ours, seeds: Any = seeds) -> float:
            return timed(hpcgym_steps, env, steps, next(seeds))[0]

        def run_theirs(env: Any = theirs, seeds: Any = seeds) -> float:
            return timed(rlscheduler_steps, env, steps, next(seeds))[0]

        cpu = interleave({"hpcgym": run_ours, "rlscheduler": run_theirs}, rounds)
        label = "reserve mode, " + ("with backfilling" if backfill else "no backfilling")
        row = {
            "label": label,
            "hpcgym": steps / statistics.median(cpu["hpcgym"]),
            "rlscheduler": steps / statistics.median(cpu["rlscheduler"]),
            "ratio": ratios(cpu["rlscheduler"], cpu["hpcgym"]),
        }
        print(f"{label}: hpcgym / RLScheduler x{row['ratio'][0]:.2f}", flush=True)
        rows.append(row)
        sys.modules.pop("HPCSimPickJobs", None)
    return rows


def one_process(what: str, n: int) -> None:
    """A whole process's work for A/B timing under each commit's build (``/usr/bin/time -v``).

    ``what``: a preset id (``n`` random masked steps; ``ID:reserve`` for reserve mode,
    ``ID:rlsched`` and ``ID:rlsched-bf`` for RLScheduler's setting, :data:`RLSCHED`) or
    ``simulate`` (``swf/sdsc-sp2-v0`` loaded, then ``n`` rounds of ``make("fcfs")`` and
    ``make("easy")`` ``.simulate()``), or ``loop:SHAPE:NAME`` (``scale.py``'s shape ``SHAPE``,
    at most 20,000 jobs, from the default cache, then ``n`` event loops of ``make(NAME)``, each
    on a new simulator). ``n`` 0 times the start-up alone.
    """
    if what.startswith("loop:"):
        _, key, name = what.split(":")
        shape = next(s for s in SHAPES if s.key == key)
        cache = Path(tempfile.gettempdir()) / "hpcgym-scale"
        with np.load(cached(shape, min(shape.jobs, 20_000), cache)) as f:
            d = {k: f[k] for k in f.files}
        for _ in range(n):
            event_loop(d, name)
        return
    if what == "simulate":
        from hpcgym.workloads import load

        w = load("swf/sdsc-sp2-v0")
        for _ in range(n):
            for name in SCHEDULERS:
                make(name).simulate(w.platform, w.jobs)
        return
    env_id, _, mode = what.partition(":")
    kwargs: dict[str, Any] = {
        "": {},
        "reserve": {"selection": "reserve"},
        "rlsched": RLSCHED,
        "rlsched-bf": {**RLSCHED, "reserve_backfill": True},
    }[mode]
    env = gym.make(env_id, **kwargs)
    random_steps(env, n, seed=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=5_000, help="env steps per run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-jobs", type=int, default=20_000, help="0: every job of a shape")
    parser.add_argument(
        "--least",
        type=float,
        default=0.2,
        help="CPU seconds a shape measurement lasts at least (bare loop runs back to back)",
    )
    parser.add_argument("--only", default="", help="comma-separated scale.py shape keys")
    parser.add_argument("--no-env", action="store_true", help="skip the env rows")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hpcgym-scale")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--one", metavar="WHAT", help="only one_process(WHAT, --n), no table")
    parser.add_argument("--n", type=int, default=40_000, help="with --one")
    parser.add_argument(
        "--rlscheduler", type=Path, metavar="PATH", help="a clone of RLScheduler: time its env too"
    )
    args = parser.parse_args()
    if args.one:
        one_process(args.one, args.n)
        return 0
    started = time.perf_counter()
    jobs = lublin_jobs()
    env = (
        [] if args.no_env else [env_row(*case, args.steps, args.rounds, jobs) for case in ENV_CASES]
    )
    theirs = (
        rlscheduler_rows(args.rlscheduler, 4 * args.steps, args.rounds) if args.rlscheduler else []
    )
    keys = [k for k in args.only.split(",") if k]
    shapes = shape_rows(keys, args.max_jobs, args.rounds, args.cache, args.least)
    minutes = (time.perf_counter() - started) / 60
    env_table = [
        "| env | steps/s (CPU) | bare step loop, steps/s | env / bare speed, median (min-max) |",
        "|---|---:|---:|---:|",
        *(
            f"| `{r['label']}` | {r['env']:,.0f} | {r['bare']:,.0f} | {fmt(r['ratio'])} |"
            for r in env
        ),
    ]
    shape_table = [
        "| shape | jobs | scheduler | runs a measurement | bare CPU s | event loop CPU s "
        "| bare / event loop | bare / loop by hand | `simulate()` CPU s | bare / `simulate()` |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r['shape']} | {r['jobs']:,} | {r['scheduler']} | {r['reps']} | {r['bare']:.4f} "
            f"| {r['loop']:.4f} | {fmt(r['loop_ratio'])} | {fmt(r['hand_ratio'])} "
            f"| {r['simulate']:.4f} | {fmt(r['simulate_ratio'])} |"
            for r in shapes
        ),
    ]
    theirs_table = (
        [
            "",
            f"Against RLScheduler's own env ({4 * args.steps:,} random legal steps a round; "
            "`rlscheduler_env.py`'s setting: lublin_256, 256-job sequences, 128 queue slots, "
            "resets inside the loop; RLScheduler's reset also runs SJF and F1 for its reward, "
            f"as shipped; clone at commit {_clone_commit(args.rlscheduler)}):",
            "",
            "| setting | hpcgym steps/s (CPU) | RLScheduler steps/s (CPU) | hpcgym / RLScheduler "
            "speed, median (min-max) |",
            "|---|---:|---:|---:|",
            *(
                f"| {r['label']} | {r['hpcgym']:,.0f} | {r['rlscheduler']:,.0f} | "
                f"{fmt(r['ratio'])} |"
                for r in theirs
            ),
        ]
        if theirs
        else []
    )
    cap = "every job" if args.max_jobs <= 0 else f"at most {args.max_jobs:,} jobs"
    command = (
        "python benchmarks/env_path.py"
        + (" --rlscheduler PATH" if theirs else "")
        + (" --write" if args.write else "")
    )
    section = "\n".join(
        [
            HEADING,
            "",
            f"`{command}` (`--steps {args.steps} --rounds {args.rounds} --max-jobs "
            f"{args.max_jobs} --least {args.least}`): issue 43's comparison, one interleaved run "
            f"of {minutes:.1f} min; see the script's docstring for what each run counts. "
            f"{args.rounds} rounds, medians; ratios are speed ratios (above 1: hpcgym faster), "
            f"median of the rounds' ratios with their range. Shapes: `scale.py`'s, {cap} each; "
            "a round runs the four loops of a row one run at a time, interleaved; the CPU "
            "seconds are of one run. Machine: "
            f"{platform.machine()}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
            f"{build_note()}; {os.cpu_count()} CPUs shared with other work (load average "
            f"{os.getloadavg()[0]:.1f} when written).",
            "",
            "The bare step loop (`benchmarks/bare_step.py`) plays `Rigid-v0`'s interaction "
            "model (256-job episodes of `lublin_256`, the same observation shapes, a mask of "
            "33, a random legal action, advance skipping points without a choice); every "
            "preset is compared with it, so only the `Rigid-v0` rows compare like with like. "
            "The event loop is `sim.drive(scheduler)`, what `sim.run`, a scheduler's `run` and "
            "`simulate()` take without the batch core; *by hand* is the same loop written in "
            "Python (`while sim.advance(): scheduler.schedule(sim)`), which adds the "
            "interpreter's work per decision point.",
            "",
            *env_table,
            *theirs_table,
            "",
            *shape_table,
            "",
            "Targets (issue 43):",
            "",
            *targets(env, shapes, theirs),
            "",
        ]
    )
    print(section)
    if args.write:
        write_section(HEADING, section)
    return 0


def _clone_commit(checkout: Path | None) -> str:
    """The short commit of the RLScheduler clone (``?`` when it is not a git clone)."""
    from rlscheduler_env import _commit

    return _commit(checkout) if checkout is not None else "?"


if __name__ == "__main__":
    sys.exit(main())
