"""Rewards, chosen by name: dense, and summing over an episode to minus the episode objective.

Each term has a *potential*: a running estimate of its episode objective that is cheap to read
at any decision point, 0 before the first submission. The reward of a step is minus the
potential's change over the step; at the last step of a finished episode the potential is
replaced by the objective itself, read from ``hpcgym.sim.metrics`` (``sim.result().summary``),
so that the rewards of a finished episode sum to exactly minus the objective. On truncation they
sum to minus the potential at that point.

| name | objective (summary) | potential |
|---|---|---|
| ``bsld`` | ``mean_bsld`` | (ended jobs' bsld + ``age / max(work, tau)`` of the others) / jobs |
| ``bstretch`` | ``mean_bounded_stretch`` | (ended jobs' bounded stretch + the same) / jobs |
| ``wait`` | ``mean_wait`` / 3600 | (started jobs' waits + queued jobs' ages) / jobs / 3600 |
| ``utilization`` | ``normalized_underutilization`` | engine's underutilization so far / work |
| ``makespan`` | ``makespan`` / lower bound | (now - first submission) / lower bound |
| ``reconfiguration`` | reconfigurations, preemptions, migrations / jobs | the same so far |
| ``killed`` | work lost to walltime kills / total work | the same so far |

The makespan lower bound is the larger of the submission span and the node-seconds of work
over the platform's nodes. Work lost to a walltime kill is the progress the killed job had made,
in CPU-seconds at its requested sizes (``hpcgym.sim.metrics.progress_work``, settled by the
engine at the kill), over the workload's CPU-seconds of work (``total_demand_work``): the
engine summary's ``normalized_lost_work``. The reward is ``-lost / total`` at the step where a
kill happens, 0 otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from mypy_extensions import mypyc_attr

from hpcgym.envs.ledger import JobLedger
from hpcgym.errors import SpecError
from hpcgym.sim.engine import EngineCore


@mypyc_attr(allow_interpreted_subclasses=True)
class RewardTerm:
    """One term: ``potential(now)`` while running, ``objective(summary)`` at the end."""

    name: ClassVar[str] = ""

    def reset(self, ledger: JobLedger, sim: EngineCore) -> None:
        """Bind to a new episode."""
        self.ledger = ledger
        self.sim = sim
        self.n = max(ledger.n, 1)

    def potential(self, now: float) -> float:
        """The running estimate of the objective."""
        raise NotImplementedError

    def objective(self, summary: Mapping[str, float]) -> float:
        """The episode objective (lower is better)."""
        raise NotImplementedError


@mypyc_attr(allow_interpreted_subclasses=True)
class BoundedSlowdown(RewardTerm):
    """Mean bounded slowdown (``tau`` from the engine config)."""

    name: ClassVar[str] = "bsld"

    def potential(self, now: float) -> float:  # noqa: D102
        return self.ledger.bsld_sum(now) / self.n

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["mean_bsld"]


@mypyc_attr(allow_interpreted_subclasses=True)
class BoundedStretch(RewardTerm):
    """Mean bounded stretch: each job's response over its time alone at its requested size.

    ``max(response, tau) / max(work, tau)``. Unlike bounded slowdown, which divides by the run
    time the job actually had, it cannot be lowered by starting a job at once on few nodes and
    letting it run long: the denominator is fixed by the job, not by the schedule. For a rigid
    job that completes the two are equal.
    """

    name: ClassVar[str] = "bstretch"

    def potential(self, now: float) -> float:  # noqa: D102
        return self.ledger.bstretch_sum(now) / self.n

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["mean_bounded_stretch"]


@mypyc_attr(allow_interpreted_subclasses=True)
class Wait(RewardTerm):
    """Mean wait in hours."""

    name: ClassVar[str] = "wait"

    def potential(self, now: float) -> float:  # noqa: D102
        return self.ledger.wait_sum(now) / self.n / 3600.0

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["mean_wait"] / 3600.0


@mypyc_attr(allow_interpreted_subclasses=True)
class Utilization(RewardTerm):
    """Normalized underutilization (the DFRS measure): idle demanded capacity over the work."""

    name: ClassVar[str] = "utilization"

    def potential(self, now: float) -> float:  # noqa: D102
        work = self.sim.total_demand_work
        return self.sim.underutilization / work if work > 0 else 0.0

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["normalized_underutilization"]


@mypyc_attr(allow_interpreted_subclasses=True)
class Makespan(RewardTerm):
    """Makespan over a lower bound of it."""

    name: ClassVar[str] = "makespan"

    def reset(self, ledger: JobLedger, sim: EngineCore) -> None:  # noqa: D102
        super().reset(ledger, sim)
        self.t0 = float(ledger.submit[0]) if ledger.n else 0.0
        span = float(ledger.submit[-1] - ledger.submit[0]) if ledger.n else 0.0
        area = float((ledger.work * ledger.req * ledger.cpu_need).sum())
        self.scale = max(span, area / sim.platform.total_nodes, 1.0)

    def potential(self, now: float) -> float:  # noqa: D102
        return max(now - self.t0, 0.0) / self.scale

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["makespan"] / self.scale


@mypyc_attr(allow_interpreted_subclasses=True)
class Reconfiguration(RewardTerm):
    """Reconfigurations, preemptions and migrations per job."""

    name: ClassVar[str] = "reconfiguration"

    def potential(self, now: float) -> float:  # noqa: D102
        return self.ledger.reconfigurations / self.n

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        total = summary["reconfigurations"] + summary["preemptions"] + summary["migrations"]
        return total / self.n


@mypyc_attr(allow_interpreted_subclasses=True)
class Killed(RewardTerm):
    """CPU-seconds of progress lost to walltime kills over the episode's CPU-seconds of work."""

    name: ClassVar[str] = "killed"

    def reset(self, ledger: JobLedger, sim: EngineCore) -> None:  # noqa: D102
        super().reset(ledger, sim)
        work = sim.total_demand_work
        self.scale = work if work > 0 else 1.0

    def potential(self, now: float) -> float:  # noqa: D102
        return self.ledger.killed_work / self.scale

    def objective(self, summary: Mapping[str, float]) -> float:  # noqa: D102
        return summary["normalized_lost_work"]


REWARDS: dict[str, type[RewardTerm]] = {
    t.name: t
    for t in (BoundedSlowdown, BoundedStretch, Wait, Utilization, Makespan, Reconfiguration, Killed)
}
"""Reward terms by name; add your own subclass here to make it selectable."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Rewarder:
    """A weighted sum of terms, with per-term parts."""

    def __init__(self, weights: Mapping[str, float]) -> None:
        unknown = sorted(set(weights) - set(REWARDS))
        if unknown or not weights:
            raise SpecError(f"unknown reward(s) {unknown}; choose from {sorted(REWARDS)}")
        self.terms = [(REWARDS[k](), float(w)) for k, w in weights.items()]
        self._single = self.terms[0] if len(self.terms) == 1 else None
        self.phi: list[float] = []

    def reset(self, ledger: JobLedger, sim: EngineCore) -> None:
        """Bind every term to a new episode."""
        for term, _ in self.terms:
            term.reset(ledger, sim)
        self.phi = [term.potential(sim.now) for term, _ in self.terms]

    def step(
        self, now: float, summary: Mapping[str, float] | None
    ) -> tuple[float, dict[str, float]]:
        """Reward since the previous call and its parts (``summary`` given at the end)."""
        if self._single is not None and summary is None:
            term, w = self._single
            new = term.potential(now)
            r = -w * (new - self.phi[0])
            self.phi[0] = new
            return 0.0 + r, {term.name: r}  # 0.0 + r: as the sum below (no -0.0)
        parts: dict[str, float] = {}
        total = 0.0
        for i, (term, w) in enumerate(self.terms):
            new = term.objective(summary) if summary is not None else term.potential(now)
            r = -w * (new - self.phi[i])
            self.phi[i] = new
            parts[term.name] = r
            total += r
        return total, parts

    def objectives(self, summary: Mapping[str, float]) -> dict[str, float]:
        """Every term's objective for ``summary``."""
        return {term.name: term.objective(summary) for term, _ in self.terms}
