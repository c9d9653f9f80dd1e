"""Where episodes come from: a window of a workload set, chosen with the env's generator."""

from __future__ import annotations

import json
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.seeding import np_random

from hpcgym.envs.config import EnvConfig
from hpcgym.envs.table import JobTable
from hpcgym.errors import SpecError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec, fits_machine, smallest_need
from hpcgym.workloads import load
from hpcgym.workloads.splits import DEFAULT_FRACTIONS, Split, time_splits, window_starts
from hpcgym.workloads.workload import ProvenanceStep, Workload

CACHE_JOBS = 200_000
"""Jobs the per-process workload cache may hold (least recently used workloads go first)."""

_CACHE: OrderedDict[tuple[str, int, str], tuple[Workload, JobTable]] = OrderedDict()
_SPLITS: dict[int, tuple[Workload, dict[str, Split]]] = {}


def load_cached(name: str, seed: int, options: Mapping[str, Any]) -> tuple[Workload, JobTable]:
    """``hpcgym.workloads.load`` and the workload's job table, with a per-process cache.

    Workloads are immutable, so every env of a process shares one copy per (set, seed,
    options); generated sets in ``"seeded"`` episodes are built once per seed, not per reset.
    """
    key = (name, int(seed), json.dumps(dict(options), sort_keys=True))
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    w = load(name, int(seed), **dict(options))
    entry = _CACHE[key] = (w, JobTable.build(w.jobs))
    total = sum(len(v[0].jobs) for v in _CACHE.values())
    while total > CACHE_JOBS and len(_CACHE) > 1:
        _, (old, _) = _CACHE.popitem(last=False)
        total -= len(old.jobs)
    return entry


_FITTED: dict[tuple[int, tuple[int, ...], int], tuple[Workload, Workload, JobTable, int]] = {}


def workload_for(cfg: EnvConfig, seed: int) -> tuple[Workload, JobTable]:
    """The workload an env of ``cfg`` plays for set seed ``seed``, and its job table.

    With ``cfg.platform`` ``None`` it is the set's workload on its own machine. With a platform
    named, every job must be able to run on it: otherwise a ``SpecError`` names how many cannot
    and the widest, unless ``cfg.drop_oversized``, which leaves them out (a warning says how
    many, once per workload and platform).

    Raises:
        SpecError: Jobs that could never run on the named platform, without ``drop_oversized``.
    """
    w, table = load_cached(cfg.workload, seed, cfg.workload_options)
    if cfg.platform is None:
        return w, table
    key = (id(w), tuple(cfg.platform), int(cfg.cores))
    hit = _FITTED.get(key)
    if hit is not None and hit[0] is w:
        return hit[1], hit[2]
    largest = max(cfg.platform)
    out = [j for j in w.jobs if not fits_machine(j, largest)]
    if not out:
        fitted, fitted_table = w, table
    elif not cfg.drop_oversized:
        widest = max(out, key=smallest_need)
        own = ", ".join(str(c.nodes) for c in w.platform.clusters)
        raise SpecError(
            f"{len(out)} of the {len(w.jobs)} jobs of {cfg.workload!r} can never run on the "
            f"platform {list(cfg.platform)} (the widest, job {widest.id}, needs "
            f"{smallest_need(widest)} nodes; the largest cluster has {largest}): leave platform "
            f"out (None) to use the trace's own machine ({own} nodes), name a larger one, or "
            "pass drop_oversized=True to leave those jobs out"
        )
    else:
        keep = [j for j in w.jobs if fits_machine(j, largest)]
        step = ProvenanceStep.make("drop_oversized", platform=list(cfg.platform))
        rows = None if w.rows is None else w.rows[[fits_machine(j, largest) for j in w.jobs]]
        fitted = w.derive(keep, step, rows=rows)
        fitted_table = JobTable.build(fitted.jobs)
        warnings.warn(
            f"{cfg.workload!r}: left out {len(out)} of {len(w.jobs)} jobs that can never run on "
            f"the platform {list(cfg.platform)} (drop_oversized=True)",
            stacklevel=2,
        )
    if len(_FITTED) > 64:
        _FITTED.clear()
    _FITTED[key] = (w, fitted, fitted_table, len(out))
    return fitted, fitted_table


def dropped_jobs(cfg: EnvConfig, seed: int) -> int:
    """Jobs :func:`workload_for` left out of the workload for ``cfg`` and ``seed``."""
    w, _ = load_cached(cfg.workload, seed, cfg.workload_options)
    if cfg.platform is None:
        return 0
    workload_for(cfg, seed)
    hit = _FITTED.get((id(w), tuple(cfg.platform), int(cfg.cores)))
    return 0 if hit is None else hit[3]


def splits_of(w: Workload) -> dict[str, Split]:
    """The workload's train / validation / test splits (cached per workload object)."""
    hit = _SPLITS.get(id(w))
    if hit is None or hit[0] is not w:
        if len(_SPLITS) > 64:
            _SPLITS.clear()
        hit = _SPLITS[id(w)] = (w, time_splits(w, DEFAULT_FRACTIONS))
    return hit[1]


def split_seeds(name: str, n_seeds: int) -> range:
    """The set seeds of split ``name`` in ``"seeded"`` mode: its share of ``[0, n_seeds)``."""
    lo, hi = DEFAULT_FRACTIONS[name]
    seeds = range(int(lo * n_seeds), int(hi * n_seeds))
    if not seeds:
        raise SpecError(f"n_seeds={n_seeds} leaves the {name} split no seed; raise n_seeds")
    return seeds


@dataclass(frozen=True, slots=True)
class Episode:
    """The jobs and platform of one episode, and how they were chosen (for replay)."""

    jobs: tuple[JobSpec, ...]
    table: JobTable
    platform: Platform
    workload_seed: int
    start: int


def _option_int(name: str, value: object, least: int) -> int:
    """A reset option as an ``int >= least``; a ``SpecError`` otherwise (as the constructor)."""
    if (
        isinstance(value, int | np.integer)
        and not isinstance(value, bool | np.bool_)
        and value >= least
    ):
        return int(value)
    raise SpecError(f"reset option {name} must be an integer >= {least}, got {value!r}")


def choose_episode(
    cfg: EnvConfig, rng: np.random.Generator, options: Mapping[str, Any] | None
) -> Episode:
    """Pick the episode's jobs.

    ``options`` may fix ``"start"`` (first job index of the window), ``"workload_seed"`` and
    ``"n_jobs"``; what is not fixed is drawn from ``rng`` (a window's start among
    ``cfg.window_starts`` when given).
    """
    opts = dict(options or {})
    unknown = sorted(set(opts) - {"start", "workload_seed", "n_jobs"})
    if unknown:
        raise SpecError(f"reset options {unknown} unknown; use start, workload_seed, n_jobs")
    # ``None`` means "not fixed", as when the option is left out.
    opts = {k: v for k, v in opts.items() if v is not None}
    for name, least in (("n_jobs", 1), ("start", 0), ("workload_seed", 0)):
        if name in opts:
            opts[name] = _option_int(name, opts[name], least)
    n_jobs = opts.get("n_jobs", cfg.n_jobs)
    if cfg.episode == "seeded":
        seed = opts.get("workload_seed")
        if seed is None:
            if cfg.split is None:
                seed = int(rng.integers(0, cfg.n_seeds))
            else:
                seeds = split_seeds(cfg.split, cfg.n_seeds)
                seed = seeds[int(rng.integers(0, len(seeds)))]
    else:
        seed = int(opts.get("workload_seed", cfg.workload_seed))
    w, table = workload_for(cfg, seed)
    total = len(w.jobs)
    lo, hi = 0, total  # the jobs an episode's window may cover
    if cfg.split is not None and cfg.episode == "window":
        part = splits_of(w)[cfg.split]
        lo, hi = part.first, part.stop
    where = "" if cfg.split is None or cfg.episode != "window" else f" (the {cfg.split} split)"
    if n_jobs is not None and n_jobs > hi - lo and hi > lo:
        raise SpecError(
            f"n_jobs={n_jobs} but {cfg.workload!r}{where} holds {hi - lo} jobs: an episode "
            f"replays the workload's jobs and cannot make more. Use n_jobs <= {hi - lo}, "
            "or n_jobs=None for all of them"
        )
    n = hi - lo if n_jobs is None else int(n_jobs)
    if n < 1:
        what = f"the {cfg.split} split of {cfg.workload!r}" if where else repr(cfg.workload)
        raise SpecError(
            f"{what} holds no job, and an episode needs at least one: check the workload "
            "(hpcgym workloads show shows its jobs and the records it skipped)"
        )
    if "start" in opts:
        start = int(opts["start"])
        if not lo <= start <= hi - n:
            raise SpecError(f"reset option start must be in [{lo}, {hi - n}]{where}, got {start}")
    elif cfg.episode == "window" and cfg.window_starts is not None:
        starts = cfg.window_starts
        bad = [s for s in starts if not lo <= s <= hi - n]
        if bad:
            raise SpecError(
                f"window_starts {bad} leave the jobs [{lo}, {hi}){where} or fewer than {n} "
                f"jobs (starts must be in [{lo}, {hi - n}])"
            )
        start = starts[int(rng.integers(0, len(starts)))]
    elif cfg.episode == "window":
        start = int(rng.integers(lo, hi - n + 1))
    else:
        start = 0
    platform = w.platform if cfg.platform is None else Platform.multi(cfg.platform, cfg.cores)
    return Episode(w.jobs[start : start + n], table.slice(start, start + n), platform, seed, start)


def env_config(env_id: str, env_kwargs: dict[str, Any]) -> EnvConfig:
    """The ``EnvConfig`` ``gym.make(env_id, **env_kwargs)`` would build."""
    spec = gym.spec(env_id)
    return EnvConfig.from_kwargs({**spec.kwargs, **env_kwargs})


def dropped_record(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """What ``drop_oversized`` left out of the env's workload, for a ``run.json``.

    ``None`` unless the env names a platform and asks to drop the jobs that never fit it;
    otherwise the platform, the workload's job count and how many of its jobs were left out
    (counted on the workload seed, the trace the episodes come from).
    """
    cfg = env_config(env_id, env_kwargs)
    if cfg.platform is None or not cfg.drop_oversized:
        return None
    w, _ = load_cached(cfg.workload, cfg.workload_seed, cfg.workload_options)
    return {
        "workload": cfg.workload,
        "platform": list(cfg.platform),
        "jobs": len(w.jobs),
        "dropped_jobs": dropped_jobs(cfg, cfg.workload_seed),
    }


def episode_for(env_id: str, env_kwargs: dict[str, Any], seed: int) -> Episode:
    """The episode ``ClusterEnv.reset(seed=seed)`` draws (same generator, same choice)."""
    rng, _ = np_random(seed)
    return choose_episode(env_config(env_id, env_kwargs), rng, None)


def disjoint_starts(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """Every disjoint window's first job in the split ``env_kwargs`` names, back to back.

    The episodes of a judged scenario (``hpcgym.bench.judged``) and of ``hpcgym train
    --eval-windows disjoint``: no two share a job.

    Raises:
        SpecError: ``env_kwargs`` names no split, or the episodes are not windows.
    """
    kwargs = {k: v for k, v in env_kwargs.items() if k != "window_starts"}
    cfg = env_config(env_id, kwargs)
    if cfg.split is None or cfg.episode != "window" or cfg.n_jobs is None:
        raise SpecError(
            f"disjoint windows need window episodes of a trace, a split and a number of jobs; "
            f"{env_id} with these arguments has episode={cfg.episode!r}, split={cfg.split!r}, "
            f"n_jobs={cfg.n_jobs!r}"
        )
    w, _ = workload_for(cfg, cfg.workload_seed)
    return tuple(window_starts(splits_of(w)[cfg.split], cfg.n_jobs))
