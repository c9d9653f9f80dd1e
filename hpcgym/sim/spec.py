"""Immutable job descriptions, as a workload gives them to the engine.

Sizes count *tasks*. A task occupies ``cpu_need`` of one node's CPU and ``mem`` of its memory;
with the default ``cpu_need = 1.0`` a task is a whole node, so sizes are node counts. Several
tasks of one job may share a node only when their needs allow it (the DFRS setting).
"""

from __future__ import annotations

import gc
import math
from collections import deque
from dataclasses import dataclass, field, fields
from enum import Enum
from itertools import repeat
from typing import Any

import numpy as np

from hpcgym.errors import SpecError
from hpcgym.sim.reconfig import NO_COST, ReconfigCost
from hpcgym.sim.speedup import LINEAR, SpeedupModel


class JobKind(Enum):
    """Who may change a job's size, and when."""

    RIGID = "rigid"
    """Runs at its requested size from start to end."""
    MOLDABLE = "moldable"
    """The scheduler picks its size in [min, max] at start; then fixed."""
    MALLEABLE = "malleable"
    """The scheduler may shrink or expand it within [min, max] while it runs."""
    EVOLVING = "evolving"
    """It changes size itself, following its evolution profile."""


class SizeRule(Enum):
    """Which sizes in [min, max] a job accepts."""

    ANY = "any"
    POWER_OF_TWO = "power_of_two"
    MULTIPLE = "multiple"
    """A multiple of the spec's ``size_multiple``."""


# Enum members as module constants: on Python 3.11 reading ``JobKind.X`` costs ~0.3 us (the
# enum metaclass's ``__getattr__`` hook); specs are built by the hundred thousand.
_RIGID = JobKind.RIGID
_MALLEABLE = JobKind.MALLEABLE
_EVOLVING = JobKind.EVOLVING
_POWER_OF_TWO = SizeRule.POWER_OF_TWO
_MULTIPLE = SizeRule.MULTIPLE

TIME_HORIZON = 2.0**53
"""Latest submit time, and longest work or walltime, in seconds (about 285 million years).

Up to here float64 times are exact to the second, so that every event, tick and completion moves
the clock; a time beyond it is refused rather than simulated wrongly (or forever).
"""

_INT_FIELDS = ("id", "nodes", "min_nodes", "max_nodes", "size_multiple", "user", "group")
_FLOAT_FIELDS = ("submit", "work", "cpu_need", "mem")


def _as_int(where: str, name: str, value: object) -> int:
    """``value`` as an ``int`` (numpy integers too); a ``SpecError`` for anything else."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return int(value)
    raise SpecError(f"{where}: {name} must be an integer, got {value!r}")


def _as_real(where: str, name: str, value: object) -> float | int:
    """``value`` as a real number (numpy ones become ``float``); a ``SpecError`` otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise SpecError(f"{where}: {name} must be a number, got {value!r}")
    if isinstance(value, np.number):
        if isinstance(value, np.complexfloating):
            raise SpecError(f"{where}: {name} must be a real number, got {value!r}")
        return float(value)
    return value


@dataclass(frozen=True, slots=True)
class EvolutionStep:
    """One step of an evolving job: ``nodes`` tasks for ``duration`` seconds of progress."""

    duration: float
    nodes: int


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Everything known about a job before it runs.

    Attributes:
        id: Unique job number (the SWF job number for traces).
        submit: Submission time in seconds.
        work: Seconds the job runs at size ``nodes`` with full CPU (the SWF run time). For an
            evolving job it is derived: the sum of its step durations.
        nodes: Requested size (tasks); the reference size of ``work``. Evolving: first step's.
        kind: Rigid, moldable, malleable or evolving.
        min_nodes: Smallest size; defaults to ``nodes`` (rigid) and must be ``<= nodes``.
        max_nodes: Largest size; defaults to ``nodes``.
        size_rule: Which sizes in [min, max] are accepted.
        size_multiple: The ``k`` of ``_MULTIPLE``.
        walltime: The user's run-time estimate in seconds, or ``None`` when unknown.
        speedup: Speedup model (used for moldable and malleable size changes).
        reconfig: Reconfiguration-cost model for resize, restart and migration.
        evolution: Steps of an evolving job; empty for other kinds.
        cpu_need: Fraction of a node's CPU one task can use, in (0, 1].
        mem: Fraction of a node's memory one task needs, in [0, 1].
        user: User id (-1 when unknown).
        group: Group id (-1 when unknown).
    """

    id: int
    submit: float
    work: float = 0.0
    nodes: int = 1
    kind: JobKind = JobKind.RIGID
    min_nodes: int = 0
    max_nodes: int = 0
    size_rule: SizeRule = SizeRule.ANY
    size_multiple: int = 1
    walltime: float | None = None
    speedup: SpeedupModel = field(default=LINEAR, compare=False)
    reconfig: ReconfigCost = field(default=NO_COST, compare=False)
    evolution: tuple[EvolutionStep, ...] = ()
    cpu_need: float = 1.0
    mem: float = 0.0
    user: int = -1
    group: int = -1

    def __post_init__(self) -> None:
        where = f"job {self.id}"
        # Specs are built by the hundred thousand: one test for the usual Python types.
        if not (
            type(self.id) is int
            and type(self.nodes) is int
            and type(self.min_nodes) is int
            and type(self.max_nodes) is int
            and type(self.size_multiple) is int
            and type(self.user) is int
            and type(self.group) is int
            and type(self.submit) is float
            and type(self.work) is float
            and type(self.cpu_need) is float
            and type(self.mem) is float
            and (self.walltime is None or type(self.walltime) is float)
        ):
            self._normalize_numbers(where)
        if self.kind is _EVOLVING:
            steps = tuple(
                s
                if isinstance(s, EvolutionStep)
                else EvolutionStep(
                    float(_as_real(where, "step duration", s[0])),
                    _as_int(where, "step nodes", s[1]),
                )
                for s in self.evolution
            )
            if not steps:
                raise SpecError(f"{where}: an evolving job needs at least one evolution step")
            for i, s in enumerate(steps):
                if not (s.duration >= 0 and math.isfinite(s.duration)) or s.nodes < 1:
                    raise SpecError(
                        f"{where}: evolution step {i} needs duration >= 0 and nodes >= 1, got {s}"
                    )
            object.__setattr__(self, "evolution", steps)
            object.__setattr__(self, "work", float(sum(s.duration for s in steps)))
            object.__setattr__(self, "nodes", steps[0].nodes)
            object.__setattr__(self, "min_nodes", min(s.nodes for s in steps))
            object.__setattr__(self, "max_nodes", max(s.nodes for s in steps))
        elif self.evolution:
            raise SpecError(f"{where}: only evolving jobs have an evolution profile")
        if not 0 <= self.submit <= TIME_HORIZON:
            raise SpecError(
                f"{where}: submit time must be in [0, {TIME_HORIZON:g}] s (the time horizon), "
                f"got {self.submit}"
            )
        if not 0 <= self.work <= TIME_HORIZON:
            raise SpecError(
                f"{where}: work must be in [0, {TIME_HORIZON:g}] s (the time horizon), "
                f"got {self.work}"
            )
        if self.nodes < 1:
            raise SpecError(f"{where}: requested size must be >= 1, got {self.nodes}")
        if self.min_nodes == 0:
            object.__setattr__(self, "min_nodes", self.nodes)
        if self.max_nodes == 0:
            object.__setattr__(self, "max_nodes", self.nodes)
        if self.kind is not _EVOLVING and not (1 <= self.min_nodes <= self.nodes <= self.max_nodes):
            raise SpecError(
                f"{where}: need 1 <= min_nodes <= nodes <= max_nodes, got "
                f"{self.min_nodes} <= {self.nodes} <= {self.max_nodes}"
            )
        if self.kind is _RIGID and self.min_nodes != self.max_nodes:
            raise SpecError(f"{where}: a rigid job has min_nodes == nodes == max_nodes")
        if self.size_multiple < 1:
            raise SpecError(f"{where}: size_multiple must be >= 1, got {self.size_multiple}")
        if self.kind is not _EVOLVING and not self.allows(self.nodes):
            raise SpecError(
                f"{where}: requested size {self.nodes} breaks its size rule {self.size_rule.value}"
            )
        if self.walltime is not None and not 0 < self.walltime <= TIME_HORIZON:
            raise SpecError(
                f"{where}: walltime must be in (0, {TIME_HORIZON:g}] s (the time horizon) or "
                f"None, got {self.walltime}"
            )
        if not 0.0 < self.cpu_need <= 1.0:
            raise SpecError(f"{where}: cpu_need must be in (0, 1], got {self.cpu_need}")
        if not 0.0 <= self.mem <= 1.0:
            raise SpecError(f"{where}: mem must be in [0, 1], got {self.mem}")

    def _normalize_numbers(self, where: str) -> None:
        """Numpy numbers become Python ones; bools, strings and other types are refused."""
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if type(value) is not int:
                object.__setattr__(self, name, _as_int(where, name, value))
        for name in _FLOAT_FIELDS:
            value = getattr(self, name)
            if type(value) is not float:
                object.__setattr__(self, name, _as_real(where, name, value))
        if self.walltime is not None and type(self.walltime) is not float:
            object.__setattr__(self, "walltime", _as_real(where, "walltime", self.walltime))

    @property
    def is_elastic(self) -> bool:
        """Whether the scheduler may resize the job while it runs."""
        return self.kind is _MALLEABLE

    def allows(self, n: int) -> bool:
        """Whether ``n`` tasks is within [min, max] and satisfies the size rule."""
        if not self.min_nodes <= n <= self.max_nodes:
            return False
        if self.size_rule is _POWER_OF_TWO:
            return n & (n - 1) == 0
        if self.size_rule is _MULTIPLE:
            return n % self.size_multiple == 0
        return True

    def sizes(self) -> np.ndarray:
        """All accepted sizes, ascending."""
        candidates = np.arange(self.min_nodes, self.max_nodes + 1)
        if self.size_rule is _POWER_OF_TWO:
            return candidates[(candidates & (candidates - 1)) == 0]
        if self.size_rule is _MULTIPLE:
            return candidates[candidates % self.size_multiple == 0]
        return candidates

    def rate(self, n: int) -> float:
        """Progress rate on ``n`` tasks with full CPU: ``speedup(n) / speedup(nodes)``."""
        if n == self.nodes:
            return 1.0
        return self.speedup(n) / self.speedup(self.nodes)

    def runtime_at(self, n: int) -> float:
        """Seconds the job takes on ``n`` tasks with full CPU (evolving: the sum of its steps)."""
        if self.kind is _EVOLVING:
            return self.work
        return self.work / self.rate(n)


_RIGID_COLUMNS = (
    *("id", "submit", "work", "nodes", "min_nodes", "max_nodes"),
    *("walltime", "user", "group"),
)
"""The fields :func:`rigid_specs` takes from its columns; the others keep their defaults."""


def smallest_need(spec: JobSpec) -> int:
    """Tasks the job needs at once at the least.

    Its smallest accepted size; for an evolving job its largest step, which it must be granted.
    """
    if spec.kind is JobKind.EVOLVING:
        return spec.max_nodes
    if spec.size_rule is SizeRule.ANY:
        return spec.min_nodes
    return int(spec.sizes()[0])


def fits_machine(spec: JobSpec, largest: int) -> bool:
    """Whether the job can ever run on a machine whose largest cluster has ``largest`` nodes.

    The engine's rule for ending a job as rejected at submission: its :func:`smallest_need`
    tasks, packed as densely as their CPU need and memory allow (1e-9 tolerance, as the node
    pool's), fit the largest cluster.
    """
    need = smallest_need(spec)
    if spec.cpu_need == 1.0 and spec.mem <= 1.0:
        return need <= largest
    per_node = math.floor((1.0 + 1e-9) / spec.cpu_need)
    if spec.mem > 0:
        per_node = min(per_node, math.floor((1.0 + 1e-9) / spec.mem))
    return need <= per_node * largest


def rigid_valid(
    submit: np.ndarray, work: np.ndarray, nodes: np.ndarray, walltime: np.ndarray
) -> np.ndarray:
    """Which rows :class:`JobSpec` accepts as rigid jobs (``walltime`` ``nan``: none).

    The checks ``JobSpec.__post_init__`` makes on a rigid job with default models, in bulk:
    submit and work in ``[0, TIME_HORIZON]``, at least one node, a walltime in
    ``(0, TIME_HORIZON]`` or none.
    """
    wall_ok = np.isnan(walltime) | ((walltime > 0) & (walltime <= TIME_HORIZON))
    return (
        (submit >= 0)
        & (submit <= TIME_HORIZON)
        & (work >= 0)
        & (work <= TIME_HORIZON)
        & (nodes >= 1)
        & wall_ok
    )


def _c_core() -> Any:
    """The C core (``_batchcore.c``), or ``None`` in a pure-Python install.

    ``rigid_specs`` uses its ``new_objects``, ``set_column`` and ``untrack``.
    """
    try:
        from hpcgym.sim import _batchcore
    except ImportError:
        return None
    return _batchcore


def rigid_specs(
    id: np.ndarray,
    submit: np.ndarray,
    work: np.ndarray,
    nodes: np.ndarray,
    walltime: np.ndarray,
    user: np.ndarray,
    group: np.ndarray,
) -> list[JobSpec]:
    """Rigid jobs with the default models from columns: ``JobSpec(...)`` row by row, faster.

    Args:
        id: Job ids (integers).
        submit: Submit times (floats).
        work: Work, seconds (floats).
        nodes: Sizes (integers).
        walltime: Walltimes (floats), ``nan`` for "no walltime" (``None``).
        user: User ids (integers).
        group: Group ids (integers).

    Returns:
        The jobs ``JobSpec(id=id[i], submit=submit[i], work=work[i], nodes=nodes[i],
        walltime=walltime[i] or None, user=user[i], group=group[i])`` would give, field for
        field (Python ``int`` and ``float`` values). When every row passes :func:`rigid_valid`
        the fields are stored directly, column by column (``__init__`` and its per-job checks
        cost several times more, for the same objects); otherwise the jobs are built one by one
        with ``JobSpec(...)``, which raises its own error at the first bad row.

    Raises:
        SpecError: A row ``JobSpec`` refuses (the first one).
    """
    n = len(id)
    ints = [np.asarray(c).astype(np.int64).tolist() for c in (id, nodes, user, group)]
    floats = [np.asarray(c, dtype=np.float64) for c in (submit, work, walltime)]
    if any(len(c) != n for c in (*ints, *floats)):
        raise SpecError("rigid_specs: every column needs one value per job")
    sub, wrk, wall = floats
    no_wall = np.isnan(wall)
    boxed = wall.astype(object)
    boxed[no_wall] = None
    walls: list[float | None] = boxed.tolist()
    ids, sizes, users, groups = ints
    if not rigid_valid(sub, wrk, np.asarray(sizes, dtype=np.int64), wall).all():
        return [
            JobSpec(id=i, submit=s, work=r, nodes=k, walltime=w, user=u, group=g)
            for i, s, r, k, w, u, g in zip(
                ids, sub.tolist(), wrk.tolist(), sizes, walls, users, groups, strict=True
            )
        ]
    columns: dict[str, list[Any]] = dict(
        zip(
            _RIGID_COLUMNS,
            (ids, sub.tolist(), wrk.tolist(), sizes, sizes, sizes, walls, users, groups),
            strict=True,
        )
    )
    template = JobSpec(id=0, submit=0.0)
    paused = gc.isenabled()
    gc.disable()  # the new objects hold no cycles; collecting while they pile up costs 2x
    try:
        core = _c_core()
        if core is not None:
            jobs = core.new_objects(JobSpec, n)
        else:
            jobs = list(map(object.__new__, repeat(JobSpec, n)))
        for f in fields(JobSpec):
            values = columns.get(f.name)
            # A slot's descriptor sets the field as the frozen __init__ does, without __setattr__
            # (the C core: the same, one call per field).
            descr = getattr(JobSpec, f.name)
            if core is not None:
                if values is None:
                    core.set_column(descr, jobs, getattr(template, f.name), False)
                else:
                    core.set_column(descr, jobs, values, True)
            else:
                if values is None:
                    values = list(repeat(getattr(template, f.name), n))
                deque(map(descr.__set__, jobs, values), maxlen=0)
        if core is not None:
            # Frozen, holding only numbers, None, enum members, an empty tuple and the shared
            # default models, these jobs can never be in a cycle: the collector need not walk
            # them at every collection of the older generations.
            core.untrack(jobs)
    finally:
        if paused:
            gc.enable()
    return jobs
