"""Engine settings, gathered in one frozen record."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hpcgym.errors import SpecError


@dataclass(frozen=True, slots=True)
class SimConfig:
    """How the engine behaves where reasonable simulators differ.

    Attributes:
        kill_on_walltime: Kill a job once it has held resources for longer than its walltime.
        tick: Seconds between scheduler wake-ups while jobs are unfinished (``None``: none).
        bsld_tau: Threshold in seconds of bounded slowdown and bounded stretch.
        idle_power: Watts of an idle node.
        busy_power: Watts of a node whose CPU is fully allocated; power is linear in between.
        progress: How the tasks' CPU yields make a job's progress: ``"worst"`` (default; the
            slowest task sets the pace, as in a bulk-synchronous code) or ``"mean"`` (their
            average, the SD-Policy paper's ideal model).
    """

    kill_on_walltime: bool = True
    tick: float | None = None
    bsld_tau: float = 10.0
    idle_power: float = 100.0
    busy_power: float = 250.0
    progress: str = "worst"

    def __post_init__(self) -> None:
        if self.tick is not None and not 0 < self.tick < math.inf:
            raise SpecError(f"tick period must be finite and > 0 seconds or None, got {self.tick}")
        if not 0 < self.bsld_tau < math.inf:
            raise SpecError(f"bsld_tau must be finite and > 0, got {self.bsld_tau}")
        if self.progress not in ("worst", "mean"):
            raise SpecError(f"progress must be 'worst' or 'mean', got {self.progress!r}")
        if not 0 <= self.idle_power <= self.busy_power < math.inf:
            raise SpecError("power model needs 0 <= idle_power <= busy_power < inf")
