"""``hpcgym evaluate``: policies on the same seeded episodes of a preset, one row per episode.

Every policy sees episode seeds ``seed, seed + 1, ...``; a seed fixes the episode's jobs, so all
policies schedule the same jobs. Masks are always applied and every policy is deterministic
given the seed (``random`` draws from a generator seeded with it), so a rerun gives the same
table. How each kind of policy runs is described in :mod:`hpcgym.bench.episode`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hpcgym.atomic import write_csv
from hpcgym.bench.axes import DOMINATED, columns, dominated_on_response, objective_of, with_axes
from hpcgym.bench.episode import forced_kill_rule, run_episode
from hpcgym.bench.policy_names import policy_kind, policy_label, policy_labels, trust_pickled
from hpcgym.cli_checks import at_least, env_kwargs_arg, known_env_id, writable_file
from hpcgym.envs.episodes import env_config

HEADLINE = ("mean_bsld", "max_bsld", "mean_wait", "utilization", "makespan", "reconfigurations")
"""The older headline metrics (every table now shows ``hpcgym.bench.axes.columns``; all of
``summary`` is in the CSV)."""


def episode_row(
    policy: str, env_id: str, seed: int, env_kwargs: dict[str, Any], label: str | None = None
) -> dict[str, Any]:
    """One tidy row: who, where, which seed, how it ran, then every episode metric.

    Who is ``label``, else :func:`policy_label` of ``policy``.
    """
    out = run_episode(policy, env_id, seed, env_kwargs)
    row: dict[str, Any] = {
        "policy": label or policy_label(policy),
        "env_id": env_id,
        "seed": seed,
        "path": out.path,
        "steps": out.steps,
        "truncated": out.truncated,
        "kill_on_walltime": out.kill_on_walltime,
        "invalid_actions": out.invalid_actions,
    }
    row.update(out.summary)
    row.update(out.counts)
    return row


def evaluate(
    policies: Sequence[str],
    env_id: str,
    seeds: Sequence[int],
    env_kwargs: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Every policy on every seed, in that order (one process; see ``hpcgym bench`` for more).

    Every policy runs under one walltime kill rule: the preset's, unless a policy's own setting
    has no kills (MEBF's: resized jobs outlive their request by design), in which case every
    policy runs without them. ``results.attrs["kill_rule"]`` says which, and why.

    Two agents whose files share a name (``runs/a/best``, ``runs/b/best``) get labels long
    enough to tell them apart (``a/best``, ``b/best``, as in ``hpcgym bench``).

    Raises:
        SpecError: An unknown policy; the same policy given twice; a ``<baseline>@env`` whose
            windows are too small for some episode (``hpcgym.bench.windows``), before anything
            runs.
    """
    kwargs = dict(env_kwargs or {})
    labels = policy_labels(policies)
    adapted = [p for p in policies if policy_kind(p) == "adapted"]  # unknown names fail here
    if adapted:
        from hpcgym.bench.windows import check_adapted

        check_adapted([(p, env_id, env_id, kwargs, seeds) for p in adapted])
    rule = kill_rule(policies, env_id, kwargs)
    if not rule[0]:
        kwargs["kill_on_walltime"] = False
    rows = [
        episode_row(p, env_id, s, kwargs, label)
        for p, label in zip(policies, labels, strict=True)
        for s in seeds
    ]
    results = pd.DataFrame(rows)
    results.attrs["kill_rule"] = rule[1]
    return results


def kill_rule(policies: Sequence[str], env_id: str, env_kwargs: dict[str, Any]) -> tuple[bool, str]:
    """The one walltime kill rule ``policies`` run under together, and a line saying why.

    The preset's rule, unless it kills and some policy's own setting does not: then no policy
    is killed (a table that kills some policies' jobs and not others' compares two worlds).
    """
    kills = env_config(env_id, env_kwargs).kill_on_walltime
    if not kills:
        return False, "walltime kills: off for every policy (the preset's setting)"
    without = [policy_label(p) for p in policies if forced_kill_rule(p) is False]
    if without:
        names = ", ".join(dict.fromkeys(without))
        return False, (
            f"walltime kills: off for every policy ({names} runs without them by its paper's "
            "setting, so the others do too)"
        )
    return True, "walltime kills: on for every policy (the preset's setting)"


def summary_table(
    results: pd.DataFrame, by: Sequence[str] = ("policy",), metric: str = "mean_bsld"
) -> pd.DataFrame:
    """The objective and the other axes per group (``hpcgym.bench.axes``), best ``metric`` first.

    A group with truncated episodes comes after every group without them: its slowdowns cover
    only the jobs that started (``unfinished`` counts the others). With one group per policy, a
    last column marks the policies dominated on response.
    """
    results = with_axes(results)
    cols = columns([metric], results.columns)
    groups = results.groupby(list(by), sort=False)
    table = groups[cols].mean()
    table.insert(0, "episodes", groups.size())
    table.insert(1, "truncated", groups["truncated"].sum())
    order = sorted(
        range(len(table)),
        key=lambda i: (bool(table["truncated"].iloc[i] > 0), table[metric].iloc[i]),
    )
    table = table.iloc[order]
    if list(by) == ["policy"]:
        cut = {str(p) for p in table.index[table["truncated"] > 0]}
        marks = dominated_on_response(results, metric, [str(p) for p in table.index], cut)
        table[DOMINATED] = [marks.get(str(p), "") for p in table.index]
    return table


def format_table(table: pd.DataFrame) -> str:
    """A fixed-width text rendering for the terminal."""
    return table.to_string(float_format=lambda x: f"{x:,.3f}")


def run(args: argparse.Namespace) -> int:
    """The ``evaluate`` command."""
    known_env_id(args.env)
    at_least("--episodes", args.episodes, 1)
    at_least("--seed", args.seed, 0)
    env_kwargs = env_kwargs_arg(args.env_kwargs)
    if args.out:
        writable_file(args.out)
    if args.trust_pickle:
        for name in args.policy or []:
            trust_pickled(name)
    seeds = list(range(args.seed, args.seed + args.episodes))
    if args.n_jobs is not None:
        env_kwargs["n_jobs"] = args.n_jobs
    if "split" not in env_kwargs:
        # The test split by default: the part of the trace training never sees.
        env_kwargs["split"] = None if args.split == "all" else args.split
    results = evaluate(args.policy or ["fcfs", "easy", "random"], args.env, seeds, env_kwargs)
    paths = results.groupby("policy", sort=False)["path"].first()
    metric = objective_of(env_config(args.env, env_kwargs).reward)
    print(f"{args.env}, episode seeds {seeds[0]}..{seeds[-1]}, overrides {env_kwargs or 'none'}")
    print(f"{results.attrs['kill_rule']}; ranked by {metric} (the preset's objective)")
    print(format_table(summary_table(results, metric=metric)))
    print("paths: " + ", ".join(f"{p}={k}" for p, k in paths.items()))
    if args.out:
        out = Path(args.out)
        write_csv(out, results, index=False)
        print(f"per-episode table: {out}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``evaluate`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "evaluate",
        help="run policies on the same seeded episodes of a preset "
        "(e.g. hpcgym evaluate --policy easy --policy runs/x)",
        description=(
            "Run policies on the same seeded episodes of one preset and print their mean\n"
            "metrics. Every policy schedules the same jobs, and a rerun gives the same table.\n"
            "Policies with truncated episodes are listed after the others."
        ),
        epilog="examples:\n  hpcgym evaluate --env hpcgym/Rigid-v0 --policy fcfs --policy easy\n"
        "  hpcgym evaluate --env hpcgym/Malleable-v0 --n-jobs 64 --episodes 5 "
        "--policy mebf --policy runs/x --out eval.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--env", default="hpcgym/Rigid-v0", help="a registered preset (default hpcgym/Rigid-v0)"
    )
    p.add_argument(
        "--policy",
        action="append",
        help="a policy, repeatable: advance, random, first-fit, a baseline (easy; easy@env acts "
        "through the env), or a saved agent (its run folder, e.g. runs/x); "
        "default: fcfs, easy, random",
    )
    p.add_argument("--episodes", type=int, default=3, help="number of episodes (default 3)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the first episode's seed; the others follow (default 0; e.g. --seed 1000)",
    )
    p.add_argument(
        "--n-jobs", type=int, default=None, help="jobs per episode (default: the preset's; e.g. 64)"
    )
    p.add_argument(
        "--split",
        choices=("test", "validation", "train", "all"),
        default="test",
        help="which part of the trace the episodes come from (default test, which training "
        "never sees; all: anywhere, as before the protocol)",
    )
    p.add_argument(
        "--env-kwargs",
        default=None,
        help="preset overrides as a JSON object (e.g. '{\"queue_slots\": 64}')",
    )
    p.add_argument(
        "--out", default=None, help="write the per-episode table to this CSV (e.g. eval.csv)"
    )
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="also load agents saved as SB3 .zip files, which run code they contain: only for "
        "files you trust (hpcgym train saves .safetensors weights plus a JSON card)",
    )
    p.set_defaults(func=run)
