"""``hpcgym search-score``: train linear scoring agents by CMA-ES.

On a rigid preset the agent scores jobs (:mod:`hpcgym.agents.engine.score`, card ``score.json``); on
``hpcgym/Evolving-v0`` it scores applications to order the list of Klein and Perez's list scheduling
(:mod:`hpcgym.agents.engine.order`, card ``order.json``). A run folder holds the card (the agent:
weights, preset, training record), ``search.csv`` (per generation: its best, median and the best so
far of the training objective) and ``run.json`` (what produced it: :mod:`hpcgym.agents.runrecord`).
``--seeds`` writes one folder per seed, ``<out>/s<seed>``, which ``hpcgym bench --policy <out>``
plays as one policy. A folder that holds a run is refused unless ``--overwrite`` (replace it) or
``--resume`` (keep the finished seeds, search the others again from the start: a search has no
checkpoints, its generations are seconds to a minute each).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path
from typing import Any

from hpcgym import atomic
from hpcgym.agents.engine import order
from hpcgym.agents.engine.cards import is_engine_agent
from hpcgym.agents.engine.score import (
    CARD,
    EPISODES,
    GENERATIONS,
    OBJECTIVES,
    SIGMA,
    ScoreCard,
    search,
)
from hpcgym.agents.runrecord import RUN_JSON, RunRecord
from hpcgym.cli_checks import at_least, env_kwargs_arg, known_env_id, writable_folder
from hpcgym.errors import SpecError

FILES = (CARD, order.CARD, "search.csv", RUN_JSON)
"""What a search writes into its run folder (and ``--overwrite`` replaces)."""


def _prepare(folder: Path, overwrite: bool, resume: bool) -> bool:
    """Whether to search into ``folder`` (``False``: a finished run ``resume`` keeps)."""
    held = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if not held:
        return True
    if resume:  # unfinished: search again; run.json keeps the stopped attempt's segment
        return not is_engine_agent(folder)
    if overwrite:
        for name in FILES:
            (folder / name).unlink(missing_ok=True)
        return True
    raise SpecError(
        f"{folder} already holds a run ({', '.join(held[:6])}); --overwrite replaces it, "
        "--resume keeps finished seeds, or choose another --out"
    )


def _search_one(
    args: argparse.Namespace,
    env_kwargs: dict[str, Any],
    seed: int,
    folder: Path,
    command: list[str],
) -> None:
    if not _prepare(folder, args.overwrite, args.resume):
        print(f"seed {seed}: finished before, kept ({folder / CARD})")
        return
    folder.mkdir(parents=True, exist_ok=True)
    record = RunRecord.open(folder, command, None, args.resume)

    def report(g: int, best: float, so_far: float) -> None:
        print(f"seed {seed} generation {g}: best {best:.3f}, best so far {so_far:.3f}", flush=True)

    evolving = args.env == order.ENV_ID
    card: order.OrderCard | ScoreCard
    try:
        if evolving:
            card, curve = order.search(
                env_kwargs,
                seed,
                args.generations or order.GENERATIONS,
                args.episodes or order.EPISODES,
                args.sigma,
                args.workers,
                report,
                args.variant,
                order.GUARD if args.guard is None else args.guard,
            )
        else:
            card, curve = search(
                args.env,
                env_kwargs,
                seed,
                args.generations or GENERATIONS,
                args.episodes or EPISODES,
                args.sigma,
                args.workers,
                report,
                args.objective,
            )
    except BaseException as e:
        record.close("interrupted" if isinstance(e, KeyboardInterrupt) else "failed", None)
        raise
    text = io.StringIO()
    writer = csv.DictWriter(text, ["generation", "best", "median", "best_so_far"])
    writer.writeheader()
    writer.writerows(curve)
    atomic.write_text(folder / "search.csv", text.getvalue())
    name = order.CARD if evolving else CARD
    atomic.write_text(folder / name, card.to_json() + "\n")
    record.close("finished", None)
    t = card.training
    against = (
        f"{t['heuristic']}'s 0 (log makespan ratio + worst-job guard)"
        if evolving
        else f"F1's {t['f1_objective']:.3f} ({t['objective_name']})"
    )
    print(
        f"seed {seed}: {t['best_objective']:.3f} against {against} on {t['episodes']} training "
        f"episodes, {t['seconds']} s; agent: {folder / name}"
    )


def run(args: argparse.Namespace) -> int:
    """The ``search-score`` command."""
    known_env_id(args.env)
    at_least("--seed", args.seed, 0)
    for flag, value in (("--generations", args.generations), ("--episodes", args.episodes)):
        if value is not None:
            at_least(flag, value, 1)
    at_least("--workers", args.workers, 1)
    evolving = args.env == order.ENV_ID
    if not evolving and (args.guard is not None or args.variant != "infX"):
        raise SpecError("--guard and --variant apply to order agents (--env hpcgym/Evolving-v0)")
    if evolving:
        order.OrderCard(order.ENV_ID, {}, (0.0,) * len(order.FEATURES), args.variant)
    if evolving and args.objective != "mean":
        raise SpecError(
            "--objective applies to job scores on rigid presets; an order agent's objective is "
            "the log makespan ratio with a worst-job --guard"
        )
    if args.resume and args.overwrite:
        raise SpecError("--resume keeps finished seeds and --overwrite replaces them: choose one")
    env_kwargs = env_kwargs_arg(args.env_kwargs)  # bad JSON is refused before any work
    command = ["hpcgym", *(args.argv if args.argv is not None else sys.argv[1:])]
    out = Path(args.out)
    writable_folder(out)
    if args.seeds is None:
        _search_one(args, env_kwargs, args.seed, out, command)
        return 0
    from hpcgym.cli_checks import parse_seeds

    for seed in parse_seeds(args.seeds):
        _search_one(args, env_kwargs, seed, out / f"s{seed}", command)
    print(f"benchmark every seed as one policy: hpcgym bench --policy {out} ...")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``search-score`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "search-score",
        help="train a linear scoring agent by CMA-ES (rigid presets: job order; "
        "hpcgym/Evolving-v0: the list order of Klein and Perez's scheduling)",
        description=_DETAILS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--env", default="hpcgym/Rigid-v0", help="registered env id (rigid, or hpcgym/Evolving-v0)"
    )
    p.add_argument("--env-kwargs", default=None, help="JSON object of preset arguments")
    p.add_argument("--seed", type=int, default=0, help="seed of the search and its episodes")
    p.add_argument("--seeds", default=None, metavar="LIST", help="one search per seed, e.g. 0-4")
    p.add_argument(
        "--generations",
        type=int,
        default=None,
        help=f"CMA-ES generations (default {GENERATIONS}; order agents {order.GENERATIONS})",
    )
    p.add_argument(
        "--episodes",
        type=int,
        default=None,
        help=f"training episodes (default {EPISODES}; order agents {order.EPISODES})",
    )
    p.add_argument("--sigma", type=float, default=SIGMA, help="initial step size (weight units)")
    p.add_argument(
        "--objective",
        choices=sorted(OBJECTIVES),
        default="mean",
        help="mean: mean bounded slowdown over the episodes; log-ratio: mean log of each "
        "episode's ratio to F1's (weighs every episode's relative gain alike)",
    )
    p.add_argument(
        "--guard",
        type=float,
        default=None,
        help=f"order agents: weight of the worst-job term (default {order.GUARD})",
    )
    p.add_argument(
        "--variant",
        default="infX",
        help="order agents: the list scheduler's variant the order is learned for",
    )
    p.add_argument("--workers", type=int, default=2, help="processes playing the episodes")
    p.add_argument("--out", required=True, help="run folder (with --seeds: <out>/s<seed>)")
    p.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    p.add_argument("--resume", action="store_true", help="keep finished seeds, search the rest")
    p.set_defaults(func=run)


_DETAILS = """\
Train a linear scoring agent by direct policy search (CMA-ES), seeded.

Rigid presets: the agent ranks queued jobs by a weighted sum of eight job features (F1 is one
point of the family, and the search starts there) and plays the ranking greedily: in reserve
mode when the preset has selection="reserve" (with reserve_backfill, with backfilling), else as
EASY's queue order. Writes score.json.

hpcgym/Evolving-v0: the agent orders the list of Klein and Perez's list scheduling (--variant,
infX by default) by a weighted sum of nine features of each application's evolution profile;
the search starts at zero weights (the heuristic's own order) and minimises the mean log
makespan ratio to the heuristic plus --guard times how far the worst job's bounded slowdown
rises above the heuristic's. Writes order.json.

Training episodes are the env's draws on the train split. Writes search.csv and run.json too;
hpcgym bench --policy FOLDER plays it (docs/bench.md, "Score agents")."""
