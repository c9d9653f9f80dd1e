"""Linear job-scoring agents trained by direct policy search (CMA-ES).

A *score agent* ranks the queued jobs of a rigid, single-cluster preset by a linear score of
eight job features and plays the ranking greedily, through one of two schedulers:

* RLScheduler's reserve mode (the env's ``selection="reserve"``, with or without
  ``reserve_backfill``): commit to the lowest-scored job, which starts as soon as it fits
  (:class:`LinearReserve`, :class:`hpcgym.baselines.priority.PriorityReserve`'s rules);
* otherwise EASY backfilling with the queue in score order (:class:`LinearEasy`,
  :class:`hpcgym.baselines.priority.EasyPriority`'s rules).

Features of a queued job (``r`` its request time, at least 0.1 s; ``n`` its nodes; ``w`` the
time it has waited; ``s`` its submit time on the episode's clock; ``free`` the idle nodes now),
:data:`FEATURES`: ``log10(r) n / 256``, ``log10(r)``, ``n / 256``, ``log2(n)``,
``log10(1 + w)``, ``min(w / r, 100)``, ``log10(s)`` (``s`` at least 0.1) and ``[n <= free]``.
The score is ``sum(weight_i * SCALE_i * feature_i)``, lowest first, ties to the earlier
submission. Weights are kept in units of :data:`SCALE` (one unit moves a score by about F1's
spread over a queue), so ``(1, 0, 0, 0, 0, 0, 1, 0)`` is F1 (``log10(r) n + 870 log10(s)``)
exactly: the search starts there (:data:`F1_WEIGHTS`).

Training (:func:`search`, ``hpcgym search-score``): CMA-ES (the ``cma`` package) over the
eight weights, minimising the mean bounded slowdown of the greedy schedules of a fixed set of
training episodes (or the mean log of each episode's ratio to F1's: :data:`OBJECTIVES`): the
episodes the env draws on its *train* split for reset seeds
``seed * 100_000 + i``, ``i < episodes``, run on the bare engine (the same jobs and rules the
env gives; :func:`hpcgym.bench.episode.episode_for`). The best weights seen are the agent (F1's
if nothing beat them on those episodes). The same seed gives the same agent whatever the
number of worker processes.

A score agent reads the engine's state (the absolute submit time, the idle nodes), as the
baselines do; the benchmark runs it on the bare engine over exactly the env's episode, like a
baseline. Its card, ``score.json``, is JSON only: loading it runs no code.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

import numpy as np

from hpcgym._version import __version__
from hpcgym.agents.card import Card
from hpcgym.agents.engine.cmaes_pool import CandidatePool
from hpcgym.baselines.base import BaseScheduler, runtime_estimate
from hpcgym.baselines.priority import EasyPriority, PriorityReserve
from hpcgym.errors import SpecError
from hpcgym.sim import Job, Simulator

FORMAT = "hpcgym-score/1"
CARD = "score.json"
FEATURES = (
    "log10(r)*n/256",
    "log10(r)",
    "n/256",
    "log2(n)",
    "log10(1+w)",
    "min(w/r,100)",
    "log10(s)",
    "fits",
)
SCALE = (256.0, 100.0, 300.0, 50.0, 100.0, 3.0, 870.0, 200.0)
F1_WEIGHTS = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
"""The weights of F1 (in :data:`SCALE` units): the search's starting point."""
GENERATIONS = 30
"""CMA-ES generations of a search (of its default population: 10 for 8 weights)."""
EPISODES = 64
"""Training episodes of a search."""
SIGMA = 0.5
"""CMA-ES's initial step size, in weight units."""
SEED_STRIDE = 100_000
"""Training episodes of search seed ``k`` are the env's reset seeds ``k * SEED_STRIDE + i``."""
OBJECTIVES = {
    "mean": "mean of the episodes' mean bounded slowdown (train split)",
    "log-ratio": "mean over the episodes of log(mean bounded slowdown / F1's) (train split)",
}
"""What a search minimises. ``mean`` weighs the episodes by their slowdown, so the hardest few
lead; ``log-ratio`` weighs a relative gain alike in every episode (F1 scores 0), which aims at
the typical episode (the IQM, the paired win rate) rather than the mean."""


def features(jobs: Sequence[Job], now: float, free: int) -> np.ndarray:
    """One row of :data:`FEATURES` per job."""
    specs = [j.spec for j in jobs]
    r = np.array([max(runtime_estimate(s), 0.1) for s in specs])
    n = np.array([s.nodes for s in specs], dtype=float)
    submit = np.array([s.submit for s in specs])
    w = now - submit
    lr = np.log10(r)
    columns = [
        lr * n / 256,
        lr,
        n / 256,
        np.log2(n),
        np.log10(1 + w),
        np.minimum(w / r, 100),
        np.log10(np.maximum(submit, 0.1)),
        (n <= free).astype(float),
    ]
    return np.stack(columns, axis=1)


def _coefficients(weights: Sequence[float]) -> np.ndarray:
    if len(weights) != len(FEATURES) or not all(math.isfinite(w) for w in weights):
        raise SpecError(f"a score needs {len(FEATURES)} finite weights, got {list(weights)}")
    return np.asarray(weights, dtype=float) * np.asarray(SCALE)


class LinearReserve(PriorityReserve):
    """Reserve mode committing to the lowest-scored job (ties: earlier submission)."""

    name = "linear-score-reserve"

    def __init__(self, weights: Sequence[float], backfill: bool = False) -> None:
        super().__init__("fcfs", backfill)
        self.coefficients = _coefficients(weights)

    def choose(self, sim: Simulator, free: int) -> int:
        """The lowest-scored queued job."""
        jobs = _by_submission(self, sim)
        return jobs[int(np.argmin(features(jobs, sim.now, free) @ self.coefficients))].spec.id


class LinearEasy(EasyPriority):
    """EASY backfilling with the queue in score order (ties: earlier submission)."""

    name = "linear-score-easy"

    def __init__(self, weights: Sequence[float]) -> None:
        super().__init__("fcfs")
        self.coefficients = _coefficients(weights)
        self._plain = tuple(float(x) for x in self.coefficients)

    def reset(self) -> None:
        """Forget the previous episode."""
        super().reset()
        self._static: dict[int, tuple[float, float, int, float, int]] = {}

    def ranked(self, sim: Simulator) -> list[Job]:
        """The queued jobs, lowest score first.

        EASY ranks the whole queue at every decision point, so the score is split: the part
        of the features fixed at submission is computed once per job, the waiting-time and
        fit parts at each call (in plain floats: a queue is too short for numpy to pay). The
        scores equal :func:`features` times the coefficients up to the rounding of the sum.
        """
        c = self._plain
        now = sim.now
        free = sim.pool.free[0]
        seq = self._rank.seq
        static = self._static
        keyed = []
        for job in sim.queue.values():
            spec = job.spec
            got = static.get(spec.id)
            if got is None:
                r = max(runtime_estimate(spec), 0.1)
                n = spec.nodes
                lr = math.log10(r)
                base = (
                    c[0] * (lr * n / 256)
                    + c[1] * lr
                    + c[2] * (n / 256)
                    + c[3] * math.log2(n)
                    + c[6] * math.log10(max(spec.submit, 0.1))
                )
                got = static[spec.id] = (base, r, n, spec.submit, seq[spec.id])
            base, r, n, submit, order = got
            w = now - submit
            score = base + c[4] * math.log10(1 + w) + c[5] * min(w / r, 100.0)
            if n <= free:
                score += c[7]
            keyed.append((score, submit, order, job))
        keyed.sort(key=lambda k: k[:3])
        return [k[3] for k in keyed]


def ranked_by_features(sched: LinearEasy, sim: Simulator) -> list[Job]:
    """What :meth:`LinearEasy.ranked` computes, by the definition.

    :func:`features` times the coefficients, stable-sorted from submission order: the
    reference its tests and ``benchmarks/score_easy_speed.py`` compare the split score with.
    """
    jobs = _by_submission(sched, sim)
    score = features(jobs, sim.now, sim.pool.free[0]) @ sched.coefficients
    return [jobs[i] for i in np.argsort(score, kind="stable")]


def _by_submission(sched: PriorityReserve | EasyPriority, sim: Simulator) -> list[Job]:
    seq = sched._rank.seq
    return sorted(sim.queue.values(), key=lambda j: (j.spec.submit, seq[j.spec.id]))


def score_mode(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, bool]:
    """``("reserve", backfill)`` or ``("easy", False)``: how a score plays this preset.

    Raises:
        SpecError: The preset is not a rigid, single-cluster one.
    """
    from hpcgym.envs.episodes import env_config

    if env_id != "hpcgym/Rigid-v0":
        raise SpecError(
            f"score agents schedule rigid jobs on one cluster (hpcgym/Rigid-v0 and its "
            f"arguments), not {env_id}"
        )
    cfg = env_config(env_id, env_kwargs)
    if cfg.selection == "reserve":
        return "reserve", bool(cfg.reserve_backfill)
    return "easy", False


def _scheduler(weights: Sequence[float], mode: tuple[str, bool]) -> BaseScheduler:
    if mode[0] == "reserve":
        return LinearReserve(weights, mode[1])
    return LinearEasy(weights)


@dataclass(frozen=True)
class ScoreCard(Card):
    """A score agent: its weights, the preset it plays and how it was trained."""

    kind = "score"
    file_name = CARD
    format = FORMAT
    label = "a score agent card"
    features = FEATURES

    env_id: str
    env_kwargs: dict[str, Any]
    weights: tuple[float, ...]
    seed: int = 0
    training: dict[str, Any] = field(default_factory=dict)
    hpcgym_version: str = __version__

    def __post_init__(self) -> None:
        _coefficients(self.weights)
        score_mode(self.env_id, self.env_kwargs)

    def scheduler(self) -> BaseScheduler:
        """A fresh engine scheduler playing these weights in the preset's mode."""
        return _scheduler(self.weights, score_mode(self.env_id, self.env_kwargs))

    def to_json(self) -> str:
        """The card as JSON text (with its format, features and scale)."""
        body = asdict(self)
        body["weights"] = dict(zip(FEATURES, self.weights, strict=True))
        return json.dumps(
            {"format": FORMAT, "features": list(FEATURES), "scale": list(SCALE), **body},
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def fields(cls, raw: dict[str, Any], where: str) -> dict[str, Any]:
        """The weights, by feature name (the scale must be this hpcgym's)."""
        if list(raw["scale"]) != list(SCALE):
            raise ValueError("its features or scale are not this hpcgym's")
        weights = raw["weights"]
        return {"weights": tuple(float(weights[f]) for f in FEATURES)}

    def scheduler_for(self, env_id: str, env_kwargs: dict[str, Any], where: str) -> BaseScheduler:
        """A fresh scheduler for episodes of ``env_id`` (checked to be the card's mode)."""
        check_mode(self.env_id, self.env_kwargs, env_id, env_kwargs, where)
        return self.scheduler()


def check_mode(
    env_id: str, env_kwargs: dict[str, Any], other_id: str, other_kwargs: dict[str, Any], where: str
) -> None:
    """Refuse to play an agent trained in one mode on episodes of another.

    Raises:
        SpecError: Reserve with or without backfilling, or EASY order, differ.
    """
    mine = score_mode(env_id, env_kwargs)
    theirs = score_mode(other_id, other_kwargs)
    if mine != theirs:
        raise SpecError(
            f"{where} was trained in {_mode_text(mine)}; this scenario plays {_mode_text(theirs)}"
        )


def _mode_text(mode: tuple[str, bool]) -> str:
    if mode[0] == "reserve":
        return "reserve mode " + ("with" if mode[1] else "without") + " backfilling"
    return "EASY order"


# --- search -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setting:
    env_id: str
    env_kwargs_json: str
    seeds: tuple[int, ...]
    mode: tuple[str, bool]


@cache
def _episodes(setting: _Setting) -> list[tuple[Any, ...]]:
    from hpcgym.envs.episodes import env_config, episode_for
    from hpcgym.sim import SimConfig

    kwargs = json.loads(setting.env_kwargs_json)
    kill = env_config(setting.env_id, kwargs).kill_on_walltime
    out = []
    for seed in setting.seeds:
        ep = episode_for(setting.env_id, kwargs, seed)
        out.append((ep.platform, tuple(ep.jobs), SimConfig(kill_on_walltime=kill)))
    return out


def _play(setting: _Setting, weights: tuple[float, ...], index: int) -> float:
    platform, jobs, config = _episodes(setting)[index]
    sim = Simulator(platform, jobs, config)
    _scheduler(weights, setting.mode).run(sim)
    return float(sim.result().summary["mean_bsld"])


def search(
    env_id: str,
    env_kwargs: dict[str, Any],
    seed: int = 0,
    generations: int = GENERATIONS,
    episodes: int = EPISODES,
    sigma: float = SIGMA,
    workers: int = 2,
    report: Callable[[int, float, float], None] | None = None,
    objective: str = "mean",
) -> tuple[ScoreCard, list[dict[str, float]]]:
    """Search the weights with CMA-ES from F1's; return the card and the search's curve.

    Args:
        env_id: The preset (``hpcgym/Rigid-v0``).
        env_kwargs: Its arguments (``split`` is set to ``"train"``).
        seed: Seeds CMA-ES and chooses the training episodes.
        generations: CMA-ES generations.
        episodes: Training episodes.
        sigma: CMA-ES's initial step size.
        workers: Processes playing the episodes (1: this process).
        report: Called after each generation with (generation, its best, best so far).
        objective: What to minimise, a key of :data:`OBJECTIVES`.

    Raises:
        SpecError: A preset a score cannot play, a budget below one, an unknown objective,
            or ``cma`` missing.
    """
    try:
        import cma
    except ImportError:
        raise SpecError(
            "the score search needs the cma package: pip install cma (or hpcgym[rl])"
        ) from None
    if generations < 1 or episodes < 1 or workers < 1 or not sigma > 0:
        raise SpecError(
            f"generations, episodes and workers must be >= 1 and sigma > 0, got {generations}, "
            f"{episodes}, {workers} and {sigma}"
        )
    if objective not in OBJECTIVES:
        raise SpecError(f"unknown objective {objective!r}; choose one of {sorted(OBJECTIVES)}")
    kwargs = {**env_kwargs, "split": "train"}
    seeds = tuple(seed * SEED_STRIDE + i for i in range(episodes))
    mode = score_mode(env_id, kwargs)
    setting = _Setting(env_id, json.dumps(kwargs, sort_keys=True), seeds, mode)
    es = cma.CMAEvolutionStrategy(list(F1_WEIGHTS), sigma, {"seed": seed + 1, "verbose": -9})
    curve: list[dict[str, float]] = []
    t0 = time.perf_counter()
    pool = CandidatePool(_play, setting, workers, chunksize=4)

    def played(candidates: list[Any]) -> np.ndarray:
        got = pool.played(candidates, episodes)
        return np.array(got).reshape(len(candidates), episodes)

    with pool:
        f1 = played([F1_WEIGHTS])

        def measure(values: np.ndarray) -> list[float]:
            if objective == "log-ratio":
                values = np.log(values / f1)
            return [float(v) for v in values.mean(axis=1)]

        start = measure(f1)[0]  # F1's own: its mean, or 0 for log-ratio
        for g in range(generations):
            xs = es.ask()
            fs = measure(played(xs))
            es.tell(xs, fs)
            best = min(fs)
            curve.append(
                {
                    "generation": g,
                    "best": best,
                    "median": float(np.median(fs)),
                    "best_so_far": float(es.result.fbest),
                }
            )
            if report is not None:
                report(g, best, float(es.result.fbest))
    # The best weights played; F1's own when no candidate beat it on the training episodes.
    found = float(es.result.fbest)
    weights = tuple(float(w) for w in es.result.xbest) if found < start else F1_WEIGHTS
    training = {
        "method": "cma-es",
        "cma_version": cma.__version__,
        "generations": generations,
        "population": int(es.popsize),
        "episodes": episodes,
        "episode_seeds": [seeds[0], seeds[-1]],
        "sigma": sigma,
        "objective": OBJECTIVES[objective],
        "objective_name": objective,
        "f1_objective": start,
        "best_objective": min(found, start),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    card = ScoreCard(env_id, dict(env_kwargs), weights, seed, training)
    return card, curve
