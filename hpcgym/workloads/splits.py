"""Disjoint train, validation and test splits of one trace, and the episode windows inside them.

A split is a contiguous range of the trace's submission-time span: by default the first 70% of
the span for training, the next 10% for validation and the last 20% for test. A job belongs to
the split its submission time falls in, so the splits share no job. An episode window is
``n_jobs`` consecutive jobs that lie wholly inside one split: no window crosses a boundary,
so no test episode holds a job that any training episode can hold.

Splitting by time and not by job count keeps the test period a period of the machine's life
that training never saw, as a deployment would meet it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.workloads.workload import Workload

SPLITS = ("train", "validation", "test")
"""The split names, in time order."""

DEFAULT_FRACTIONS: Mapping[str, tuple[float, float]] = {
    "train": (0.0, 0.7),
    "validation": (0.7, 0.8),
    "test": (0.8, 1.0),
}
"""Each split's share of the submission-time span, as ``(from, to)`` fractions."""


@dataclass(frozen=True, slots=True)
class Split:
    """The jobs ``[first, stop)`` of a workload (indices in submission order).

    Attributes:
        name: ``train``, ``validation`` or ``test``.
        first: Index of the split's first job.
        stop: One past the index of its last job.
        t0: Start of its submission-time range.
        t1: End of its submission-time range (exclusive, but for the last split).
    """

    name: str
    first: int
    stop: int
    t0: float
    t1: float

    def __len__(self) -> int:
        return self.stop - self.first


def _check_fractions(
    fractions: Mapping[str, tuple[float, float]],
) -> list[tuple[str, float, float]]:
    ranges = sorted(((lo, hi, name) for name, (lo, hi) in fractions.items()))
    if not ranges:
        raise WorkloadError("no splits given")
    prev = 0.0
    for lo, hi, name in ranges:
        if not (0.0 <= lo < hi <= 1.0):
            raise WorkloadError(
                f"split {name!r}: fractions ({lo}, {hi}) must be 0 <= from < to <= 1"
            )
        if lo < prev:
            raise WorkloadError(f"split {name!r} overlaps the split before it (from {lo} < {prev})")
        prev = hi
    return [(name, lo, hi) for lo, hi, name in ranges]


def time_splits(
    workload: Workload, fractions: Mapping[str, tuple[float, float]] = DEFAULT_FRACTIONS
) -> dict[str, Split]:
    """The workload's splits by submission time (see the module doc).

    Raises:
        WorkloadError: Overlapping or out-of-range fractions, or a workload without jobs.
    """
    if not workload.jobs:
        raise WorkloadError(f"workload {workload.name!r} has no jobs to split")
    submit = np.fromiter((j.submit for j in workload.jobs), float, len(workload.jobs))
    t_first, t_last = float(submit[0]), float(submit[-1])
    span = t_last - t_first
    out: dict[str, Split] = {}
    for name, lo, hi in _check_fractions(fractions):
        t0 = t_first + lo * span
        t1 = t_first + hi * span
        first = int(np.searchsorted(submit, t0, side="left"))
        # The range is half-open, except that a split reaching the end keeps the last job.
        stop = len(submit) if hi == 1.0 else int(np.searchsorted(submit, t1, side="left"))
        out[name] = Split(name, first, stop, t0, t1)
    return out


def window_starts(split: Split, n_jobs: int, count: int | None = None) -> list[int]:
    """Starts of ``n_jobs``-job windows wholly inside ``split``.

    Without ``count``: every non-overlapping window, back to back from the split's first job.
    With ``count``: that many starts spread evenly over the split (windows may overlap when
    the split is short), the same every time.

    Raises:
        WorkloadError: The split holds fewer than ``n_jobs`` jobs, or ``count`` < 1.
    """
    if n_jobs < 1:
        raise WorkloadError(f"n_jobs must be at least 1, got {n_jobs}")
    last = split.stop - n_jobs  # the last start whose window fits
    if last < split.first:
        raise WorkloadError(
            f"the {split.name} split holds {len(split)} jobs, fewer than one {n_jobs}-job window"
        )
    if count is None:
        return list(range(split.first, last + 1, n_jobs))
    if count < 1:
        raise WorkloadError(f"count must be at least 1, got {count}")
    if count == 1:
        return [split.first]
    return sorted(set(np.rint(np.linspace(split.first, last, count)).astype(int).tolist()))
