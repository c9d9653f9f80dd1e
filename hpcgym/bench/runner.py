"""Run policies on scenario episodes, serially, in local processes or on Ray, in task order.

A task is ``(scenario, policy, seed)``; its outcome depends on nothing else (episodes are drawn
from the seed, ``random`` is seeded with it, agents act deterministically), and outcomes are
returned in the order of :func:`plan`, so the tables are the same whatever the executor and the
number of workers.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.bench.episode import run_episode
from hpcgym.bench.policies import policy_kind, policy_label
from hpcgym.bench.scenarios import Scenario
from hpcgym.errors import SpecError

EXECUTORS = ("auto", "process", "serial", "ray")


@dataclass(frozen=True)
class Task:
    """One episode to run; ``detail`` asks for the timeline and the Gantt chart too."""

    scenario: Scenario
    policy: str
    seed: int
    detail: bool


@dataclass(frozen=True)
class TaskOutcome:
    """A task's tidy row, its per-job table and, for detailed tasks, timeline and Gantt."""

    row: dict[str, Any]
    jobs: pd.DataFrame
    timeline: pd.DataFrame | None
    gantt: np.ndarray | None


def plan(scenarios: Sequence[Scenario], policies: Sequence[str] | None = None) -> list[Task]:
    """Tasks in a fixed order: scenario, then policy, then seed; the first seed is detailed."""
    tasks = []
    for sc in scenarios:
        chosen = list(policies) if policies else list(sc.policies)
        for p in chosen:
            policy_kind(p)  # fail early on an unknown name
        for p in chosen:
            tasks += [Task(sc, p, s, i == 0) for i, s in enumerate(sc.seeds)]
    return tasks


def run_task(task: Task) -> TaskOutcome:
    """Run one task (in whatever process the executor chose)."""
    if policy_kind(task.policy) == "agent":
        import torch

        torch.set_num_threads(1)  # one episode per worker: intra-op threads only contend
    sc = task.scenario
    out = run_episode(task.policy, sc.env_id, task.seed, sc.env_kwargs, gantt=task.detail)
    row: dict[str, Any] = {
        "scenario": sc.name,
        "env_id": sc.env_id,
        "policy": policy_label(task.policy),
        "seed": task.seed,
        "path": out.path,
        "steps": out.steps,
        "truncated": out.truncated,
        "kill_on_walltime": out.kill_on_walltime,
        "invalid_actions": out.invalid_actions,
    }
    row.update(out.summary)
    jobs = out.jobs[["id", "kind", "state", "wait", "bsld", "slowdown", "reconfigurations"]]
    jobs.insert(0, "seed", task.seed)
    jobs.insert(0, "policy", row["policy"])
    jobs.insert(0, "scenario", sc.name)
    timeline = out.timeline if task.detail else None
    return TaskOutcome(row, jobs.reset_index(drop=True), timeline, out.gantt)


def ray_available() -> bool:
    """Whether ``ray`` can be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


class _DropTokenNotice(logging.Filter):
    """Drops Ray's notice that token authentication is on (the default, and what we want).

    Its warning that authentication is *off* still gets through.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Token authentication is enabled")


RAY_TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"


def _run_ray(tasks: Sequence[Task], workers: int) -> list[TaskOutcome]:
    import ray

    if not ray.is_initialized():
        token_log = logging.getLogger(RAY_TOKEN_LOGGER)
        notice = _DropTokenNotice()
        token_log.addFilter(notice)
        try:
            ray.init(num_cpus=workers, ignore_reinit_error=True, include_dashboard=False)
        finally:
            token_log.removeFilter(notice)
    remote = ray.remote(run_task)
    return list(ray.get([remote.remote(t) for t in tasks]))


def execute(tasks: Sequence[Task], executor: str = "auto", workers: int = 2) -> list[TaskOutcome]:
    """Outcomes of ``tasks``, in their order.

    Args:
        tasks: From :func:`plan`.
        executor: ``process`` (a local pool of ``workers`` processes), ``serial``, ``ray`` (a Ray
            cluster: the one ``ray.init`` finds, else a local one), or ``auto`` (Ray when it is
            importable, else processes).
        workers: Local processes (or CPUs of a local Ray).
    """
    if executor not in EXECUTORS:
        raise SpecError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    if executor == "auto":
        executor = "ray" if ray_available() else "process"
    if executor == "ray":
        if not ray_available():
            raise SpecError("executor 'ray' needs ray installed (pip install 'ray[default]')")
        return _run_ray(tasks, workers)
    if executor == "serial" or workers <= 1 or len(tasks) <= 1:
        return [run_task(t) for t in tasks]
    # forkserver: a fork of a parent that already runs torch threads can deadlock.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["hpcgym.bench.runner"])  # workers fork with imports done
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        return list(pool.map(run_task, tasks))


def results_table(outcomes: Sequence[TaskOutcome]) -> pd.DataFrame:
    """One row per episode, in task order."""
    return pd.DataFrame([o.row for o in outcomes])


def jobs_table(outcomes: Sequence[TaskOutcome]) -> pd.DataFrame:
    """One row per job of every episode, in task order."""
    return pd.concat([o.jobs for o in outcomes], ignore_index=True)
