"""``hpcgym search-score``: train linear job-scoring agents by CMA-ES (:mod:`hpcgym.agents.score`).

A run folder holds ``score.json`` (the agent: weights, preset, training record), ``search.csv``
(per generation: its best, median and the best so far, mean bounded slowdown on the training
episodes) and ``run.json`` (what produced it: :mod:`hpcgym.agents.runrecord`). ``--seeds``
writes one folder per seed, ``<out>/s<seed>``, which ``hpcgym bench --policy <out>`` plays as one
policy. A folder that holds a run is refused unless ``--overwrite`` (replace it) or
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

from hpcgym.agents.runrecord import RUN_JSON, RunRecord
from hpcgym.agents.saved import write_atomic
from hpcgym.agents.score import (
    CARD,
    EPISODES,
    GENERATIONS,
    OBJECTIVES,
    SIGMA,
    is_score_agent,
    search,
)
from hpcgym.cli_checks import at_least, env_kwargs_arg, known_env_id, writable_folder
from hpcgym.errors import SpecError

FILES = (CARD, "search.csv", RUN_JSON)
"""What a search writes into its run folder (and ``--overwrite`` replaces)."""


def _prepare(folder: Path, overwrite: bool, resume: bool) -> bool:
    """Whether to search into ``folder`` (``False``: a finished run ``resume`` keeps)."""
    held = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if not held:
        return True
    if resume:  # unfinished: search again; run.json keeps the stopped attempt's segment
        return not is_score_agent(folder)
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

    try:
        card, curve = search(
            args.env,
            env_kwargs,
            seed,
            args.generations,
            args.episodes,
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
    write_atomic(folder / "search.csv", text.getvalue())
    write_atomic(folder / CARD, card.to_json() + "\n")
    record.close("finished", None)
    t = card.training
    print(
        f"seed {seed}: {t['best_objective']:.3f} against F1's {t['f1_objective']:.3f} "
        f"({t['objective_name']}) on {t['episodes']} training episodes, {t['seconds']} s; "
        f"agent: {folder / CARD}"
    )


def run(args: argparse.Namespace) -> int:
    """The ``search-score`` command."""
    known_env_id(args.env)
    at_least("--generations", args.generations, 1)
    at_least("--episodes", args.episodes, 1)
    at_least("--workers", args.workers, 1)
    if args.resume and args.overwrite:
        raise SpecError("--resume keeps finished seeds and --overwrite replaces them: choose one")
    env_kwargs = env_kwargs_arg(args.env_kwargs)  # bad JSON is refused before any work
    command = ["hpcgym", *(args.argv if args.argv is not None else sys.argv[1:])]
    out = Path(args.out)
    writable_folder(out)
    if args.seeds is None:
        _search_one(args, env_kwargs, args.seed, out, command)
        return 0
    from hpcgym.agents.sweep import parse_seeds

    for seed in parse_seeds(args.seeds):
        _search_one(args, env_kwargs, seed, out / f"s{seed}", command)
    print(f"benchmark every seed as one policy: hpcgym bench --policy {out} ...")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``search-score`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "search-score",
        help="train a linear job-scoring agent by CMA-ES (rigid presets; e.g. reserve mode)",
        description=_DETAILS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--env", default="hpcgym/Rigid-v0", help="registered env id (rigid only)")
    p.add_argument("--env-kwargs", default=None, help="JSON object of preset arguments")
    p.add_argument("--seed", type=int, default=0, help="seed of the search and its episodes")
    p.add_argument("--seeds", default=None, metavar="LIST", help="one search per seed, e.g. 0-4")
    p.add_argument("--generations", type=int, default=GENERATIONS, help="CMA-ES generations")
    p.add_argument("--episodes", type=int, default=EPISODES, help="training episodes")
    p.add_argument("--sigma", type=float, default=SIGMA, help="initial step size (weight units)")
    p.add_argument(
        "--objective",
        choices=sorted(OBJECTIVES),
        default="mean",
        help="mean: mean bounded slowdown over the episodes; log-ratio: mean log of each "
        "episode's ratio to F1's (weighs every episode's relative gain alike)",
    )
    p.add_argument("--workers", type=int, default=2, help="processes playing the episodes")
    p.add_argument("--out", required=True, help="run folder (with --seeds: <out>/s<seed>)")
    p.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    p.add_argument("--resume", action="store_true", help="keep finished seeds, search the rest")
    p.set_defaults(func=run)


_DETAILS = """\
Train a linear job-scoring agent by direct policy search (CMA-ES), seeded.

The agent ranks queued jobs by a weighted sum of eight job features (F1 is one point of the
family, and the search starts there) and plays the ranking greedily: in reserve mode when the
preset has selection="reserve" (with reserve_backfill, with backfilling), else as EASY's queue
order. Training episodes are the env's draws on the train split. Writes score.json,
search.csv and run.json; hpcgym bench --policy FOLDER plays it (docs/bench.md, "Score agents")."""
