"""Speedup models: how fast a job runs on ``n`` tasks relative to one.

A model maps a task count to a speedup ``s(n)`` with ``s(1) = 1``. The engine only ever uses
ratios ``s(n) / s(n_ref)``, where ``n_ref`` is the size the job's work was measured at, so a
job run at its requested size progresses at rate 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from hpcgym.errors import SpecError


@runtime_checkable
class SpeedupModel(Protocol):
    """Anything that maps a task count ``n >= 1`` to a positive speedup."""

    def __call__(self, n: float) -> float:
        """Return the speedup on ``n`` tasks."""
        ...


@dataclass(frozen=True, slots=True)
class Linear:
    """Perfect scaling: ``s(n) = n``."""

    def __call__(self, n: float) -> float:
        """Return ``n``."""
        return float(n)


@dataclass(frozen=True, slots=True)
class Amdahl:
    """Amdahl's law with a serial fraction ``f``: ``s(n) = 1 / (f + (1 - f) / n)``."""

    serial_fraction: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.serial_fraction <= 1.0:
            raise SpecError(f"Amdahl serial_fraction must be in [0, 1], got {self.serial_fraction}")

    def __call__(self, n: float) -> float:
        """Return Amdahl's speedup on ``n`` tasks."""
        f = self.serial_fraction
        return 1.0 / (f + (1.0 - f) / n)


@dataclass(frozen=True, slots=True)
class PowerLaw:
    """Sub-linear scaling ``T(n) = T1 / n**(1 - rho)``, so ``s(n) = n**(1 - rho)``.

    ``rho = 0`` is linear; larger ``rho`` scales worse. This is the documented choice for the
    MEBF paper's scalability parameter, whose exact formula the paper does not give.
    """

    rho: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.rho <= 1.0:
            raise SpecError(f"PowerLaw rho must be in [0, 1], got {self.rho}")

    def __call__(self, n: float) -> float:
        """Return ``n ** (1 - rho)``."""
        return float(n) ** (1.0 - self.rho)


@dataclass(frozen=True, slots=True)
class SpeedupTable:
    """Measured speedups at given sizes, linearly interpolated and constant past the last size."""

    sizes: tuple[int, ...]
    speedups: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.sizes) != len(self.speedups) or not self.sizes:
            raise SpecError("SpeedupTable needs as many speedups as sizes, and at least one")
        if any(b <= a for a, b in zip(self.sizes, self.sizes[1:], strict=False)):
            raise SpecError(f"SpeedupTable sizes must increase strictly, got {self.sizes}")
        if self.sizes[0] < 1 or any(s <= 0 for s in self.speedups):
            raise SpecError("SpeedupTable sizes must be >= 1 and speedups > 0")

    def __call__(self, n: float) -> float:
        """Return the interpolated speedup at ``n``."""
        return float(np.interp(n, self.sizes, self.speedups))


LINEAR = Linear()
