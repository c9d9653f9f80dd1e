"""Trivial reference rules for elastic jobs: the floor every heuristic and agent must clear.

Each rule picks one size per job once, when it starts the job, and never resizes it:

- ``asap-min``: queued jobs in submission order, each started at its smallest accepted size as
  soon as that many nodes are idle (first fit: a job that does not fit is skipped, the next one
  is tried; no reservation).
- ``asap-req``: the same at the requested size.
- ``asap-max``: the same at the largest accepted size (``max_nodes``, or the platform's size if
  smaller).
- ``easy-min``: EASY backfilling (one reservation, for the queue's head) with every job at its
  smallest accepted size; run-time estimates are scaled to that size by the job's speedup.

For a rigid job the smallest, requested and largest sizes are one, so on rigid workloads
``asap-*`` are first-fit list scheduling and ``easy-min`` is EASY. They are in every malleable
scenario's table because a learned policy or a paper heuristic that does not beat them has not
shown anything: on the MEBF set, with speedups ``n^(1-rho)`` (``rho <= 0.3``), a job on fewer
nodes wastes little, so starting everything at once on few nodes is a strong rule by per-job
metrics (``docs/results.md``).
"""

from __future__ import annotations

from typing import ClassVar

from hpcgym.baselines.base import (
    BaseScheduler,
    estimated_end,
    runtime_estimate,
    single_cluster,
)
from hpcgym.sim import JobSpec, Simulator
from hpcgym.sim.planning import largest_size, shadow, smallest_size

SIZES = ("min", "req", "max")
"""The size choices of the ``asap-*`` rules."""


def _free_nodes(sim: Simulator, name: str) -> int:
    single_cluster(sim, name)
    return sim.pool.free[0]


def size_of(spec: JobSpec, choice: str, capacity: int) -> int:
    """The size ``choice`` gives ``spec`` on a cluster of ``capacity`` nodes (0: never fits)."""
    if choice == "min":
        return smallest_size(spec)
    if choice == "req":
        return spec.nodes
    return largest_size(spec, capacity)


class FirstFitAt(BaseScheduler):
    """Start each queued job, in submission order, at one size choice as soon as it fits."""

    name: ClassVar[str] = "asap"
    size: ClassVar[str] = "min"

    def schedule(self, sim: Simulator) -> None:
        """Start every queued job whose size fits the idle nodes, in submission order."""
        free = _free_nodes(sim, self.name)
        capacity = sim.platform.clusters[0].nodes
        for job in list(sim.queue.values()):
            if free == 0:
                return
            n = size_of(job.spec, self.size, capacity)
            if 0 < n <= free:
                sim.start(job.spec.id, n)
                free -= n


class AsapMin(FirstFitAt):
    """``asap-min``: every job at its smallest accepted size."""

    name = "asap-min"
    size = "min"


class AsapReq(FirstFitAt):
    """``asap-req``: every job at its requested size."""

    name = "asap-req"
    size = "req"


class AsapMax(FirstFitAt):
    """``asap-max``: every job at its largest accepted size that the cluster holds."""

    name = "asap-max"
    size = "max"


class EasyAtMin(BaseScheduler):
    """EASY backfilling with every job started at its smallest accepted size, never resized."""

    name: ClassVar[str] = "easy-min"

    def schedule(self, sim: Simulator) -> None:
        """Start the head while it fits; then backfill jobs that do not delay its reservation."""
        free = _free_nodes(sim, self.name)
        queue = list(sim.queue.values())
        i = 0
        while i < len(queue) and (n := smallest_size(queue[i].spec)) <= free:
            sim.start(queue[i].spec.id, n)
            free -= n
            i += 1
        if i == len(queue) or free == 0:
            return
        head = queue[i]
        releases = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
        now = sim.now
        when, extra = shadow(now, free, smallest_size(head.spec), releases)
        for job in queue[i + 1 :]:
            if free == 0:
                return
            spec = job.spec
            n = smallest_size(spec)
            if n > free:
                continue
            ends_in_time = now + runtime_estimate(spec) / spec.rate(n) <= when
            if ends_in_time or n <= extra:
                sim.start(spec.id, n)
                free -= n
                if not ends_in_time:
                    extra -= n
