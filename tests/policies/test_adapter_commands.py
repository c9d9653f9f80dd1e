"""Every menu block through the adapter: small engine schedulers whose commands the menu has.

The registered baselines that are exact through the env only start and grant; these schedulers
also start at the ``fit`` level, shrink, expand, co-schedule, suspend and resume, and must give
their bare-engine schedule exactly.
"""

from __future__ import annotations

import contextlib
from typing import Any

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.baselines.base import BaseScheduler, largest_size
from hpcgym.errors import CommandError
from hpcgym.policies.adapted import SKIPPED, NotExpressible, as_env_policy, rollout
from hpcgym.sim import JobKind, JobState, SimConfig, Simulator

_MALLEABLE, _RUNNING = JobKind.MALLEABLE, JobState.RUNNING


def _window(sim: Simulator, jobs: Any, slots: int) -> list[Any]:
    """The env's running or suspended window: the first ``slots`` jobs in submission order."""
    pos = {jid: i for i, jid in enumerate(sim.jobs)}
    return sorted(jobs, key=lambda j: pos[j.spec.id])[:slots]


class Elastic(BaseScheduler):
    """FCFS at the requested size, else at the largest that fits; shrink one node for a blocked
    head, expand to fit when the queue is empty (one resize per decision point)."""

    name = "test-elastic"

    def schedule(self, sim: Simulator) -> None:
        free = sim.pool.free
        while (job := sim.queue_head()) is not None:
            spec = job.spec
            if spec.nodes <= free[0]:
                sim.start(spec.id)
            elif spec.kind is _MALLEABLE and (n := largest_size(spec, free[0])) > 0:
                sim.start(spec.id, n)
            else:
                break
        for job in _window(sim, sim.running.values(), 16):
            if job.spec.kind is not _MALLEABLE or job.state is not _RUNNING:
                continue
            if sim.queue:
                n = largest_size(job.spec, job.size - 1)
                if n > 0:
                    sim.shrink(job.spec.id, n)
                    return
            elif free[job.cluster] > 0:
                n = largest_size(job.spec, job.size + free[job.cluster])
                if n > job.size:
                    sim.expand(job.spec.id, n)
                    return


class Preempt(BaseScheduler):
    """Resume what fits, start in order (co-scheduled at half share when it does not fit
    alone), and suspend the latest job of the running window once for a head waiting 30 min."""

    name = "test-preempt"

    def reset(self) -> None:
        self.suspended: set[int] = set()
        self.coscheduled = 0

    def schedule(self, sim: Simulator) -> None:
        for job in _window(sim, sim.suspended.values(), 8):
            with contextlib.suppress(CommandError):
                sim.resume(job.spec.id)
        while (job := sim.queue_head()) is not None:
            try:
                sim.start(job.spec.id)
            except CommandError:
                try:
                    sim.start(job.spec.id, cpu=job.spec.cpu_need * 0.5)
                except CommandError:
                    break
                self.coscheduled += 1
        head = sim.queue_head()
        if head is not None and sim.now - head.spec.submit > 1800 and len(sim.running) > 1:
            for job in reversed(_window(sim, sim.running.values(), 16)):
                if job.spec.id not in self.suspended:
                    self.suspended.add(job.spec.id)
                    sim.suspend(job.spec.id)
                    return


def _exact(scheduler: BaseScheduler, env_id: str, seed: int, **kwargs: Any) -> dict[str, float]:
    policy = as_env_policy(scheduler)
    env = gym.make(env_id, **kwargs)
    rollout(policy, env, seed=seed)
    sim = env.unwrapped.sim  # type: ignore[attr-defined]
    jobs = [j.spec for j in sim.jobs.values()]
    bare = type(scheduler)().simulate(
        sim.platform, jobs, SimConfig(kill_on_walltime=sim.config.kill_on_walltime)
    )
    pd.testing.assert_frame_equal(sim.result().jobs, bare.jobs)
    assert not policy.stats.inexpressible
    return bare.summary


@pytest.mark.parametrize("seed", [0, 1])
def test_starts_at_fit_shrinks_and_expansions_match(seed: int) -> None:
    summary = _exact(Elastic(), "hpcgym/Malleable-v0", seed, n_jobs=300)
    assert summary["reconfigurations"] > 100


def test_expansions_match_on_the_multicluster() -> None:
    summary = _exact(Elastic(), "hpcgym/MultiCluster-v0", 0)
    assert summary["reconfigurations"] > 100


@pytest.mark.parametrize("seed", [0, 1])
def test_co_scheduling_suspend_and_resume_match(seed: int) -> None:
    scheduler = Preempt()
    summary = _exact(scheduler, "hpcgym/Shared-v0", seed, n_jobs=300)
    assert summary["preemptions"] > 50
    assert scheduler.coscheduled > 0


def test_wake_ups_at_skipped_decision_points_are_reported() -> None:
    kwargs = {"queue_slots": 32, "running_slots": 32}
    with pytest.raises(NotExpressible, match=SKIPPED):
        rollout(as_env_policy("evolving-2X"), gym.make("hpcgym/Evolving-v0", **kwargs), 0)
    policy = as_env_policy("evolving-2X", wakeups=False)
    with pytest.raises(NotExpressible, match="wake_at"):
        rollout(policy, gym.make("hpcgym/Evolving-v0", skip_trivial=False, **kwargs), 0)
