"""Distilled planners: a small network that chooses as the planner would, without looking ahead.

The planner (:class:`hpcgym.agents.lookahead.LookaheadReserve`) compares F1's best-ranked
queued jobs by playing sampled futures forward: 12-14 CPU seconds per 1,024-job sequence, and a
pool of past jobs to sample from. A *distilled planner* makes the same kind of choice from what
the scheduler sees now: a network scores each of F1's ``candidates`` best-ranked jobs from
:data:`CANDIDATE_FEATURES` and :data:`STATE_FEATURES` (below), and the reserve mode commits to
the best-scored one (ties: F1's order). It is trained on the planner's own choices on
train-split sequences (:func:`record`): each choice's features and the planner's forward-play
cost of every candidate, fitted by minimising the expected regret of the network's softmax over
the candidates (:func:`fit`), the regret of a candidate being how much more its forward plays
cost than the best one's, per sampled future.

Features of a candidate job (``r`` its run estimate, at least 0.1 s; ``n`` its nodes; ``N`` the
machine's nodes; ``free`` the idle nodes now), :data:`CANDIDATE_FEATURES`:

- its rank in F1's order, over ``candidates - 1``;
- ``log10(r) / 5``, ``n / N``, whether it fits now, ``log10(1 + n r / N) / 5`` (its area);
- ``log10(1 + d) / 5``, ``d`` the seconds until it would start if committed to now (the
  running jobs ending at their estimated ends);
- ``log10(1 + w) / 6``, ``w`` the time it has waited;
- ``log2(1 + b) / 8``, ``b`` the other queued jobs that fit now and would end before it starts
  (what backfilling could run meanwhile);
- ``asinh((k - k0) / 100) / 5``, its F1 key's distance from the best-ranked job's.

Features of the state, the same for every candidate, :data:`STATE_FEATURES`: ``free / N``,
``log2(1 + q) / 10`` (``q`` queued jobs), ``log10(1 + A / N) / 6`` (``A`` the queued jobs'
area), ``log10(1 + R / N) / 6`` (``R`` the running jobs' estimated remaining area), and the
time of day on the episode's clock as its sine and cosine.

A distilled card, ``distilled.json``, holds the network's weights as JSON numbers: loading it
runs no code, and the benchmark plays it on the bare engine over the env's episode, as score
and planner agents.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym._version import __version__
from hpcgym.agents.card import Card
from hpcgym.agents.lookahead import LookaheadReserve, cheapest
from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.cli_checks import parse_seeds, run_alias, whole
from hpcgym.errors import SpecError
from hpcgym.sim import Job, JobSpec, Platform, Simulator
from hpcgym.sim.planning import shadow

FORMAT = "hpcgym-distilled/1"
CARD = "distilled.json"
CHOICES = "choices.npz"

CANDIDATE_FEATURES = (
    "rank",
    "log10(r)",
    "n/N",
    "fits",
    "log10(1+n*r/N)",
    "log10(1+delay)",
    "log10(1+wait)",
    "log2(1+backfillable)",
    "asinh(dkey/100)",
)
STATE_FEATURES = (
    "free/N",
    "log2(1+queued)",
    "log10(1+queued area/N)",
    "log10(1+running area/N)",
    "sin(day)",
    "cos(day)",
)
WIDTH = len(CANDIDATE_FEATURES) + len(STATE_FEATURES)
DAY = 86_400.0


def choice_features(
    sim: Simulator, free: int, ranked: Sequence[Job], keys: Sequence[float], candidates: int
) -> np.ndarray:
    """Features of F1's ``candidates`` best-ranked queued jobs, one row each (``WIDTH`` wide).

    Args:
        sim: The engine at the choice.
        free: Idle nodes now (jobs started at this decision point deducted).
        ranked: The queued jobs in F1's order.
        keys: Their F1 keys.
        candidates: How many of them are compared (the rows).
    """
    now = sim.now
    total = sim.platform.clusters[0].nodes
    releases = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
    runs = np.array([runtime_estimate(j.spec) for j in ranked])
    nodes = np.array([j.spec.nodes for j in ranked], dtype=np.float64)
    remaining = sum(max(0.0, end - now) * n for end, n in releases)
    day = 2 * math.pi * (now % DAY) / DAY
    state = [
        free / total,
        math.log2(1 + len(ranked)) / 10,
        math.log10(1 + float(runs @ nodes) / total) / 6,
        math.log10(1 + remaining / total) / 6,
        math.sin(day),
        math.cos(day),
    ]
    k = min(candidates, len(ranked))
    fits_now = nodes <= free
    rows = np.empty((k, WIDTH))
    for c in range(k):
        r, n = runs[c], int(nodes[c])
        delay = shadow(now, free, n, releases)[0] - now
        before = fits_now & (runs < delay)
        b = int(before.sum()) - int(before[c])
        rows[c, : len(CANDIDATE_FEATURES)] = (
            c / max(1, candidates - 1),
            math.log10(r) / 5,
            n / total,
            float(n <= free),
            math.log10(1 + n * r / total) / 5,
            math.log10(1 + delay) / 5,
            math.log10(1 + max(0.0, now - ranked[c].spec.submit)) / 6,
            math.log2(1 + b) / 8,
            math.asinh((keys[c] - keys[0]) / 100) / 5,
        )
        rows[c, len(CANDIDATE_FEATURES) :] = state
    return rows


def scores(layers: Sequence[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """The network's score of each row of ``x`` (tanh hidden layers, a linear output)."""
    h = x
    for w, b in layers[:-1]:
        h = np.tanh(h @ w + b)
    w, b = layers[-1]
    return (h @ w + b)[:, 0]


class DistilledReserve(PriorityReserve):
    """F1's reserve mode committing to the best-scored of F1's ``candidates`` best jobs.

    Args:
        layers: The network's ``(weights, bias)`` per layer (``WIDTH`` inputs, one output).
        candidates: F1's best-ranked jobs compared at a choice.
        backfill: Play ``f1-reserve-bf``'s backfilling.
    """

    name = "distilled-reserve"

    def __init__(
        self,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        candidates: int = 4,
        backfill: bool = False,
    ) -> None:
        if not isinstance(candidates, int) or candidates < 1:
            raise SpecError(f"candidates must be an integer of at least 1, not {candidates!r}")
        width = WIDTH
        for i, (w, b) in enumerate(layers):
            if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                raise SpecError(f"layer {i}: weights {w.shape} and bias {b.shape} do not chain")
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise SpecError(f"layer {i} holds a weight that is not a finite number")
            width = w.shape[1]
        if width != 1:
            raise SpecError(f"the network must end in one output, not {width}")
        super().__init__("f1", backfill)
        self.layers = [(np.asarray(w, float), np.asarray(b, float)) for w, b in layers]
        self.candidates = candidates

    def __repr__(self) -> str:
        return f"DistilledReserve(candidates={self.candidates}, backfill={self.backfill})"

    def choose(self, sim: Simulator, free: int) -> int:
        """The candidate the network scores highest (ties: F1's order)."""
        now = sim.now
        rank = self._rank
        keyed = sorted((rank.key(j, now), j) for j in sim.queue.values())
        if len(keyed) == 1 or self.candidates == 1:
            return keyed[0][1].spec.id
        ranked = [j for _, j in keyed]
        x = choice_features(sim, free, ranked, [k[0] for k, _ in keyed], self.candidates)
        return ranked[int(np.argmax(scores(self.layers, x)))].spec.id


Layers = list[tuple[np.ndarray, np.ndarray]]


def layers_from_json(raw: Sequence[Sequence[Sequence[Any]]]) -> Layers:
    """The network written as ``[[weights, bias], ...]`` (nested lists of numbers)."""
    try:
        return [(np.array(w, dtype=np.float64), np.array(b, dtype=np.float64)) for w, b in raw]
    except (TypeError, ValueError) as e:
        raise SpecError(f"not a network's layers ({e})") from None


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


def merge(networks: Sequence[Layers]) -> Layers:
    """One network scoring the mean of ``networks``' scores (all of the same shape).

    The members' hidden layers sit side by side (block-diagonal weights) and the output
    averages theirs, so an ensemble is stored and played as a single network.
    """
    if not networks:
        raise SpecError("no networks to merge")
    shapes = {tuple(w.shape for w, _ in net) for net in networks}
    if len(shapes) != 1:
        raise SpecError(f"networks of different shapes cannot be merged: {sorted(shapes)}")
    k = len(networks)
    merged: Layers = []
    for i in range(len(networks[0])):
        ws = [net[i][0] for net in networks]
        bs = [net[i][1] for net in networks]
        if i == 0:
            merged.append((np.hstack(ws), np.concatenate(bs)))
        elif i < len(networks[0]) - 1:
            rows, cols = ws[0].shape
            w = np.zeros((rows * k, cols * k))
            for j, wj in enumerate(ws):
                w[j * rows : (j + 1) * rows, j * cols : (j + 1) * cols] = wj
            merged.append((w, np.concatenate(bs)))
        else:
            merged.append((np.vstack(ws) / k, np.sum(bs, axis=0) / k))
    return merged


def fit_ensemble(
    x: np.ndarray, regret_costs: np.ndarray, members: int = 5, seed: int = 0, **kwargs: Any
) -> tuple[list[Layers], list[dict[str, Any]]]:
    """:func:`fit` ``members`` times (seeds ``seed * 1000 + i``): the networks and reports.

    One network's choices vary much with its seed; the mean of several networks' scores
    (:func:`merge`) varies less (``studies/rlscheduler-agents.md``, "A distilled planner").
    """
    fits = [fit(x, regret_costs, seed=seed * 1000 + i, **kwargs) for i in range(members)]
    return [layers for layers, _ in fits], [report for _, report in fits]


# --- recording the planner's choices -----------------------------------------------------


class Recorder(LookaheadReserve):
    """The planner, noting at each choice the candidates' features and forward-play costs.

    It plays exactly as :class:`LookaheadReserve` with the same arguments (tested), unless
    ``follow`` names a network: then it commits to that network's choice, as
    :class:`DistilledReserve` would (tested), and notes the planner's costs at the states the
    network reaches (DAgger's recording: :func:`build` with ``rounds > 1``).

    Args:
        follow: The layers of a network to play (``None``: play the planner).
        *args, **kwargs: :class:`LookaheadReserve`'s.
    """

    def __init__(self, *args: Any, follow: Layers | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if follow is not None:
            DistilledReserve(follow, self.candidates)  # checks the network
        self.follow = follow

    def reset(self) -> None:
        """Forget the previous episode and its choices."""
        super().reset()
        self.rows: list[tuple[np.ndarray, list[float]]] = []

    def choose(self, sim: Simulator, free: int) -> int:
        """The planner's choice, recorded."""
        now = sim.now
        keyed = sorted((self._rank.key(j, now), j) for j in sim.queue.values())
        ranked: list[Job] = [j for _, j in keyed]
        if self._rng is None:
            self._prepare(sim, min(j.spec.id for j in ranked))
        if len(ranked) == 1 or self.candidates == 1:
            return ranked[0].spec.id
        costs = self.costs(sim, free, ranked)
        x = choice_features(sim, free, ranked, [k[0] for k, _ in keyed], self.candidates)
        self.rows.append((x, costs))
        if self.follow is not None:
            return ranked[int(np.argmax(scores(self.follow, x)))].spec.id
        return ranked[cheapest(costs)].spec.id


def record_sequence(
    sched: Recorder, platform: Platform, jobs: Sequence[JobSpec]
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``sched`` over ``jobs`` (RLScheduler's settings); its choices as arrays.

    Returns:
        ``(x, costs)``: features ``(choices, candidates, WIDTH)`` (zero rows for absent
        candidates) and each candidate's total forward-play cost (NaN when absent).
    """
    from hpcgym.baselines.rlsched_setting import CONFIG

    jobs_, config = sched.setting(jobs, CONFIG)
    sim = Simulator(platform, jobs_, config)
    sched.run(sim)
    k = sched.candidates
    x = np.zeros((len(sched.rows), k, WIDTH))
    costs = np.full((len(sched.rows), k), np.nan)
    for i, (rows, c) in enumerate(sched.rows):
        x[i, : len(rows)] = rows
        costs[i, : len(c)] = c
    return x, costs


def _record_one(
    task: tuple[str, str, int, int, bool, int, int, int, int, Layers | None],
) -> tuple[np.ndarray, np.ndarray]:
    workload, split, first, length, backfill, seed, candidates, horizon, samples, follow = task
    from hpcgym.agents.lookahead import _pool
    from hpcgym.workloads.registry import load

    pool, nodes = _pool(workload, split)
    w = load(workload)
    sched = Recorder(
        pool, nodes, candidates, horizon, samples, seed, True, backfill, True, follow=follow
    )
    return record_sequence(sched, w.platform, w.jobs[first : first + length])


def record(
    workload: str,
    starts: Sequence[int],
    length: int,
    backfill: bool,
    seed: int,
    candidates: int = 4,
    horizon: int = 64,
    samples: int = 32,
    workers: int = 2,
    follow: Layers | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The planner's choices on the sequences ``workload.jobs[s : s + length]``.

    The planner samples its futures from ``workload``'s train split, never a run holding a job
    of the sequence it plays, with sampling seed ``seed``. With ``follow``, that network plays
    and the planner's costs are noted at the states it reaches (:class:`Recorder`).

    Returns:
        ``(x, costs)``: features ``(choices, candidates, WIDTH)`` (zero rows for absent
        candidates) and each candidate's total forward-play cost (NaN when absent).
    """
    from concurrent.futures import ProcessPoolExecutor

    tasks = [
        (workload, "train", s, length, backfill, seed, candidates, horizon, samples, follow)
        for s in starts
    ]
    if workers <= 1:
        parts = [_record_one(t) for t in tasks]
    else:
        with ProcessPoolExecutor(workers) as ex:
            parts = list(ex.map(_record_one, tasks))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# --- cards ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistilledCard(Card):
    """A distilled planner: its network, the preset it plays and how it was trained.

    ``members`` holds the networks whose scores are averaged (:func:`merge`), each as its
    layers ``[[weights, bias], ...]`` in nested lists of numbers (inputs along the weights'
    rows).
    """

    kind = "distilled"
    file_name = CARD
    format = FORMAT
    label = "a distilled planner card"
    features = (*CANDIDATE_FEATURES, *STATE_FEATURES)

    env_id: str
    env_kwargs: dict[str, Any]
    members: list[list[list[Any]]]
    candidates: int = 4
    seed: int = 0
    training: dict[str, Any] = field(default_factory=dict)
    hpcgym_version: str = __version__

    def __post_init__(self) -> None:
        from hpcgym.agents.score import score_mode

        if score_mode(self.env_id, self.env_kwargs)[0] != "reserve":
            raise SpecError("distilled planners play reserve mode (selection='reserve') only")
        self.scheduler()  # the network chains

    @property
    def backfill(self) -> bool:
        """Whether the preset backfills (``reserve_backfill``)."""
        from hpcgym.agents.score import score_mode

        return score_mode(self.env_id, self.env_kwargs)[1]

    def scheduler(self) -> BaseScheduler:
        """A fresh engine scheduler playing the network in the preset's mode."""
        if not isinstance(self.members, list) or not self.members:
            raise SpecError("a distilled card needs at least one network in members")
        networks = [layers_from_json(m) for m in self.members]
        return DistilledReserve(merge(networks), self.candidates, self.backfill)

    def to_json(self) -> str:
        """The card as JSON text (with its format and feature names)."""
        body = {
            "format": FORMAT,
            "features": [*CANDIDATE_FEATURES, *STATE_FEATURES],
            **asdict(self),
        }
        return json.dumps(body, indent=1, sort_keys=True)

    @classmethod
    def fields(cls, raw: dict[str, Any], where: str) -> dict[str, Any]:
        """The networks and the candidates each choice scores."""
        return {
            "members": list(raw["members"]),
            "candidates": whole(raw.get("candidates", 4), "candidates", 1),
        }

    def scheduler_for(self, env_id: str, env_kwargs: dict[str, Any], where: str) -> BaseScheduler:
        """A fresh scheduler for episodes of ``env_id`` (checked to be the card's mode)."""
        from hpcgym.agents.score import check_mode

        check_mode(self.env_id, self.env_kwargs, env_id, env_kwargs, where)
        return self.scheduler()


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


def choice_regret(network: Layers, x: np.ndarray, costs: np.ndarray) -> tuple[float, float]:
    """The mean regret per sampled future of ``network``'s picks and of F1's.

    Args:
        network: The layers scoring the candidates.
        x: Recorded features ``(choices, candidates, WIDTH)``.
        costs: The candidates' total forward-play costs over 32 sampled futures (NaN: absent).
    """
    valid = ~np.isnan(costs)
    best = np.where(valid, costs, np.inf).min(axis=1)
    s = scores(network, x.reshape(-1, x.shape[2])).reshape(costs.shape)
    pick = np.argmax(np.where(valid, s, -np.inf), axis=1)
    mine = costs[np.arange(len(costs)), pick] - best
    return float(mine.mean() / 32), float((costs[:, 0] - best).mean() / 32)


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


if __name__ == "__main__":  # the older command line: an alias of ``hpcgym distill``
    raise SystemExit(run_alias(register, ["distill", *sys.argv[1:]]))
