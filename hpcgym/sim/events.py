"""What the engine reports at a decision point, and the event heap's priorities."""

from __future__ import annotations

from enum import Enum
from typing import Final


class EventType(Enum):
    """Something that happened since the previous decision point."""

    SUBMITTED = "submitted"
    COMPLETED = "completed"
    KILLED = "killed"
    """Exceeded its walltime."""
    REJECTED = "rejected"
    """Can never fit the platform; ended at submission."""
    RECONFIGURED = "reconfigured"
    """A resize, restart or migration finished; the job progresses again."""
    REQUESTED = "requested"
    """An evolving job reached a step that needs more nodes; it waits for ``grant``."""
    STEPPED = "stepped"
    """An evolving job entered a step that needs no grant (same size or smaller)."""
    TICK = "tick"
    """The periodic wake-up of ``SimConfig.tick``."""
    WAKEUP = "wakeup"
    """A wake-up the scheduler asked for with ``Simulator.wake_at``."""


# Heap order within one instant: progress first (completions free nodes before anything is
# decided), then reconfiguration ends, then walltime kills, then submissions, then ticks and
# requested wake-ups.
PHASE_END: Final = 0
RECONF_END: Final = 1
WALLTIME: Final = 2
SUBMIT: Final = 3
TICK: Final = 4
WAKEUP: Final = 5
