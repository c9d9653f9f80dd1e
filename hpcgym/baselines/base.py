"""What every engine scheduler of ``hpcgym.baselines`` shares: a name and the runtime estimate.

**Runtime estimate rule.** A scheduler never sees a job's true run time. It plans with the
job's *estimate*: its walltime (the user's request, or whatever the workload's estimate model
put there: ``exact``, ``user``, ``noisy``) when the workload gives one, and its true ``work``
otherwise (a workload without estimates is taken as an oracle). The estimate is a time at the
job's requested size; at another size it scales with the job's speedup model.

A running job's *estimated end* follows from it: the estimated work not yet done, at the job's
current progress rate, after any reconfiguration under way. A rigid job ends by
``start + estimate``. A job that has outlived its estimate (possible only when the engine does
not kill at walltime) is assumed to end ``OVERRUN_GRACE`` seconds from now; every decision
point re-plans, so the assumption lasts until the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from hpcgym.sim import Job, JobSpec, Platform, SimConfig, SimResult, Simulator
from hpcgym.sim.job import JobState

OVERRUN_GRACE = 1.0
"""Seconds a job that has outlived its estimate is still expected to run (see module doc)."""

_RECONFIGURING = JobState.RECONFIGURING


def runtime_estimate(spec: JobSpec) -> float:
    """The job's run time at its requested size as schedulers see it: walltime, else work."""
    w = spec.walltime
    return spec.work if w is None else w


def estimated_end(sim: Simulator, job: Job) -> float:
    """When a running job is expected to end, by the runtime estimate rule (module doc).

    Always later than ``sim.now``.
    """
    now = sim.now
    spec = job.spec
    if job.reconfigurations == 0 and job.size == spec.nodes:
        end = job.start_time + runtime_estimate(spec)
    else:
        # Estimated work left, in seconds at the requested size, at the current size's rate.
        done = spec.work - sim.remaining_work(job)
        left = runtime_estimate(spec) - done
        rate = spec.rate(job.size)
        t0 = job.busy_until if job.state is _RECONFIGURING else now
        end = t0 + (left / rate if left > 0 else 0.0)
    return end if end > now else now + OVERRUN_GRACE


def estimated_remaining(sim: Simulator, job: Job, size: int | None = None) -> float:
    """Seconds of estimated work left for a running job on ``size`` tasks (default: its own).

    Reconfiguration under way is not counted.
    """
    spec = job.spec
    left = runtime_estimate(spec) - (spec.work - sim.remaining_work(job))
    if left <= 0:
        return 0.0
    return left / spec.rate(job.size if size is None else size)


class BaseScheduler:
    """An engine scheduler: ``schedule(sim)`` at each decision point, and a registry name.

    Subclasses keep per-episode state; ``reset`` clears it so one instance can run several
    episodes (``run`` calls it).
    """

    name: ClassVar[str] = "base"
    """The scheduler's name in ``hpcgym.baselines`` (``make(name)``)."""

    def schedule(self, sim: Simulator) -> None:
        """Inspect ``sim`` and issue commands; called once per decision point."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything about the previous episode."""

    def run(self, sim: Simulator) -> None:
        """Drive ``sim`` to its end with this scheduler (``sim.result()`` has the metrics)."""
        self.reset()
        schedule = self.schedule
        while sim.advance():
            schedule(sim)

    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """The jobs and engine settings this scheduler's experiments run with.

        The default keeps both. A scheduler whose paper fixes part of the setting says so here
        (DFRS: its rescheduling penalty and period; malleable ones: no walltime kills), so that
        every runner (``simulate``, the benchmark) gives it the same world.
        """
        return jobs, config

    def simulate(
        self, platform: Platform, jobs: Sequence[JobSpec], config: SimConfig | None = None
    ) -> SimResult:
        """Run one episode of ``jobs`` on ``platform`` in this scheduler's setting."""
        jobs, config = self.setting(jobs, config or SimConfig())
        sim = Simulator(platform, jobs, config)
        self.run(sim)
        return sim.result()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def largest_size(spec: JobSpec, limit: int) -> int:
    """The largest size ``spec`` accepts that is at most ``limit``, or 0 if none."""
    hi = min(limit, spec.max_nodes)
    if hi < spec.min_nodes:
        return 0
    if spec.min_nodes == spec.max_nodes or spec.allows(hi):
        return hi
    for n in range(hi - 1, spec.min_nodes - 1, -1):
        if spec.allows(n):
            return n
    return 0


def smallest_size(spec: JobSpec) -> int:
    """The smallest size ``spec`` accepts (its requested size for rigid jobs)."""
    n = spec.min_nodes
    while not spec.allows(n):
        n += 1
    return n
