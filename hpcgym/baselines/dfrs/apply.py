"""Turning a target mapping and its yields into engine commands.

The order never asks for more CPU or memory than a node has at that instant.

Order: suspend the jobs the target leaves out; lower the shares of jobs that stay where they
are (and set the jobs about to move to the smallest share, so they block no CPU); then start,
resume, migrate and raise shares in passes, each command as soon as it fits. Commands are
validated by the engine before they change anything, so a command that does not fit yet is
simply tried again in the next pass. When a pass makes no progress, the remaining moves form a
cycle through node memory (A must go where B is and B where A is): the first job still to move
is suspended and then resumed at its target, which costs it the same penalty as a migration but
is counted by the engine as a preemption; ``ApplyStats.cycle_breaks`` counts these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.baselines.dfrs.placement import Placement
from hpcgym.errors import CapacityError
from hpcgym.sim import Job, JobState, Simulator

_SUSPENDED = JobState.SUSPENDED
_QUEUED = JobState.QUEUED
_RUNNING = JobState.RUNNING
_PARK = 1e-6
"""Share of a job about to move (the engine's smallest share)."""


@dataclass(slots=True)
class ApplyStats:
    """Counts of what ``apply_target`` did over an episode."""

    starts: int = 0
    resumes: int = 0
    suspends: int = 0
    migrations: int = 0
    share_changes: int = 0
    cycle_breaks: int = 0
    unapplied: int = 0
    """Target placements that could not be carried out (left queued or suspended)."""
    released_moves: int = 0
    """``penalty="release"``: migrations carried out as a suspension and a transit (the engine
    counts each as a preemption)."""


def same_nodes(current: np.ndarray, target: np.ndarray) -> bool:
    """Whether two task-to-node arrays place the same number of tasks on each node."""
    return current.size == target.size and bool(np.array_equal(np.sort(current), np.sort(target)))


def apply_target(
    sim: Simulator, target: Placement, yields: dict[int, float], stats: ApplyStats
) -> None:
    """Issue the commands that make the engine's allocation equal ``target`` with ``yields``."""
    jobs = sim.jobs
    share = {jid: yields[jid] * target.specs[jid].cpu_need for jid in target.nodes}
    for jid in [j for j in sim.running if j not in target.nodes]:
        sim.suspend(jid)
        stats.suspends += 1
    pending: list[tuple[str, Job]] = []
    for jid, nodes in target.nodes.items():
        job = jobs[jid]
        state = job.state
        if state is _QUEUED:
            pending.append(("start", job))
        elif state is _SUSPENDED:
            pending.append(("resume", job))
        elif same_nodes(job.nodes, nodes):
            cur = float(job.cpu[0])
            if share[jid] < cur - 1e-12:
                sim.set_shares(jid, share[jid])
                stats.share_changes += 1
            elif share[jid] > cur + 1e-12:
                pending.append(("raise", job))
        elif state is not _RUNNING:
            # A reconfiguring job cannot migrate (the scheduler pins such jobs, so this is a
            # move it was asked for anyway): suspend it now, resume it at its target.
            sim.suspend(jid)
            stats.suspends += 1
            stats.cycle_breaks += 1
            pending.append(("resume", job))
        else:
            if float(job.cpu.max()) > _PARK:
                sim.set_shares(jid, _PARK)
            pending.append(("move", job))
    while pending:
        left: list[tuple[str, Job]] = []
        for what, job in pending:
            if not _try(sim, what, job, target.nodes[job.id], share[job.id], stats):
                left.append((what, job))
        if len(left) == len(pending):
            movers = [k for k, (what, job) in enumerate(left) if what == "move"]
            if not movers:
                stats.unapplied += sum(what != "raise" for what, _ in left)
                return
            k = movers[0]
            job = left[k][1]
            sim.suspend(job.id)
            stats.suspends += 1
            stats.cycle_breaks += 1
            left[k] = ("resume", job)
        pending = left


def _try(
    sim: Simulator, what: str, job: Job, nodes: np.ndarray, share: float, stats: ApplyStats
) -> bool:
    jid = job.id
    try:
        if what == "start":
            sim.start(jid, nodes=nodes, cpu=share)
            stats.starts += 1
        elif what == "resume":
            sim.resume(jid, nodes=nodes, cpu=share)
            stats.resumes += 1
        elif what == "raise":
            sim.set_shares(jid, share)
            stats.share_changes += 1
        else:
            sim.migrate(jid, nodes, cpu=share)
            stats.migrations += 1
    except CapacityError:
        return False
    return True
