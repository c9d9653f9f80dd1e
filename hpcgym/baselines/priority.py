"""Priority-score schedulers: RLScheduler's "reserve" mode, and EASY ordered by any score.

A *score* ranks queued jobs; the lowest score goes first (ties: earlier submission, then
submission order). With ``r`` the runtime estimate (walltime, else work; at least 0.1 s),
``n`` the requested nodes, ``s`` the submit time plus ``submit_offset`` and ``w`` the time the
job has waited so far (``now - submit``), the scores of RLScheduler (SC20) are:

- ``fcfs``: ``s``.
- ``sjf``: ``r`` (ties by ``s``).
- ``f1``: ``log10(r) * n + 870 * log10(s)`` (``s`` of 0 or less counts as 0.1). F1 reads the
  *absolute* submit time, so it ranks differently on a re-based window; RLScheduler runs it on
  the trace's own clock (``hpcgym.workloads.rlsched`` keeps that clock, or pass the shift as
  ``submit_offset``).
- ``wfp3``: ``-(w / r)**3 * n``.
- ``unicep``: ``-w / (log2(n) * r)``; one-node jobs (``log2(1) = 0``) divide by ``1e-15``
  instead, so a one-node job that has waited ranks before every larger one, as in
  RLScheduler's code.
- ``wfp3-as-coded``, ``unicep-as-coded``: the same with ``w = -1 - s``. RLScheduler's code
  computes ``w`` as ``scheduled_time - submit_time`` while the job is still queued, when its
  ``scheduled_time`` is -1; its published WFP3 and UNICEP columns come from these. Not
  registered by name (``PriorityReserve(score="wfp3-as-coded")``).

Two ways to use a score:

- :class:`PriorityReserve` (``<score>-reserve``, ``<score>-reserve-bf``), RLScheduler's mode:
  choose the best-ranked queued job and commit to it; it starts as soon as it fits, and no
  other job is chosen until it has started. Without backfilling nothing else starts meanwhile.
  With backfilling, when the chosen job does not fit, its reservation is computed once, from
  the running jobs' estimated ends (``hpcgym.sim.planning.estimated_end``): the earliest of
  those ends by which enough nodes are free. At this and every later decision point until the
  chosen job starts, any queued job, in submission order, starts if it fits now and its
  estimated end is strictly before the reservation. No job backfills on nodes left spare at
  the reservation (unlike EASY's "extra nodes"). Since backfilled jobs end before the
  reservation, the chosen job never starts after it when estimates bound run times.
- :class:`EasyPriority` (``easy-<score>``): EASY backfilling with the queue ranked by the
  score, re-ranked at every decision point: the best-ranked jobs start while they fit; the
  first that does not gets the reservation (shadow time and extra nodes recomputed at every
  decision point, as ``easy``); the others, in rank order, backfill if they end by the shadow
  time or fit in the extra nodes. ``easy-fcfs`` is ``easy``.

The difference between the two: reserve mode commits to a choice, so a job that ranks better
but arrives later waits for the chosen one, and the reservation is fixed when the wait starts;
``easy-<score>`` re-ranks at every event, so the reservation moves to a newly arrived
better-ranked job (the previous head gets no guarantee) and is recomputed as jobs end early.
Reserve mode backfills only jobs that end before the reservation; EASY also backfills into the
extra nodes.

Ambiguities and the choices made (details and sources in ``docs/rlscheduler.md``):

- Ties: RLScheduler sorts its queue list stably, so ties follow the list's history; here ties
  go to the earlier submission, then the submission order.
- Same-time events: RLScheduler adds one job or ends one job at a time (and, when the queue is
  empty, chooses among the jobs added so far at that instant); hpcgym's engine delivers every
  submission and end of an instant together. lublin_256 has no two jobs submitted at once.
- The reservation of a running job that outlived its estimate uses the engine's rule
  (``OVERRUN_GRACE`` from now) where RLScheduler keeps the past estimated end (then nothing
  backfills).
- ``r = 0`` (no estimate and no work) counts as 0.1 s for every score, as RLScheduler does
  for F1.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hpcgym.baselines.availability import shadow
from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate, single_cluster
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, Job, JobSpec, Simulator

Score = Callable[[JobSpec, float, float], float]
"""``score(spec, now, submit_offset)``: lower ranks first."""

MIN_TIME = 0.1
"""Seconds: the least runtime estimate and (for F1) submit time a score uses."""

LOG2_FLOOR = 1e-15
"""UNICEP's ``log2(n)`` for one-node jobs (0 otherwise)."""

F1_SUBMIT_WEIGHT = 870.0


def _estimate(spec: JobSpec) -> float:
    r = runtime_estimate(spec)
    return r if r > 0 else MIN_TIME


def fcfs_score(spec: JobSpec, now: float, offset: float) -> float:
    """First come, first served: the submit time."""
    return spec.submit + offset


def sjf_score(spec: JobSpec, now: float, offset: float) -> float:
    """Shortest job first: the runtime estimate (ties by submit time)."""
    return runtime_estimate(spec)


def f1_score(spec: JobSpec, now: float, offset: float) -> float:
    """F1 (Carastan-Santos and de Camargo, SC17): ``log10(r) * n + 870 * log10(s)``."""
    s = spec.submit + offset
    return math.log10(_estimate(spec)) * spec.nodes + F1_SUBMIT_WEIGHT * math.log10(
        s if s > 0 else MIN_TIME
    )


def _wfp3(wait: float, spec: JobSpec) -> float:
    return -((wait / _estimate(spec)) ** 3) * spec.nodes


def _unicep(wait: float, spec: JobSpec) -> float:
    log_n = math.log2(spec.nodes) if spec.nodes > 1 else LOG2_FLOOR
    return -wait / (log_n * _estimate(spec))


def wfp3_score(spec: JobSpec, now: float, offset: float) -> float:
    """WFP3 (Tang et al.): ``-(w / r)**3 * n``, ``w`` the time waited so far."""
    return _wfp3(now - spec.submit, spec)


def unicep_score(spec: JobSpec, now: float, offset: float) -> float:
    """UNICEP (Tang et al.): ``-w / (log2(n) * r)``, ``w`` the time waited so far."""
    return _unicep(now - spec.submit, spec)


def wfp3_as_coded_score(spec: JobSpec, now: float, offset: float) -> float:
    """WFP3 as RLScheduler's code computes it: with ``w = -1 - s``."""
    return _wfp3(-1.0 - (spec.submit + offset), spec)


def unicep_as_coded_score(spec: JobSpec, now: float, offset: float) -> float:
    """UNICEP as RLScheduler's code computes it: with ``w = -1 - s``."""
    return _unicep(-1.0 - (spec.submit + offset), spec)


SCORES: dict[str, Score] = {
    "fcfs": fcfs_score,
    "sjf": sjf_score,
    "f1": f1_score,
    "wfp3": wfp3_score,
    "unicep": unicep_score,
    "wfp3-as-coded": wfp3_as_coded_score,
    "unicep-as-coded": unicep_as_coded_score,
}
"""Every score by name."""

REGISTERED_SCORES = ("fcfs", "sjf", "f1", "wfp3", "unicep")
"""The scores with registered scheduler names (``<score>-reserve`` and so on)."""

_TIME_DEPENDENT = frozenset({"wfp3", "unicep"})

_SUBMITTED = EventType.SUBMITTED

Key = tuple[float, float, int]


def _score_fn(score: str) -> Score:
    try:
        return SCORES[score]
    except KeyError:
        raise SpecError(f"unknown score {score!r}; known: {', '.join(SCORES)}") from None


class Ranking:
    """Keys of queued jobs: ``(score, submit, submission number)``, lowest first.

    Keys of scores that do not depend on the time are computed once, at submission.
    """

    def __init__(self, score: str, submit_offset: float) -> None:
        self.score = score
        self.fn = _score_fn(score)
        self.offset = submit_offset
        self.dynamic = score in _TIME_DEPENDENT
        self.seq: dict[int, int] = {}
        self.static: dict[int, Key] = {}

    def follow(self, sim: Simulator) -> None:
        """Number the jobs submitted since the last decision point (and any not seen)."""
        for event, job in sim.happened:
            if event is _SUBMITTED and job is not None:
                self._add(job.spec)
        if len(self.seq) < sim.counts["submitted"]:
            for job in sim.queue.values():
                if job.spec.id not in self.seq:
                    self._add(job.spec)

    def _add(self, spec: JobSpec) -> None:
        if spec.id in self.seq:
            return
        self.seq[spec.id] = len(self.seq)
        if not self.dynamic:
            self.static[spec.id] = (self.fn(spec, 0.0, self.offset), spec.submit, self.seq[spec.id])

    def key(self, job: Job, now: float) -> Key:
        """The job's rank key at ``now``."""
        spec = job.spec
        if self.dynamic:
            return (self.fn(spec, now, self.offset), spec.submit, self.seq[spec.id])
        return self.static[spec.id]


def _releases(sim: Simulator) -> list[tuple[float, int]]:
    return sorted((estimated_end(sim, j), j.size) for j in sim.running.values())


class PriorityReserve(BaseScheduler):
    """RLScheduler's decision mode: commit to the best-ranked job; it starts when it fits.

    Args:
        score: A name in :data:`SCORES`.
        backfill: Start other jobs that end before the chosen job's reservation meanwhile.
        submit_offset: Seconds added to submit times for the scores that read absolute time
            (``f1`` and the ``-as-coded`` ones), e.g. the shift a re-based window removed.

    Attributes:
        chosen: The job committed to and not yet started, or ``None``.
        reservation: ``(chosen job, reserved start)`` when backfilling around a chosen job
            that did not fit, else ``None``.
    """

    name = "priority-reserve"

    def __init__(self, score: str = "fcfs", backfill: bool = False, submit_offset: float = 0.0):
        _score_fn(score)
        self.score = score
        self.backfill = backfill
        self.submit_offset = submit_offset
        self.reset()

    def __repr__(self) -> str:
        return f"PriorityReserve(score={self.score!r}, backfill={self.backfill})"

    def reset(self) -> None:
        """Forget the previous episode."""
        self._rank = Ranking(self.score, self.submit_offset)
        self.chosen: int | None = None
        self.reservation: tuple[int, float] | None = None

    def choose(self, sim: Simulator, free: int) -> int:
        """The queued job to commit to (the queue is not empty): the best-ranked one.

        ``free`` is the number of idle nodes now (jobs started at this decision point
        deducted). A subclass may rank otherwise; the commitment and backfilling stay.
        """
        now = sim.now
        return min(sim.queue.values(), key=lambda j: self._rank.key(j, now)).spec.id

    def schedule(self, sim: Simulator) -> None:
        """Start the chosen job if it fits (and choose again); else backfill around it."""
        single_cluster(sim, self.name)
        rank = self._rank
        rank.follow(sim)
        queue = sim.queue
        now = sim.now
        free = sim.pool.free[0]
        while True:
            if self.chosen is None or self.chosen not in queue:
                self.reservation = None
                if not queue:
                    self.chosen = None
                    return
                self.chosen = self.choose(sim, free)
            need = queue[self.chosen].spec.nodes
            if need > free:
                break
            sim.start(self.chosen)
            free -= need
            self.chosen = None
        if not self.backfill:
            return
        chosen = self.chosen
        if self.reservation is None:
            self.reservation = (chosen, shadow(now, free, need, _releases(sim))[0])
        limit = self.reservation[1]
        for jid, job in list(queue.items()):
            if free == 0:
                break
            n = job.spec.nodes
            if jid == chosen or n > free:
                continue
            if now + runtime_estimate(job.spec) < limit:
                sim.start(jid)
                free -= n


class EasyPriority(BaseScheduler):
    """EASY backfilling with the queue ranked by a score, re-ranked at every decision point.

    Args:
        score: A name in :data:`SCORES`.
        submit_offset: As for :class:`PriorityReserve`.

    Attributes:
        reservation: ``(head job, shadow time)`` of the blocked best-ranked job after the last
            pass, or ``None`` when none was blocked.
    """

    name = "easy-priority"

    def __init__(self, score: str = "fcfs", submit_offset: float = 0.0):
        _score_fn(score)
        self.score = score
        self.submit_offset = submit_offset
        self.reset()

    def __repr__(self) -> str:
        return f"EasyPriority(score={self.score!r})"

    def reset(self) -> None:
        """Forget the previous episode."""
        self._rank = Ranking(self.score, self.submit_offset)
        self.reservation: tuple[int, float] | None = None

    def ranked(self, sim: Simulator) -> list[Job]:
        """The queued jobs, best-ranked first (a subclass may rank otherwise)."""
        now = sim.now
        return sorted(sim.queue.values(), key=lambda j: self._rank.key(j, now))

    def schedule(self, sim: Simulator) -> None:
        """Start the best-ranked jobs that fit, then backfill behind the first blocked one."""
        single_cluster(sim, self.name)
        self._rank.follow(sim)
        now = sim.now
        free = sim.pool.free[0]
        order = self.ranked(sim)
        self.reservation = None
        i = 0
        while i < len(order) and order[i].spec.nodes <= free:
            sim.start(order[i].spec.id)
            free -= order[i].spec.nodes
            i += 1
        if i == len(order):
            return
        head = order[i]
        t_shadow, extra = shadow(now, free, head.spec.nodes, _releases(sim))
        self.reservation = (head.spec.id, t_shadow)
        for job in order[i + 1 :]:
            if free == 0:
                break
            n = job.spec.nodes
            if n > free:
                continue
            if now + runtime_estimate(job.spec) > t_shadow:
                if n > extra:
                    continue
                extra -= n
            sim.start(job.spec.id)
            free -= n
