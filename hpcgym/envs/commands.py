"""Issuing engine commands on the env's behalf, keeping the ledger (and the Gantt log) in step.

Also home of the rule for an "advance" that the engine cannot carry out: when jobs are
unfinished but no event can ever occur (``StalledError``), the env makes the smallest forced
decision that lets time move and tries again (see :meth:`Commander.advance`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hpcgym.envs.ledger import JobLedger
from hpcgym.envs.sizes import accepted_floor
from hpcgym.errors import CapacityError, CommandError, StalledError
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.planning import packed_nodes, reclaimed_shares
from hpcgym.sim.simulator import Simulator

_QUEUED: Final = JobState.QUEUED

if TYPE_CHECKING:
    from hpcgym.envs.render import GanttLog


class Commander:
    """Commands on ``sim`` that also update ``ledger`` and, when given, the Gantt ``log``."""

    def __init__(self, sim: Simulator, ledger: JobLedger, log: GanttLog | None = None) -> None:
        self.sim = sim
        self.ledger = ledger
        self.log = log
        self.forced = 0
        """Commands issued by the stall rule in this episode."""
        self._plain = type(sim) is Simulator
        """A plain ``Simulator``: a default start of a queued job may skip ``start``'s checks."""

    def _touch(self, job: Job, what: str) -> None:
        if self.log is not None:
            self.log.touch(job, self.sim.now, what)

    # ------------------------------------------------------------------ commands
    def start(
        self,
        row: int,
        size: int | None = None,
        cpu: float | None = None,
        cluster: int | None = None,
        packed: bool = False,
    ) -> None:
        """Start the queued job of ``row`` (``size`` tasks, CPU share ``cpu``, in ``cluster``).

        ``packed``: place the tasks by :func:`~hpcgym.sim.planning.packed_nodes` (with ``cpu``).
        """
        job = self.ledger.jobs[row]
        if packed and cpu is not None:
            spec = job.spec
            n = spec.nodes if size is None else size
            nodes = packed_nodes(self.sim, n, cpu, spec.mem)
            if nodes is None:
                raise CapacityError(f"job {spec.id}: no cluster has {n} nodes with room for it")
            self.sim.start(spec.id, n, nodes=nodes, cpu=cpu)
        elif (
            size is None
            and cpu is None
            and cluster is None
            and self._plain
            and job.state is _QUEUED
        ):
            # What ``start(job.id)`` does once it has found the job queued (the engine's own
            # schedulers start the jobs they hold so too); a subclass may override ``start``.
            self.sim._start_job(job, job._want, None, None, None)
        else:
            self.sim.start(job.id, size, cpu=cpu, cluster=cluster)
        self.ledger.started(row)
        self._touch(job, "start")

    def resize(self, row: int, size: int) -> None:
        """Shrink or expand the running malleable job of ``row`` to ``size`` tasks."""
        job = self.ledger.jobs[row]
        what = "shrink" if size < job.size else "expand"
        self.sim.resize(job.spec.id, size)
        self.ledger.reconfigurations += 1
        self.ledger.touch(row)
        self._touch(job, what)

    def set_share(self, row: int, share: float) -> None:
        """Set every task of the running job of ``row`` to CPU share ``share`` (it lends CPU)."""
        job = self.ledger.jobs[row]
        self.sim.set_shares(job.spec.id, share)
        self.ledger.touch(row)
        self._touch(job, "lend")

    def reclaim(self, row: int) -> None:
        """Give the running job of ``row`` the idle CPU of its nodes, up to its need."""
        job = self.ledger.jobs[row]
        shares = reclaimed_shares(self.sim, job)
        if shares is None:
            raise CommandError(f"job {job.spec.id}: no idle CPU on its nodes to take back")
        self.sim.set_shares(job.spec.id, shares)
        self.ledger.touch(row)
        self._touch(job, "reclaim")

    def grant(self, row: int) -> None:
        """Grant the pending request of the evolving job of ``row``."""
        job = self.ledger.jobs[row]
        self.sim.grant(job.spec.id)
        self.ledger.reconfigurations += 1
        self.ledger.touch(row)
        self._touch(job, "grant")

    def suspend(self, row: int) -> None:
        """Suspend the job of ``row``."""
        job = self.ledger.jobs[row]
        self.sim.suspend(job.spec.id)
        self.ledger.suspended_job(row)
        self._touch(job, "suspend")

    def resume(self, row: int) -> None:
        """Resume the suspended job of ``row``."""
        job = self.ledger.jobs[row]
        self.sim.resume(job.spec.id)
        self.ledger.resumed(row)
        self._touch(job, "resume")

    def reject(self, row: int) -> None:
        """Reject the queued job of ``row``."""
        job = self.ledger.jobs[row]
        self.sim.reject(job.spec.id)
        self.ledger.rejected(row)

    # ------------------------------------------------------------------ time
    def advance(self) -> bool:
        """Run the engine to its next decision point; ``False`` once every job has ended.

        When the engine reports a stall, issue the first forced command that applies, in this
        order, and advance again: grant a pending request that fits; if evolving jobs wait for
        grants that cannot fit (a deadlock), suspend the latest started of them; resume a
        suspended job that fits; start the earliest-submitted queued job that can start (at its
        requested size, else the largest accepted size that fits); reject the earliest queued
        job. Each forced command is counted in ``forced``.
        """
        sim = self.sim
        while True:
            if sim.done:
                return False
            try:
                more = sim.advance()
            except StalledError:
                self._force()
                self.forced += 1
                continue
            if not more:
                return False
            self.ledger.absorb(sim.happened)
            if self.log is not None:
                for _, job in sim.happened:
                    if job is not None:
                        self.log.touch(job, sim.now, "")
            return True

    def _force(self) -> None:
        row_of = self.ledger.row_of
        running = list(self.sim.running.values())
        waiting = [job for job in running if job.request]
        for job in waiting:
            if self._try(self.grant, row_of[job.spec.id]):
                return
        if waiting:
            # A deadlock of evolving jobs: release the latest started until a grant fits.
            self.suspend(row_of[waiting[-1].spec.id])
            return
        for job in list(self.sim.suspended.values()):
            if self._try(self.resume, row_of[job.spec.id]):
                return
        for job in list(self.sim.queue.values()):
            row = row_of[job.spec.id]
            if self._try(self.start, row):
                return
            spec = job.spec
            rule = self.ledger.rule[row]
            size = accepted_floor(
                int(rule), spec.size_multiple, spec.min_nodes, spec.nodes, max(self.sim.pool.free)
            )
            if size and self._try(self.start, row, size):
                return
        head = self.sim.queue_head()
        if head is None:  # pragma: no cover - the engine only stalls with work left
            raise RuntimeError("stalled with nothing queued, suspended or waiting")
        self.reject(row_of[head.spec.id])

    @staticmethod
    def _try(command: object, *args: int) -> bool:
        try:
            command(*args)  # type: ignore[operator]
        except CommandError:
            return False
        return True
