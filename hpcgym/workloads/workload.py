"""The workload record everything downstream consumes: jobs, header, platform, provenance."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.swf import N_FIELDS

JsonValue = Any
"""A value that ``json.dumps`` accepts (numbers, strings, lists, dicts, ``None``)."""


@dataclass(frozen=True, slots=True)
class ProvenanceStep:
    """One step that made or changed a workload: what, with which parameters and seed."""

    op: str
    params: tuple[tuple[str, JsonValue], ...] = ()
    seed: int | None = None

    @classmethod
    def make(cls, op: str, seed: int | None = None, **params: JsonValue) -> ProvenanceStep:
        """A step from keyword parameters (kept in sorted key order)."""
        return cls(op, tuple(sorted(params.items())), seed)

    def to_dict(self) -> dict[str, JsonValue]:
        """A JSON-friendly dict: ``{"op": ..., "seed": ..., "params": {...}}``."""
        return {"op": self.op, "seed": self.seed, "params": dict(self.params)}

    def to_json(self) -> str:
        """One line of JSON."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Workload:
    """Jobs in submission order, with what is known about where they came from.

    Attributes:
        name: A short name (a set name such as ``swf/sdsc-sp2-v0``, or a file name).
        jobs: The jobs, sorted by submission time (ties keep their source order).
        platform: The machine the jobs were made for (the engine may be given another).
        header: SWF header comments (kept from the source trace, acknowledgements included).
        provenance: Every step that made or changed the jobs, in order.
        rows: The source SWF records, row ``i`` belonging to ``jobs[i]``; ``None`` when the jobs
            were not made from records. Annotations that read trace fields (memory, estimates)
            use them.
        skipped: ``(reason, count)`` of records that could not become jobs.
    """

    name: str
    jobs: tuple[JobSpec, ...]
    platform: Platform
    header: SwfHeader = field(default_factory=SwfHeader)
    provenance: tuple[ProvenanceStep, ...] = ()
    rows: np.ndarray | None = field(default=None, compare=False, repr=False)
    skipped: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        jobs = tuple(self.jobs)
        object.__setattr__(self, "jobs", jobs)
        submits = np.fromiter((j.submit for j in jobs), dtype=np.float64, count=len(jobs))
        if len(jobs) > 1 and (np.diff(submits) < 0).any():
            i = int(np.flatnonzero(np.diff(submits) < 0)[0])
            raise WorkloadError(
                f"workload {self.name!r}: jobs must be in submission order, but job "
                f"{jobs[i + 1].id} (submit {jobs[i + 1].submit}) follows job {jobs[i].id} "
                f"(submit {jobs[i].submit}); sort them by submit time first"
            )
        ids = [j.id for j in jobs]
        if len(set(ids)) != len(ids):
            seen: dict[int, int] = {}
            for i, jid in enumerate(ids):
                if jid in seen:
                    raise WorkloadError(
                        f"workload {self.name!r}: job id {jid} appears at positions {seen[jid]} "
                        f"and {i}; job ids must be unique"
                    )
                seen[jid] = i
        if self.rows is not None:
            rows = np.asarray(self.rows, dtype=np.float64).reshape(-1, N_FIELDS)
            if len(rows) != len(jobs):
                raise WorkloadError(
                    f"workload {self.name!r}: {len(rows)} SWF rows for {len(jobs)} jobs"
                )
            object.__setattr__(self, "rows", rows)

    @classmethod
    def _checked(
        cls,
        *,
        name: str,
        jobs: tuple[JobSpec, ...],
        platform: Platform,
        header: SwfHeader,
        provenance: tuple[ProvenanceStep, ...],
        rows: np.ndarray,
        skipped: tuple[tuple[str, int], ...],
    ) -> Workload:
        """A workload whose maker already checked what ``__post_init__`` checks.

        For ``trace_to_workload``, which sorts the records by submission time and refuses a
        repeated id on the columns: the per-job checks again cost a fifth of the build on
        large traces. ``rows`` must be a float64 array with one row per job.
        """
        w = object.__new__(cls)
        for key, value in (
            ("name", name),
            ("jobs", jobs),
            ("platform", platform),
            ("header", header),
            ("provenance", provenance),
            ("rows", rows),
            ("skipped", skipped),
        ):
            object.__setattr__(w, key, value)
        return w

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[JobSpec]:
        return iter(self.jobs)

    def __getitem__(self, i: int) -> JobSpec:
        return self.jobs[i]

    @property
    def seed(self) -> int | None:
        """The seed of the first seeded provenance step (the one that made the jobs)."""
        return next((s.seed for s in self.provenance if s.seed is not None), None)

    def derive(
        self,
        jobs: tuple[JobSpec, ...] | list[JobSpec],
        step: ProvenanceStep,
        *,
        rows: np.ndarray | None = None,
        keep_rows: bool = False,
        **changes: Any,
    ) -> Workload:
        """A new workload with other jobs and one more provenance step.

        Args:
            jobs: The new jobs, in submission order.
            step: What was done.
            rows: New aligned SWF rows.
            keep_rows: Keep the current rows (the jobs correspond one to one).
            **changes: Other fields to replace (``platform``, ``name``, ...).
        """
        new_rows = self.rows if keep_rows else rows
        return replace(
            self,
            jobs=tuple(jobs),
            rows=new_rows,
            provenance=(*self.provenance, step),
            **changes,
        )

    def fingerprint(self) -> str:
        """A SHA-256 over every job field and model parameter: equal jobs, equal fingerprint."""
        h = hashlib.sha256()
        for j in self.jobs:
            h.update(repr(j).encode())
            h.update(repr(j.speedup).encode())
            h.update(repr(j.reconfig).encode())
        return h.hexdigest()

    def provenance_dicts(self) -> list[Mapping[str, JsonValue]]:
        """The provenance as JSON-friendly dicts."""
        return [s.to_dict() for s in self.provenance]
