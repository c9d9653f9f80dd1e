"""Planner agents: RLScheduler's reserve mode choosing by forward plays over sampled futures.

A planner plays F1's reserve mode (``f1-reserve``, or ``f1-reserve-bf`` with backfilling) but
chooses the job to commit to by looking ahead. At each choice with more than one queued job
it takes F1's ``candidates`` best-ranked jobs and, for each, plays the future forward: that
candidate first, then F1's rule, the running jobs ending at their estimated ends, over the
visible queue plus ``horizon`` future arrivals. A scheduler does not know the future, so the
arrivals are *sampled* from a pool of past jobs (its model of the workload: a split of a
registered workload, by default a train split): ``samples`` runs of ``horizon`` consecutive
pool jobs, their arrival gaps kept, the first arriving one gap after now; with ``align``, only
runs that start within half an hour of now's time of day. Every candidate plays against the
same samples; the planner commits to the one with the lowest total bounded slowdown (ties:
F1's choice). Its model is data, not weights: nothing is trained beyond choosing the four
settings on sequences the tests never use (``studies/probes/rollout_probe.py``).

The forward plays (:func:`forward_cost`, :func:`forward_cost_backfill`) are the engine's rules
exactly: played from an empty machine over a sequence's true arrivals they give the engine's
``f1-reserve(-bf)`` schedule (tested, also from mid-episode states).

Choices (``studies/rlscheduler-agents.md``, "A planner with sampled futures"):

- Pool jobs take the episode's machine: node counts are scaled by the ratio of the two
  machines' nodes, rounded, between 1 and the episode's nodes.
- When the episode's jobs come from the pool's own workload (RLScheduler's published lublin_256
  sequences, drawn from the whole trace, train split included), no sampled run contains a job
  of the episode: the planner never samples the future it is scored on. The episode's jobs are
  known from :meth:`LookaheadReserve.setting` (``simulate`` and the benchmark call it).
- The sampling is seeded per episode, from the card's seed and the episode's first job, so an
  episode's schedule does not depend on which other episodes ran or in what order.

A planner card, ``planner.json``, is JSON only: loading it runs no code. It plays on the bare
engine over the env's episode, as score agents (:mod:`hpcgym.agents.engine.score`) and baselines do.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym._version import __version__
from hpcgym.agents.card import Card
from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.priority import F1_SUBMIT_WEIGHT, MIN_TIME, PriorityReserve
from hpcgym.cli_checks import parse_seeds, whole
from hpcgym.errors import SpecError
from hpcgym.sim import Job, JobSpec, SimConfig, Simulator
from hpcgym.sim.planning import shadow

FORMAT = "hpcgym-planner/1"
CARD = "planner.json"
TAU = 10.0
"""Seconds: the bounded slowdown's threshold (the engine's default ``bsld_tau``)."""
DAY = 86_400.0
ALIGN = 1_800.0
"""Seconds: with ``align``, a sampled run starts within this of now's time of day."""

Item = tuple[float, float, float, int]
"""A job in a forward play: ``(F1 key, submit, run estimate, nodes)``."""


def item(submit: float, run: float, nodes: int) -> Item:
    """The job as a forward play sees it (F1's key as ``f1_score`` computes it)."""
    key = math.log10(run if run > 0 else MIN_TIME) * nodes + F1_SUBMIT_WEIGHT * math.log10(
        submit if submit > 0 else MIN_TIME
    )
    return (key, submit, run, nodes)


def _bsld(wait_and_run: float, run: float) -> float:
    return max(1.0, wait_and_run / max(run, TAU))


def forward_cost(
    now: float,
    free: int,
    releases: Sequence[tuple[float, int]],
    queue: Sequence[Item],
    first: int,
    arrivals: Sequence[Item],
) -> float:
    """Total bounded slowdown of ``queue`` and ``arrivals`` played forward by F1's reserve rule.

    Args:
        now: The time of the choice.
        free: Idle nodes now.
        releases: ``(estimated end, nodes)`` of the running jobs.
        queue: The queued jobs.
        first: The index in ``queue`` of the job committed to now.
        arrivals: Future jobs, by submit time (each joins the queue at its submit time).

    Without backfilling: the committed job starts at the earliest time it fits, then the
    best-ranked queued job is committed to, and so on.
    """
    heap = list(releases)
    heapq.heapify(heap)
    waiting = [x for i, x in enumerate(queue) if i != first]
    heapq.heapify(waiting)
    t, cost, a, na = now, 0.0, 0, len(arrivals)
    nxt = queue[first]
    while True:
        _, submit, run, n = nxt
        while free < n:
            end, size = heapq.heappop(heap)
            t = max(t, end)
            free += size
        free -= n
        heapq.heappush(heap, (t + run, n))
        cost += _bsld(t - submit + run, run)
        while a < na and arrivals[a][1] <= t:
            heapq.heappush(waiting, arrivals[a])
            a += 1
        if not waiting:
            if a == na:
                return cost
            t = max(t, arrivals[a][1])
            heapq.heappush(waiting, arrivals[a])
            a += 1
        nxt = heapq.heappop(waiting)


def forward_cost_backfill(
    now: float,
    free: int,
    releases: Sequence[tuple[float, int]],
    queue: Sequence[Item],
    first: int,
    arrivals: Sequence[Item],
) -> float:
    """As :func:`forward_cost`, by F1's reserve rule *with* backfilling (``f1-reserve-bf``).

    While the committed job does not fit, its reservation is the earliest estimated end by
    which enough nodes are free (fixed until it starts); then, and at every later event (an end
    or an arrival), any waiting job, in submission order, starts if it fits now and ends
    strictly before the reservation.
    """
    heap = list(releases)
    heapq.heapify(heap)
    waiting = sorted((x for i, x in enumerate(queue) if i != first), key=lambda x: x[1])
    t, cost, a, na = now, 0.0, 0, len(arrivals)
    chosen: Item | None = queue[first]
    limit = shadow(t, free, queue[first][3], sorted(heap))[0]
    # Waiting jobs before ``scan`` were refused at an earlier event with as many free nodes and
    # the same reservation, and later is no better: only the rest need looking at (exactly the
    # engine's scan of every waiting job, in fewer steps).
    scan = 0
    while True:
        while chosen is not None and chosen[3] <= free:
            _, submit, run, n = chosen
            free -= n
            heapq.heappush(heap, (t + run, n))
            cost += _bsld(t - submit + run, run)
            chosen = min(waiting) if waiting else None
            if chosen is not None:
                waiting.remove(chosen)
                limit = shadow(t, free, chosen[3], sorted(heap))[0]
                scan = 0
        if chosen is None:
            if a == na:
                return cost
        else:
            i = scan
            while i < len(waiting) and free > 0:
                _, submit, run, n = waiting[i]
                if n <= free and t + run < limit:
                    free -= n
                    heapq.heappush(heap, (t + run, n))
                    cost += _bsld(t - submit + run, run)
                    del waiting[i]
                else:
                    i += 1
        # The next event: an end or an arrival (every one at that instant).
        nxt = heap[0][0] if heap else math.inf
        if a < na and arrivals[a][1] < nxt:
            nxt = arrivals[a][1]
        t = nxt
        scan = len(waiting)
        while heap and heap[0][0] <= t:
            free += heapq.heappop(heap)[1]
            scan = 0
        while a < na and arrivals[a][1] <= t:
            waiting.append(arrivals[a])
            a += 1
        if chosen is None and waiting:
            chosen = min(waiting)
            waiting.remove(chosen)
            limit = shadow(t, free, chosen[3], sorted(heap))[0]
            scan = 0


class LookaheadReserve(PriorityReserve):
    """F1's reserve mode choosing among F1's best candidates by forward plays (module doc).

    Args:
        pool: The jobs futures are sampled from, in submission order.
        pool_nodes: The nodes of the pool's machine (node counts are scaled to the episode's).
        candidates: F1's best-ranked jobs compared at a choice (1 plays F1).
        horizon: Future arrivals per sampled run (0: the visible queue alone).
        samples: Sampled runs per choice.
        seed: Seeds the sampling (with the episode's first job).
        align: Sample only runs that start within :data:`ALIGN` of now's time of day.
        backfill: Play and look ahead with ``f1-reserve-bf``'s backfilling.
        skip_own: Never sample a run holding a job of the episode (the pool's workload is the
            episode's; jobs are matched by id).
    """

    name = "lookahead-reserve"

    def __init__(
        self,
        pool: Sequence[JobSpec],
        pool_nodes: int,
        candidates: int = 4,
        horizon: int = 64,
        samples: int = 32,
        seed: int = 0,
        align: bool = True,
        backfill: bool = False,
        skip_own: bool = False,
    ) -> None:
        for name, value, least in (
            ("candidates", candidates, 1),
            ("horizon", horizon, 0),
            ("samples", samples, 1),
            ("pool_nodes", pool_nodes, 1),
        ):
            if not isinstance(value, int) or value < least:
                raise SpecError(f"{name} must be an integer of at least {least}, not {value!r}")
        if horizon > 0 and len(pool) <= horizon:
            raise SpecError(
                f"the pool holds {len(pool)} jobs, too few for runs of {horizon} arrivals"
            )
        super().__init__("f1", backfill)
        self.pool = list(pool)
        self.pool_nodes = pool_nodes
        self.candidates, self.horizon, self.samples = candidates, horizon, samples
        self.seed, self.align, self.skip_own = seed, align, skip_own
        self.forward = forward_cost_backfill if backfill else forward_cost
        self._submits = np.array([j.submit for j in self.pool])
        self._own: frozenset[int] = frozenset()

    def __repr__(self) -> str:
        return (
            f"LookaheadReserve(candidates={self.candidates}, horizon={self.horizon}, "
            f"samples={self.samples}, align={self.align}, backfill={self.backfill})"
        )

    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """Note the episode's job ids (for ``skip_own``); the jobs and settings are kept."""
        self._own = frozenset(j.id for j in jobs) if self.skip_own else frozenset()
        return jobs, config

    def reset(self) -> None:
        """Forget the previous episode (the sampler is set up at the first choice)."""
        super().reset()
        self._rng: np.random.Generator | None = None
        self._items: list[tuple[float, float, int]] = []
        self._starts = np.zeros(0, dtype=np.int64)

    def _prepare(self, sim: Simulator, first_id: int) -> None:
        nodes = sim.platform.clusters[0].nodes
        scale = nodes / self.pool_nodes
        self._items = [
            (j.submit, runtime_estimate(j), min(nodes, max(1, round(j.nodes * scale))))
            for j in self.pool
        ]
        h = self.horizon
        starts = np.arange(1, len(self.pool) - h + 1)
        if self._own and h > 0:
            # A run [i - 1, i + h) is refused if it holds an episode job.
            own = np.array([j.id in self._own for j in self.pool], dtype=np.int64)
            total = np.concatenate(([0], np.cumsum(own)))
            starts = starts[total[starts + h] - total[starts - 1] == 0]
            if len(starts) == 0:
                raise SpecError(
                    "every run of the pool holds a job of this episode: use a pool of other jobs"
                )
        self._starts = starts
        self._rng = np.random.default_rng([self.seed, first_id])

    def _futures(self, now: float) -> list[list[Item]]:
        h = self.horizon
        if h == 0:
            return [[]]
        assert self._rng is not None
        s = self._submits
        starts = self._starts
        if self.align:
            off = (s[starts] - now) % DAY
            near = starts[np.minimum(off, DAY - off) < ALIGN]
            starts = near if len(near) else starts
        out = []
        for i in self._rng.choice(starts, self.samples):
            base = s[i - 1]
            out.append([item(now + sub - base, run, n) for sub, run, n in self._items[i : i + h]])
        return out

    def choose(self, sim: Simulator, free: int) -> int:
        """The candidate whose forward plays total the lowest bounded slowdown."""
        now = sim.now
        rank = self._rank
        ranked = sorted(sim.queue.values(), key=lambda j: rank.key(j, now))
        if self._rng is None:
            self._prepare(sim, min(j.spec.id for j in ranked))
        if len(ranked) == 1 or self.candidates == 1:
            return ranked[0].spec.id
        return ranked[cheapest(self.costs(sim, free, ranked))].spec.id

    def costs(self, sim: Simulator, free: int, ranked: Sequence[Job]) -> list[float]:
        """The forward plays' total bounded slowdown for each of F1's best-ranked jobs.

        Args:
            sim: The engine at the choice.
            free: Idle nodes now.
            ranked: The queued jobs in F1's order (the first ``candidates`` are compared).
        """
        now = sim.now
        releases = [(estimated_end(sim, j), j.size) for j in sim.running.values()]
        queue = [item(j.spec.submit, runtime_estimate(j.spec), j.spec.nodes) for j in ranked]
        futures = self._futures(now)
        return [
            sum(self.forward(now, free, releases, queue, c, f) for f in futures)
            for c in range(min(self.candidates, len(ranked)))
        ]


def cheapest(costs: Sequence[float]) -> int:
    """The index of the lowest cost; a later one wins only by more than 1e-9 (ties: F1's)."""
    best, best_cost = 0, math.inf
    for c, cost in enumerate(costs):
        if cost < best_cost - 1e-9:
            best, best_cost = c, cost
    return best


@cache
def _pool(workload: str, split: str) -> tuple[tuple[JobSpec, ...], int]:
    from hpcgym.workloads.registry import load
    from hpcgym.workloads.splits import time_splits

    w = load(workload)
    if split == "all":
        jobs = w.jobs
    else:
        splits = time_splits(w)
        if split not in splits:
            raise SpecError(f"unknown split {split!r}; known: all, {', '.join(splits)}")
        part = splits[split]
        jobs = w.jobs[part.first : part.stop]
    return tuple(jobs), w.platform.clusters[0].nodes


PLANNER_RANGES = {
    "candidates": (1, 1_000),
    "horizon": (0, 1_000_000),
    "samples": (1, 1_000_000),
    "seed": (0, 2**32 - 1),
}
"""The settings a planner card may hold (beyond them a card is refused, not played)."""


@dataclass(frozen=True)
class PlannerCard(Card):
    """A planner agent: its settings, its pool and the preset it plays."""

    kind = "planner"
    file_name = CARD
    format = FORMAT
    label = "a planner card"

    env_id: str
    env_kwargs: dict[str, Any]
    pool_workload: str
    pool_split: str = "train"
    candidates: int = 4
    horizon: int = 64
    samples: int = 32
    align: bool = True
    seed: int = 0
    training: dict[str, Any] = field(default_factory=dict)
    hpcgym_version: str = __version__

    def __post_init__(self) -> None:
        from hpcgym.agents.engine.score import score_mode

        if score_mode(self.env_id, self.env_kwargs)[0] != "reserve":
            raise SpecError("planner agents play reserve mode (selection='reserve') only")

    @property
    def backfill(self) -> bool:
        """Whether the preset backfills (``reserve_backfill``)."""
        from hpcgym.agents.engine.score import score_mode

        return score_mode(self.env_id, self.env_kwargs)[1]

    def scheduler(self, env_kwargs: dict[str, Any] | None = None) -> BaseScheduler:
        """A fresh engine scheduler for episodes of ``env_kwargs`` (default: the card's)."""
        pool, nodes = _pool(self.pool_workload, self.pool_split)
        episode_workload = (env_kwargs if env_kwargs is not None else self.env_kwargs).get(
            "workload"
        )
        return LookaheadReserve(
            pool,
            nodes,
            self.candidates,
            self.horizon,
            self.samples,
            self.seed,
            self.align,
            self.backfill,
            skip_own=episode_workload == self.pool_workload,
        )

    def to_json(self) -> str:
        """The card as JSON text."""
        return json.dumps({"format": FORMAT, **asdict(self)}, indent=2, sort_keys=True)

    @classmethod
    def fields(cls, raw: dict[str, Any], where: str) -> dict[str, Any]:
        """The pool, the search's settings (each in its range) and the seed."""
        names: tuple[str, ...] = ("candidates", "horizon", "samples", "seed")
        ints: dict[str, Any] = {k: whole(raw[k], k, *PLANNER_RANGES[k]) for k in names if k in raw}
        return {
            "pool_workload": str(raw["pool_workload"]),
            "pool_split": str(raw.get("pool_split", "train")),
            "align": bool(raw.get("align", True)),
            **ints,
        }

    def scheduler_for(self, env_id: str, env_kwargs: dict[str, Any], where: str) -> BaseScheduler:
        """A fresh scheduler for episodes of ``env_id`` (checked to be the card's mode)."""
        from hpcgym.agents.engine.score import check_mode

        check_mode(self.env_id, self.env_kwargs, env_id, env_kwargs, where)
        return self.scheduler(env_kwargs)


def write_planners(
    out: str,
    seeds: Sequence[int],
    backfill: bool,
    pool_workload: str = "rlsched/lublin256-v0",
    pool_split: str = "train",
    candidates: int = 4,
    horizon: int = 64,
    samples: int = 32,
    align: bool = True,
    training: dict[str, Any] | None = None,
) -> list[str]:
    """Write one planner card per seed, ``<out>/s<seed>/planner.json`` (a sweep folder).

    The preset is RLScheduler's reserve mode on ``pool_workload`` (with or without
    backfilling). Cards already there are never overwritten.

    Raises:
        SpecError: A card exists, or a setting is invalid (checked on the pool first).
    """
    from hpcgym.atomic import write_text
    from hpcgym.baselines.rlsched_setting import rlsched_kwargs

    kwargs = rlsched_kwargs(pool_workload, backfill)
    cards = [
        PlannerCard(
            "hpcgym/Rigid-v0",
            kwargs,
            pool_workload,
            pool_split,
            candidates,
            horizon,
            samples,
            align,
            seed,
            dict(training or {}),
        )
        for seed in seeds
    ]
    cards[0].scheduler()  # the pool and settings are valid
    paths = [Path(out) / f"s{card.seed}" / CARD for card in cards]
    there = [str(p) for p in paths if p.exists()]
    if there:
        raise SpecError(f"planner cards exist, not overwritten: {', '.join(there)}")
    for card, path in zip(cards, paths, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, card.to_json() + "\n")
    return [str(p) for p in paths]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hpcgym write-planners`` to the ``hpcgym`` command line (:mod:`hpcgym.agents.cli`)."""
    p = subparsers.add_parser(
        "write-planners",
        help="write planner agent cards (F1's reserve mode choosing by forward plays over "
        "sampled futures), one per sampling seed",
        description="Write planner agent cards (one per sampling seed) into a sweep folder, "
        "<out>/s<seed>/planner.json. Nothing is trained: a planner's model is a pool of past "
        "jobs. Cards already there are never overwritten.",
        epilog="examples:\n  hpcgym write-planners --out sweeps/planner-bf --backfill --seeds 0-2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, help="the sweep folder (s<seed>/planner.json)")
    p.add_argument("--seeds", default="0-2", help="sampling seeds: 0-2, or 0,3,5")
    p.add_argument("--backfill", action="store_true", help="reserve mode with backfilling")
    p.add_argument("--pool", default="rlsched/lublin256-v0", help="the pool's workload")
    p.add_argument("--split", default="train", help="the pool's split (or all)")
    p.add_argument("--candidates", type=int, default=4, help="F1's best jobs played forward")
    p.add_argument("--horizon", type=int, default=64, help="future arrivals per sample")
    p.add_argument("--samples", type=int, default=32, help="sampled futures per choice")
    p.add_argument("--no-align", action="store_true", help="sample runs at any time of day")
    p.add_argument("--note", default="", help="recorded in each card's training record")
    p.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    """Run ``hpcgym write-planners``: write the cards, print their paths."""
    paths = write_planners(
        args.out,
        parse_seeds(args.seeds),
        args.backfill,
        args.pool,
        args.split,
        args.candidates,
        args.horizon,
        args.samples,
        not args.no_align,
        {"note": args.note} if args.note else None,
    )
    print("\n".join(paths))
    return 0
