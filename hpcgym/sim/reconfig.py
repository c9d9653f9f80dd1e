"""Reconfiguration-cost models: seconds without progress caused by a scheduler's command.

Each model answers three questions: how long a resize from ``n_old`` to ``n_new`` tasks takes,
how long a suspended job needs to restart (resume) on ``n`` tasks, and how long a migration of
``n`` tasks takes. The engine stops the job's progress for that time; its nodes stay held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hpcgym.errors import SpecError


@runtime_checkable
class ReconfigCost(Protocol):
    """The time cost of resizing, restarting and migrating a job."""

    def resize(self, n_old: int, n_new: int) -> float:
        """Return the seconds a resize from ``n_old`` to ``n_new`` tasks takes."""
        ...

    def restart(self, n: int) -> float:
        """Return the seconds a suspended job needs to restart on ``n`` tasks."""
        ...

    def migrate(self, n: int) -> float:
        """Return the seconds a migration of a job of ``n`` tasks takes."""
        ...


@dataclass(frozen=True, slots=True)
class NoCost:
    """Reconfiguration is free."""

    def resize(self, n_old: int, n_new: int) -> float:
        """Return 0."""
        return 0.0

    def restart(self, n: int) -> float:
        """Return 0."""
        return 0.0

    def migrate(self, n: int) -> float:
        """Return 0."""
        return 0.0


@dataclass(frozen=True, slots=True)
class FixedCost:
    """A fixed penalty for every resize, restart and migration (DFRS uses 300 s)."""

    seconds: float

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise SpecError(f"FixedCost seconds must be >= 0, got {self.seconds}")

    def resize(self, n_old: int, n_new: int) -> float:
        """Return the fixed penalty."""
        return self.seconds

    def restart(self, n: int) -> float:
        """Return the fixed penalty."""
        return self.seconds

    def migrate(self, n: int) -> float:
        """Return the fixed penalty."""
        return self.seconds


@dataclass(frozen=True, slots=True)
class RedistributionCost:
    """The MEBF paper's model: ``alpha*|dN| + beta/N + b*|dN|`` seconds for a resize.

    ``dN`` is the change in task count and ``N = n_old + n_new`` the tasks involved (the paper's
    example: 5 to 10 involves 15). ``alpha*|dN| + beta/N`` is data redistribution, ``b*|dN|`` is
    process creation or destruction. Restart and migration, which the paper does not model, cost
    the fixed ``preemption`` seconds.
    """

    alpha: float
    beta: float
    b: float = 0.0
    preemption: float = 0.0

    def __post_init__(self) -> None:
        if min(self.alpha, self.beta, self.b, self.preemption) < 0:
            raise SpecError(f"RedistributionCost parameters must be >= 0, got {self}")

    def resize(self, n_old: int, n_new: int) -> float:
        """Return the data-redistribution plus process-creation time."""
        dn = abs(n_new - n_old)
        if dn == 0:
            return 0.0
        return self.alpha * dn + self.beta / (n_old + n_new) + self.b * dn

    def restart(self, n: int) -> float:
        """Return the fixed preemption penalty."""
        return self.preemption

    def migrate(self, n: int) -> float:
        """Return the fixed preemption penalty."""
        return self.preemption


NO_COST = NoCost()
