"""Distilled planners: a small network that chooses as the planner would, without looking ahead.

The planner (:class:`hpcgym.agents.engine.lookahead.LookaheadReserve`) compares F1's best-ranked
queued jobs by playing sampled futures forward: 12-14 CPU seconds per 1,024-job sequence, and a
pool of past jobs to sample from. A *distilled planner* makes the same kind of choice from what
the scheduler sees now: a network scores each of F1's ``candidates`` best-ranked jobs from
:data:`CANDIDATE_FEATURES` and :data:`STATE_FEATURES` (below), and the reserve mode commits to
the best-scored one (ties: F1's order). It is trained on the planner's own choices on
train-split sequences (:func:`record`): each choice's features and the planner's forward-play
cost of every candidate, fitted by minimising the expected regret of the network's softmax over
the candidates, the regret of a candidate being how much more its forward plays cost than the
best one's, per sampled future. Fitting needs torch, so it lives apart with ``hpcgym distill``
(:mod:`hpcgym.agents.rl.distill_fit`); this module plays and records with numpy only.

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

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from hpcgym._version import __version__
from hpcgym.agents.card import Card
from hpcgym.agents.engine.lookahead import LookaheadReserve, cheapest
from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.cli_checks import whole
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


# --- recording the planner's choices -----------------------------------------------------


class Recorder(LookaheadReserve):
    """The planner, noting at each choice the candidates' features and forward-play costs.

    It plays exactly as :class:`LookaheadReserve` with the same arguments (tested), unless
    ``follow`` names a network: then it commits to that network's choice, as
    :class:`DistilledReserve` would (tested), and notes the planner's costs at the states the
    network reaches (DAgger's recording: :func:`hpcgym.agents.rl.distill_fit.build` with
    ``rounds > 1``).

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
    from hpcgym.agents.engine.lookahead import _pool
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
        from hpcgym.agents.engine.score import score_mode

        if score_mode(self.env_id, self.env_kwargs)[0] != "reserve":
            raise SpecError("distilled planners play reserve mode (selection='reserve') only")
        self.scheduler()  # the network chains

    @property
    def backfill(self) -> bool:
        """Whether the preset backfills (``reserve_backfill``)."""
        from hpcgym.agents.engine.score import score_mode

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
        from hpcgym.agents.engine.score import check_mode

        check_mode(self.env_id, self.env_kwargs, env_id, env_kwargs, where)
        return self.scheduler()


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
