"""Fitting distilled planners' networks (torch), and ``hpcgym distill``.

A distilled planner (:mod:`hpcgym.agents.engine.distill`) plays on the bare engine with numpy
and needs no torch; only fitting its network to the planner's recorded choices does. This module
holds that half: :func:`fit` (one network, Adam), :func:`fit_ensemble` (several, averaged by
:func:`~hpcgym.agents.engine.distill.merge`), :func:`build` (record and fit one agent per seed,
with DAgger rounds) and the ``hpcgym distill`` command. The older command line,
``python -m hpcgym.agents.distill``, is an alias of ``hpcgym distill``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.agents.engine.distill import (
    CARD,
    CHOICES,
    WIDTH,
    DistilledCard,
    Layers,
    choice_regret,
    merge,
    record,
)
from hpcgym.cli_checks import parse_seeds
from hpcgym.errors import SpecError


def fit(
    x: np.ndarray,
    regret_costs: np.ndarray,
    hidden: int = 32,
    epochs: int = 60,
    seed: int = 0,
    loss: str = "regret",
    batch_size: int = 512,
    learning_rate: float = 3e-3,
    holdout: float = 0.1,
) -> tuple[Layers, dict[str, Any]]:
    """Fit a network to recorded choices (torch, Adam; seeded).

    Args:
        x: ``(choices, candidates, WIDTH)`` features; rows of absent candidates are zeros.
        regret_costs: ``(choices, candidates)`` forward-play costs per sampled future (NaN for
            absent candidates).
        hidden: Units of each of the two hidden layers.
        epochs: Passes over the fitted choices.
        seed: Seeds the initial weights and the minibatch order.
        loss: ``"regret"``: the expected regret of the network's softmax over the candidates
            (the cost above the best candidate's); ``"choice"``: cross-entropy with the
            planner's choice.
        batch_size: Choices per minibatch.
        learning_rate: Adam's step size.
        holdout: The share of choices (the last ones) kept out of fitting and reported.

    Adam's step size falls linearly to zero over the epochs; the weights kept are those of the
    epoch whose greedy choices have the lowest mean regret on the held-out choices.

    Returns:
        The layers and a report (losses, held-out regret per epoch, the epoch kept, the
        held-out choices' agreement with the planner and mean regret, and F1's regret there).
    """
    import torch as th

    th.manual_seed(seed)
    rng = np.random.default_rng(seed)
    valid = ~np.isnan(regret_costs)
    best = np.where(valid, regret_costs, np.inf).min(axis=1, keepdims=True)
    regret = np.where(valid, regret_costs - best, 0.0)
    label = np.where(valid, regret_costs, np.inf)
    # The planner's choice: the first candidate within 1e-9 of the best (its tie rule).
    label = np.argmax(label <= best + 1e-9, axis=1)
    n = len(x)
    cut = int(n * (1 - holdout))
    net = th.nn.Sequential(
        th.nn.Linear(WIDTH, hidden),
        th.nn.Tanh(),
        th.nn.Linear(hidden, hidden),
        th.nn.Tanh(),
        th.nn.Linear(hidden, 1),
    ).float()
    opt = th.optim.Adam(net.parameters(), lr=learning_rate)
    X = th.as_tensor(x, dtype=th.float32)
    M = th.as_tensor(valid)
    R = th.as_tensor(regret, dtype=th.float32)
    Y = th.as_tensor(label)

    def logits(idx: Any) -> Any:
        s = net(X[idx]).squeeze(-1)
        return s.masked_fill(~M[idx], -1e9)

    def objective(idx: Any) -> Any:
        z = logits(idx)
        if loss == "regret":
            return (th.softmax(z, dim=1) * R[idx]).sum(dim=1).mean()
        return th.nn.functional.cross_entropy(z, Y[idx])

    def held_picks() -> np.ndarray:
        with th.no_grad():
            return np.asarray(logits(th.arange(cut, n)).argmax(dim=1).numpy())

    rows = np.arange(cut, n)
    # The step size falls linearly to zero; the epoch whose greedy choices have the lowest
    # held-out regret is kept (the last one when nothing is held out).
    sched = th.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 - e / epochs)
    losses, held = [], []
    kept: tuple[float, int, list[Any]] | None = None
    for epoch in range(epochs):
        order = rng.permutation(cut)
        total = 0.0
        for lo in range(0, cut, batch_size):
            idx = th.as_tensor(order[lo : lo + batch_size])
            value = objective(idx)
            opt.zero_grad()
            value.backward()
            opt.step()
            total += float(value.detach()) * len(idx)
        sched.step()
        losses.append(total / max(1, cut))
        score = float(regret[rows, held_picks()].mean()) if n > cut else -epoch
        held.append(score)
        if kept is None or score < kept[0]:
            kept = (score, epoch, [p.detach().clone() for p in net.parameters()])
    assert kept is not None
    with th.no_grad():
        for p, value in zip(net.parameters(), kept[2], strict=True):
            p.copy_(value)
    pick = held_picks()
    layers = [
        (m.weight.detach().numpy().T.astype(np.float64), m.bias.detach().numpy().astype(np.float64))
        for m in net
        if isinstance(m, th.nn.Linear)
    ]
    report = {
        "choices": n,
        "fitted": cut,
        "loss": loss,
        "losses": [round(v, 6) for v in losses],
        "held_regrets": [round(v, 6) for v in held] if n > cut else [],
        "kept_epoch": kept[1],
        "held_agreement": float((pick == label[cut:]).mean()) if n > cut else None,
        "held_regret": float(regret[rows, pick].mean()) if n > cut else None,
        "held_regret_f1": float(regret[cut:, 0].mean()) if n > cut else None,
        "held_f1_is_choice": float((label[cut:] == 0).mean()) if n > cut else None,
    }
    return layers, report


def fit_ensemble(
    x: np.ndarray, regret_costs: np.ndarray, members: int = 5, seed: int = 0, **kwargs: Any
) -> tuple[list[Layers], list[dict[str, Any]]]:
    """:func:`fit` ``members`` times (seeds ``seed * 1000 + i``): the networks and reports.

    One network's choices vary much with its seed; the mean of several networks' scores
    (:func:`merge`) varies less (``studies/rlscheduler-agents.md``, "A distilled planner").
    """
    fits = [fit(x, regret_costs, seed=seed * 1000 + i, **kwargs) for i in range(members)]
    return [layers for layers, _ in fits], [report for _, report in fits]


def _choices(
    path: Path, settings: dict[str, Any], make: Callable[[], tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """The recorded choices at ``path`` if recorded with ``settings``, else ``make()`` saved."""
    from hpcgym.atomic import write_bytes

    if path.is_file():
        with np.load(path) as d:
            if json.loads(str(d["settings"])) == settings:
                return d["x"], d["costs"]
        raise SpecError(
            f"{path} holds choices recorded with other settings; move it away to record anew"
        )
    x, costs = make()
    buf = io.BytesIO()
    np.savez_compressed(buf, x=x, costs=costs, settings=json.dumps(settings, sort_keys=True))
    write_bytes(path, buf.getvalue())
    return x, costs


def build(
    out: str,
    seeds: Sequence[int],
    backfill: bool,
    workload: str = "rlsched/lublin256-v0",
    sequences: int = 400,
    length: int = 256,
    members: int = 5,
    hidden: int = 32,
    epochs: int = 60,
    workers: int = 2,
    rounds: int = 1,
) -> list[str]:
    """Record the planner's choices and fit one distilled planner per seed (a sweep folder).

    Seed ``k``: ``sequences`` sequences of ``length`` jobs drawn uniformly inside the train
    split of ``workload`` (generator seeded ``k``), the planner (the shipped settings, sampling
    seed ``k``) records its choices there (``<out>/s<k>/choices.npz``, kept: a run stopped
    after recording resumes from it), and an ensemble of ``members`` networks fitted to them
    (:func:`fit_ensemble`, seed ``k``) becomes ``<out>/s<k>/distilled.json``. Cards already
    there are never overwritten.

    With ``rounds`` above 1, DAgger: in round ``r`` (1, 2, ...) the ensemble fitted so far
    plays ``sequences`` new sequences (generator seeded ``[k, r]``) while the planner's costs
    are noted at the states it reaches (``choices-r<r>.npz``, kept likewise), and the ensemble
    is fitted again to every round's choices; the card holds the last ensemble and, per round,
    the regret of the followed ensemble's choices and of F1's at those states.

    Raises:
        SpecError: A card exists, or recorded choices there have other settings.
    """
    from hpcgym.atomic import write_text
    from hpcgym.baselines.rlsched_setting import rlsched_kwargs
    from hpcgym.workloads.registry import load
    from hpcgym.workloads.splits import time_splits

    if not isinstance(rounds, int) or rounds < 1:
        raise SpecError(f"rounds must be an integer of at least 1, not {rounds!r}")
    kwargs = rlsched_kwargs(workload, backfill)
    folders = [Path(out) / f"s{k}" for k in seeds]
    there = [str(f / CARD) for f in folders if (f / CARD).exists()]
    if there:
        raise SpecError(f"distilled cards exist, not overwritten: {', '.join(there)}")
    train = time_splits(load(workload))["train"]
    hi = train.stop - length + 1
    written = []
    for k, folder in zip(seeds, folders, strict=True):
        settings = {
            "workload": workload,
            "split": "train",
            "sequences": sequences,
            "length": length,
            "backfill": backfill,
            "seed": k,
            "planner": {"candidates": 4, "horizon": 64, "samples": 32, "align": True},
        }
        folder.mkdir(parents=True, exist_ok=True)
        xs: list[np.ndarray] = []
        cs: list[np.ndarray] = []
        dagger: list[dict[str, Any]] = []
        networks: list[Layers] = []
        for r in range(rounds):
            follow = merge(networks) if r else None
            path, at = folder / CHOICES, settings
            starts = np.random.default_rng(k).integers(train.first, hi, sequences)
            if follow is not None:
                text = json.dumps([[w.tolist(), b.tolist()] for w, b in follow])
                sha = hashlib.sha256(text.encode()).hexdigest()
                path, at = folder / f"choices-r{r}.npz", {**settings, "round": r, "follow": sha}
                starts = np.random.default_rng([k, r]).integers(train.first, hi, sequences)
            make = partial(
                record,
                workload,
                starts.tolist(),
                length,
                backfill,
                k,
                workers=workers,
                follow=follow,
            )
            x, costs = _choices(path, at, make)
            if follow is not None:
                mine, f1 = choice_regret(follow, x, costs)
                dagger.append({"round": r, "choices": len(x), "regret": mine, "regret_f1": f1})
            xs.append(x)
            cs.append(costs)
            networks, reports = fit_ensemble(
                np.concatenate(xs),
                np.concatenate(cs) / 32,
                members,
                seed=k,
                hidden=hidden,
                epochs=epochs,
            )
        training = {
            **settings,
            "members": members,
            "hidden": hidden,
            "epochs": epochs,
            "loss": "regret",
            "reports": reports,
        }
        if rounds > 1:
            training["rounds"] = rounds
            training["dagger"] = dagger
        card = DistilledCard(
            "hpcgym/Rigid-v0",
            kwargs,
            [[[w.tolist(), b.tolist()] for w, b in net] for net in networks],
            4,
            k,
            training,
        )
        write_text(folder / CARD, card.to_json() + "\n")
        written.append(str(folder / CARD))
    return written


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hpcgym distill`` to the ``hpcgym`` command line (:mod:`hpcgym.agents.cli`)."""
    p = subparsers.add_parser(
        "distill",
        help="record a planner's choices and fit distilled planners (small networks), one per seed",
        description="Record the planner's choices on sequences of a workload's train split and "
        "fit distilled planners (one per seed) into a sweep folder, <out>/s<seed>/"
        "distilled.json; the recorded choices are kept beside each card and reused by a rerun.",
        epilog="examples:\n  hpcgym distill --out sweeps/distilled-bf --backfill --seeds 0-2\n"
        "  hpcgym distill --out sweeps/distilled-dagger-bf --backfill --seeds 0-2 --rounds 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, help="the sweep folder (s<seed>/distilled.json)")
    p.add_argument("--seeds", default="0-2", help="seeds: 0-2, or 0,3,5")
    p.add_argument("--backfill", action="store_true", help="reserve mode with backfilling")
    p.add_argument(
        "--workload",
        default="rlsched/lublin256-v0",
        help="the workload whose train split is recorded",
    )
    p.add_argument("--sequences", type=int, default=400, help="recorded sequences per seed")
    p.add_argument("--length", type=int, default=256, help="jobs per recorded sequence")
    p.add_argument("--members", type=int, default=5, help="networks averaged per agent")
    p.add_argument("--hidden", type=int, default=32, help="hidden units per network")
    p.add_argument("--epochs", type=int, default=60, help="training epochs per network")
    p.add_argument("--workers", type=int, default=2, help="parallel recording processes")
    p.add_argument(
        "--rounds", type=int, default=1, help="DAgger: rounds where the networks play (1: none)"
    )
    p.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    """Run ``hpcgym distill``: build the distilled planners, print their cards' paths."""
    paths = build(
        args.out,
        parse_seeds(args.seeds),
        args.backfill,
        args.workload,
        args.sequences,
        args.length,
        args.members,
        args.hidden,
        args.epochs,
        args.workers,
        args.rounds,
    )
    print("\n".join(paths))
    return 0
