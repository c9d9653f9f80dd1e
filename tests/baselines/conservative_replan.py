"""The tests' oracle for conservative backfilling: the schedule re-planned at every pass.

``ConservativeReplan`` is the definition of ``ConservativeBackfill``'s schedule (the
``hpcgym.baselines.classic`` module doc): each pass rebuilds the profile and re-places every
queued job with ``replan``, so its cost per pass grows with the queue (times the profile's
steps). ``tests/baselines/test_conservative_incremental.py`` checks the incremental scheduler
against it; ``benchmarks/conservative_speed.py`` times it as the "before". It is not part of
the package.
"""

from __future__ import annotations

from hpcgym.baselines.base import BaseScheduler, single_cluster
from hpcgym.baselines.classic import replan
from hpcgym.sim import Simulator


class ConservativeReplan(BaseScheduler):
    """Conservative backfilling re-planned from scratch at every decision point (the reference).

    Attributes:
        reservations: Planned start of every queued job after the last pass (jobs started in
            that pass are not in it).
    """

    name = "conservative-replan"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode's reservations."""
        self.reservations: dict[int, float] = {}

    def schedule(self, sim: Simulator) -> None:
        """Re-place every queued job at its earliest slot and start those planned for now."""
        single_cluster(sim, self.name)
        self.reservations = replan(sim, sim.now, self.reservations)[1]
