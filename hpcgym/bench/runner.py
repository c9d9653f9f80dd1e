"""Run policies on scenario episodes, serially, in local processes or on Ray, in task order.

A task is ``(scenario, policy, seed)`` (a seed sweep's policy is one task per member and seed,
labelled with the sweep's name and the member's training seed); its outcome depends on nothing
else (episodes are drawn from the seed, ``random`` is seeded with it, agents act
deterministically), and outcomes are returned in the order of :func:`plan`, so the tables are
the same whatever the executor and the number of workers. Each finished task is handed to a
callback as soon as it is done (the bench stores it there, so an interrupted run loses nothing),
and a task that raises becomes a :class:`TaskFailure` (its error and traceback) instead of
stopping the others.

Which executor ``auto`` picks (:func:`resolve_executor`): Ray only when a Ray cluster is attached
(``RAY_ADDRESS`` or ``ray_address``), since a local Ray spreads the work over the same cores as
the process pool and pays its start-up on top; otherwise a pool of ``workers`` processes, or
this process alone when there is one worker or one task.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hpcgym.bench.episode import run_episode, score_scheduler
from hpcgym.bench.policy_names import (
    policy_kind,
    policy_label,
    policy_labels,
    sweep_members,
    trust_pickled,
)
from hpcgym.bench.scenarios import Scenario
from hpcgym.errors import SpecError

EXECUTORS = ("auto", "process", "serial", "ray")

JOB_COLUMNS = (
    "id",
    "kind",
    "state",
    "submit",
    "start",
    "end",
    "requested_nodes",
    "max_nodes_held",
    "wait",
    "bsld",
    "slowdown",
    "reconfigurations",
    "preemptions",
)
"""Columns of ``jobs.csv`` after scenario, policy and seed (``hpcgym.sim.metrics`` defines them;
``wait`` of a job that never started runs to the episode's end, see ``hpcgym.bench.episode``)."""


@dataclass(frozen=True)
class Task:
    """One episode to run; ``detail`` asks for the timeline and the Gantt chart too."""

    scenario: Scenario
    policy: str
    seed: int
    detail: bool
    label: str = ""
    """The policy's name in the tables (default: :func:`policy_label` of ``policy``)."""
    train_seed: int | None = None
    """The training seed of a sweep member (a stratum of the interval tables)."""
    trust_pickle: bool = False
    """The policy is a pickled SB3 agent the user trusts (``--trust-pickle``): whatever process
    runs the task may unpickle it."""

    @property
    def name(self) -> str:
        """The policy's name in the tables."""
        return self.label or policy_label(self.policy)

    @property
    def cell_name(self) -> str:
        """The name of this policy's stored cells: a sweep member's carries its seed."""
        return self.name if self.train_seed is None else f"{self.name}@s{self.train_seed}"


@dataclass(frozen=True)
class TaskOutcome:
    """A task's tidy row, its per-job table and, for detailed tasks, timeline and Gantt."""

    row: dict[str, Any]
    jobs: pd.DataFrame
    timeline: pd.DataFrame | None
    gantt: np.ndarray | None
    cpu_seconds: float = 0.0
    """CPU time the task took in its worker (for ``run.json``; not part of the tables)."""


@dataclass(frozen=True)
class TaskFailure:
    """A task that raised: who, where, which seed, the error and its traceback."""

    scenario: str
    policy: str
    seed: int
    error: str
    traceback: str


Outcome = TaskOutcome | TaskFailure
OnDone = Callable[[int, Outcome], None]
"""Called in this process with a task's index in the plan and its outcome, as each finishes."""


def plan(scenarios: Sequence[Scenario], policies: Sequence[str] | None = None) -> list[Task]:
    """Tasks in a fixed order: scenario, then policy, then seed; the first seed is detailed."""
    tasks = []
    for sc in scenarios:
        chosen = list(policies) if policies else list(sc.policies)
        if not chosen:
            raise SpecError(
                f"scenario {sc.name}: no policies to run (it has none of its own and none were "
                "given); name some, e.g. --policy easy"
            )
        kinds = [policy_kind(p) for p in chosen]  # fail early on an unknown name
        labels = policy_labels(chosen)  # and on a policy given twice
        for p, kind, label in zip(chosen, kinds, labels, strict=True):
            members: list[tuple[int | None, str | Path]] = (
                list(sweep_members(p)) if kind == "sweep" else [(None, p)]
            )
            for _, member in members:  # a score agent of another mode: refused before any work
                if policy_kind(str(member)) == "score":
                    score_scheduler(str(member), sc.env_id, sc.env_kwargs)
            for m, (k, member) in enumerate(members):
                tasks += [
                    Task(sc, str(member), s, i == 0 and m == 0, label, k)
                    for i, s in enumerate(sc.seeds)
                ]
    return tasks


def run_cell(task: Task) -> Outcome:
    """:func:`run_task`, with an exception turned into a :class:`TaskFailure`."""
    try:
        return run_task(task)
    except Exception as e:
        return TaskFailure(
            task.scenario.name,
            task.cell_name,
            task.seed,
            f"{type(e).__name__}: {e}",
            traceback.format_exc(),
        )


def run_task(task: Task) -> TaskOutcome:
    """Run one task (in whatever process the executor chose)."""
    cpu0 = time.process_time()
    if task.trust_pickle:
        trust_pickled(task.policy)
    if policy_kind(task.policy) == "agent":
        import torch

        torch.set_num_threads(1)  # one episode per worker: intra-op threads only contend
    sc = task.scenario
    label = task.name
    title = f"{task.cell_name} on {sc.name} ({sc.env_id}), episode seed {task.seed}"
    out = run_episode(
        task.policy, sc.env_id, task.seed, sc.env_kwargs, gantt=title if task.detail else False
    )
    row: dict[str, Any] = {
        "scenario": sc.name,
        "env_id": sc.env_id,
        "policy": label,
        "seed": task.seed,
        **({} if task.train_seed is None else {"train_seed": task.train_seed}),
        "path": out.path,
        "steps": out.steps,
        "truncated": out.truncated,
        "kill_on_walltime": out.kill_on_walltime,
        "invalid_actions": out.invalid_actions,
    }
    row.update(out.summary)
    row.update(out.counts)
    jobs = out.jobs[list(JOB_COLUMNS)]
    jobs.insert(0, "seed", task.seed)
    if task.train_seed is not None:
        jobs.insert(0, "train_seed", task.train_seed)
    jobs.insert(0, "policy", row["policy"])
    jobs.insert(0, "scenario", sc.name)
    timeline = out.timeline if task.detail else None
    cpu = time.process_time() - cpu0
    return TaskOutcome(row, jobs.reset_index(drop=True), timeline, out.gantt, cpu)


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


@dataclass(frozen=True)
class Executor:
    """The executor that actually runs: ``serial``, ``process`` or ``ray``, and its workers."""

    name: str
    workers: int
    address: str | None = None
    """The attached Ray cluster (``None``: a local one, or no Ray)."""

    def describe(self) -> str:
        """For log lines: ``serial (this process)``, ``process (2 workers)``, ..."""
        if self.name == "serial":
            return "serial (this process)"
        if self.name == "process":
            return f"process pool ({self.workers} worker processes)"
        if self.address:
            return f"ray (cluster at {self.address})"
        return f"ray (local, {self.workers} CPUs)"


def resolve_executor(
    executor: str, workers: int, n_tasks: int, ray_address: str | None = None
) -> Executor:
    """What ``executor`` means here (see the module doc for ``auto``).

    Args:
        executor: One of :data:`EXECUTORS`.
        workers: Local worker processes (or CPUs of a local Ray).
        n_tasks: Tasks to run (one task runs in this process).
        ray_address: A Ray cluster to attach to; ``None``: ``RAY_ADDRESS`` when it is set.
    """
    if executor not in EXECUTORS:
        raise SpecError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    address = ray_address or os.environ.get("RAY_ADDRESS") or None
    if executor == "auto":
        executor = "ray" if address else "process"
    if executor == "ray":
        if not ray_available():
            raise SpecError("executor 'ray' needs ray installed (pip install 'ray[default]')")
        return Executor("ray", workers, address)
    if executor == "serial" or workers <= 1 or n_tasks <= 1:
        return Executor("serial", 1)
    return Executor("process", min(workers, n_tasks))


def _run_ray(tasks: Sequence[Task], ex: Executor, on_done: OnDone) -> list[Outcome]:
    import ray

    if not ray.is_initialized():
        token_log = logging.getLogger(RAY_TOKEN_LOGGER)
        notice = _DropTokenNotice()
        token_log.addFilter(notice)
        try:
            if ex.address:
                ray.init(address=ex.address, ignore_reinit_error=True)
            else:
                ray.init(num_cpus=ex.workers, ignore_reinit_error=True, include_dashboard=False)
        finally:
            token_log.removeFilter(notice)
    remote = ray.remote(run_cell)
    refs = [remote.remote(t) for t in tasks]
    index = {r: i for i, r in enumerate(refs)}
    outcomes: list[Any] = [None] * len(tasks)
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            i = index[ref]
            outcomes[i] = ray.get(ref)
            on_done(i, outcomes[i])
    return outcomes


PARENT_POLL_S = 1.0


def _exit_when_orphaned(parent: int, poll_s: float) -> None:
    """Leave this process as soon as ``parent`` is gone (checked every ``poll_s`` seconds)."""
    while True:
        time.sleep(poll_s)
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(1)  # nothing to save: the parent stores each finished cell itself
        except PermissionError:
            continue  # alive, owned by another user (cannot happen for our own parent)


def watch_parent(parent: int, poll_s: float = PARENT_POLL_S) -> None:
    """A pool worker's initializer: exit when the process that started the pool dies.

    A pool worker blocks on its task queue, whose write end it holds itself, so it never sees
    its parent die: a bench killed by ``SIGTERM`` or ``SIGKILL`` would leave its workers (and
    their fork server) running forever. A daemon thread polls the parent instead.
    """
    threading.Thread(
        target=_exit_when_orphaned, args=(parent, poll_s), name="watch-parent", daemon=True
    ).start()


def _run_pool(tasks: Sequence[Task], workers: int, on_done: OnDone) -> list[Outcome]:
    # forkserver: a fork of a parent that already runs torch threads can deadlock.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["hpcgym.bench.runner"])  # workers fork with imports done
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=watch_parent, initargs=(os.getpid(),)
    )
    outcomes: list[Any] = [None] * len(tasks)
    try:
        futures = {pool.submit(run_cell, t): i for i, t in enumerate(tasks)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=futures.__getitem__):
                i = futures[f]
                outcomes[i] = f.result()
                on_done(i, outcomes[i])
    except BaseException:
        # Ctrl-C or a failing callback: drop the queued tasks instead of running them all.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return outcomes


def _ignore(index: int, outcome: Outcome) -> None:
    """The default callback: nothing to do."""


def execute(
    tasks: Sequence[Task],
    executor: str | Executor = "auto",
    workers: int = 2,
    on_done: OnDone = _ignore,
) -> list[Outcome]:
    """Outcomes of ``tasks`` (a :class:`TaskOutcome`, or a :class:`TaskFailure`), in their order.

    Args:
        tasks: From :func:`plan`.
        executor: ``process`` (a local pool of ``workers`` processes), ``serial``, ``ray`` (the
            cluster at ``RAY_ADDRESS``, else a local one with ``workers`` CPUs), ``auto`` (see
            the module doc), or an :class:`Executor` from :func:`resolve_executor`.
        workers: Local processes (or CPUs of a local Ray).
        on_done: Called in this process as each task finishes, in completion order.
    """
    ex = (
        executor
        if isinstance(executor, Executor)
        else resolve_executor(executor, workers, len(tasks))
    )
    if ex.name == "ray":
        return _run_ray(tasks, ex, on_done)
    if ex.name == "serial":
        outcomes = []
        for i, t in enumerate(tasks):
            outcomes.append(run_cell(t))
            on_done(i, outcomes[-1])
        return outcomes
    return _run_pool(tasks, ex.workers, on_done)


def finished(outcomes: Sequence[Outcome]) -> list[TaskOutcome]:
    """The outcomes that are not failures, in their order."""
    return [o for o in outcomes if isinstance(o, TaskOutcome)]


def results_table(outcomes: Sequence[TaskOutcome]) -> pd.DataFrame:
    """One row per episode, in task order."""
    return pd.DataFrame([o.row for o in outcomes])


def jobs_table(outcomes: Sequence[TaskOutcome]) -> pd.DataFrame:
    """One row per job of every episode, in task order."""
    return pd.concat([o.jobs for o in outcomes], ignore_index=True)
