"""Static per-job columns of a workload, built once per workload and sliced per episode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpcgym.sim.spec import JobKind, JobSpec, SizeRule

KINDS = (JobKind.RIGID, JobKind.MOLDABLE, JobKind.MALLEABLE, JobKind.EVOLVING)
"""Kind codes: the index in this tuple."""
RULES = (SizeRule.ANY, SizeRule.POWER_OF_TWO, SizeRule.MULTIPLE)
"""Size-rule codes: the index in this tuple."""
_FLEXIBLE = (JobKind.MOLDABLE, JobKind.MALLEABLE)
# Enum members as module constants (attribute access on an Enum class is slow on 3.11).
_ANY = SizeRule.ANY


def _start_range(spec: JobSpec) -> tuple[int, int]:
    """Smallest and largest start sizes of ``spec``."""
    if spec.kind not in _FLEXIBLE:
        return spec.nodes, spec.nodes
    if spec.size_rule is _ANY:
        return spec.min_nodes, spec.max_nodes
    sizes = spec.sizes().tolist() or [spec.nodes]
    return sizes[0], sizes[-1]


@dataclass(frozen=True, slots=True)
class JobTable:
    """One array per static job attribute, row ``i`` for job ``i`` in submission order.

    ``estimate`` is the walltime, or the work when the workload has none; ``efficiency_max``
    the parallel efficiency at ``max`` relative to ``req``; ``next_step`` an evolving job's
    second-step size (0 otherwise); ``kind`` and ``rule`` are codes (``KINDS``, ``RULES``).
    ``flexible``: the scheduler picks the start size (moldable, malleable); ``size_min`` and
    ``size_max``: the smallest and largest start sizes (the requested one for other kinds).
    """

    submit: np.ndarray
    work: np.ndarray
    estimate: np.ndarray
    req: np.ndarray
    min: np.ndarray
    max: np.ndarray
    cpu_need: np.ndarray
    mem: np.ndarray
    kind: np.ndarray
    rule: np.ndarray
    multiple: np.ndarray
    efficiency_max: np.ndarray
    next_step: np.ndarray
    flexible: np.ndarray
    size_min: np.ndarray
    size_max: np.ndarray

    @classmethod
    def build(cls, specs: Sequence[JobSpec]) -> JobTable:
        """The table of ``specs``."""
        n = len(specs)

        ranges = [_start_range(s) for s in specs]

        def col(values: Sequence[float], dtype: type = np.float64) -> np.ndarray:
            out: np.ndarray = np.array(values, dtype=dtype).reshape(n)
            out.flags.writeable = False  # shared by every episode of the workload
            return out

        return cls(
            submit=col([s.submit for s in specs]),
            work=col([s.work for s in specs]),
            estimate=col([s.walltime if s.walltime is not None else s.work for s in specs]),
            req=col([s.nodes for s in specs], np.int64),
            min=col([s.min_nodes for s in specs], np.int64),
            max=col([s.max_nodes for s in specs], np.int64),
            cpu_need=col([s.cpu_need for s in specs]),
            mem=col([s.mem for s in specs]),
            kind=col([KINDS.index(s.kind) for s in specs], np.int64),
            rule=col([RULES.index(s.size_rule) for s in specs], np.int64),
            multiple=col([s.size_multiple for s in specs], np.int64),
            efficiency_max=col(
                [min(1.0, s.rate(s.max_nodes) * s.nodes / s.max_nodes) for s in specs]
            ),
            next_step=col(
                [s.evolution[1].nodes if len(s.evolution) > 1 else 0 for s in specs], np.int64
            ),
            flexible=col([s.kind in _FLEXIBLE for s in specs], np.bool_),
            size_min=col([r[0] for r in ranges], np.int64),
            size_max=col([r[1] for r in ranges], np.int64),
        )

    def slice(self, start: int, stop: int) -> JobTable:
        """Rows ``[start, stop)`` (views, no copy)."""
        return JobTable(*(getattr(self, f)[start:stop] for f in self.__slots__))
