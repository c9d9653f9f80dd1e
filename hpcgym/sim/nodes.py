"""Node bookkeeping: per-node CPU and memory in use, and the idle nodes of each cluster.

A node is idle exactly when its CPU in use is 0.0: every task has a share of at least
``MIN_SHARE``, and releases snap rounding residue back to exact zeros. Each cluster's idle
nodes are also kept as runs of ids (``IdleRuns``), so that a whole-node start takes the lowest
idle ids without scanning the cluster. The pool checks capacity and places tasks; it never
decides anything. Every method that would break capacity raises before touching state.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import numpy as np
from mypy_extensions import mypyc_attr

from hpcgym.errors import CapacityError, CommandError
from hpcgym.sim.platform import Platform

if TYPE_CHECKING:
    # Typed for the compiled build: the loops over ``lazy`` read ``Job``'s native fields.
    # (``hpcgym.sim.job`` imports this module: no import at run time.)
    from hpcgym.sim.job import Job

EPS: Final = 1e-9
"""Tolerance of every capacity comparison: shares like 1/3 must fit three times in a node."""

MIN_SHARE: Final = 1e-6
"""Smallest CPU share a task may get (well above ``EPS``, so a full node never takes one more)."""

# How a set of tasks sits on its nodes; the cheaper modes skip work in ``add`` and ``remove``.
SHARED: Final = 0
"""Several tasks of the job may share a node."""
UNIQUE: Final = 1
"""One task per node, any share."""
WHOLE: Final = 2
"""One task per node at share 1: the nodes are the job's alone."""


LAZY_COMPACT: Final = 4096
"""Jobs ``NodePool.lazy`` holds before its first compaction."""


@mypyc_attr(serializable=True)
class NodePool:
    """CPU and memory use of every node of a platform, tracked with numpy arrays."""

    __slots__ = (
        "_idle",
        "bounds",
        "cluster_of",
        "cpu_used",
        "free",
        "gives",
        "ids",
        "lazy",
        "lazy_cap",
        "mem_used",
        "platform",
        "single",
        "take0",
    )

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        n = platform.total_nodes
        self.cpu_used = np.zeros(n)
        self.mem_used = np.zeros(n)
        self.cluster_of = platform.cluster_of_nodes()
        self.bounds = [
            (o, o + c.nodes) for o, c in zip(platform.offsets, platform.clusters, strict=True)
        ]
        self.single = len(self.bounds) == 1
        self.free = [c.nodes for c in platform.clusters]
        """Idle nodes per cluster."""
        _grow_boxes(max(c.nodes for c in platform.clusters) + 1)
        idle: list[Runs] = [IdleRuns(lo, hi) for lo, hi in self.bounds]
        self._idle = idle
        # Bound methods, kept: compiled code calls a C extension's method by name otherwise
        # (a method lookup per call, about as costly as the call's work).
        self.take0: Callable[[int], bytes] = idle[0].take_packed
        """``idle[0].take_packed``."""
        self.gives: list[Callable[[bytes], int]] = [runs.give_packed for runs in idle]
        """``give_packed`` of each cluster's ``idle``."""
        self.ids = np.arange(n, dtype=np.int64)
        """Every node id (read-only): a run's ids are a slice of it, not a new array."""
        self.ids.flags.writeable = False
        self.lazy: list[Job] = []
        """Jobs whose whole-node holding was not written to ``cpu_used``
        when they started; ``job._cpu_lazy`` says whether it still is not (see ``sync``). A
        list, not a dict: a start appends, an end clears the job's flag, no lookup either way."""
        self.lazy_cap = LAZY_COMPACT
        """Length at which ``compact_lazy`` drops the jobs no longer lazy."""

    @property
    def idle(self) -> list[Runs]:
        """Idle node ids per cluster, as runs (the same nodes as ``cpu_used == 0.0``)."""
        return self._idle

    @idle.setter
    def idle(self, idle: list[Runs]) -> None:
        # ``take0`` and ``gives`` follow: they are the new runs' methods.
        self._idle = idle
        self.take0 = idle[0].take_packed
        self.gives = [runs.give_packed for runs in idle]

    def sync(self) -> None:
        """Write the lazy holdings' 1.0s to ``cpu_used``; call before reading it."""
        lazy = self.lazy
        if lazy:
            used = self.cpu_used
            for job in lazy:
                if job._cpu_lazy:
                    job._cpu_lazy = False
                    runs = unpack_runs(job._runs)
                    for i in range(0, len(runs), 2):
                        used[runs[i] : runs[i + 1]].fill(1.0)
            lazy.clear()

    def compact_lazy(self) -> None:
        """Drop from ``lazy`` the jobs whose holding ended or was written.

        Amortized O(1) per start: the next compaction waits until the list has doubled.
        """
        kept = [job for job in self.lazy if job._cpu_lazy]
        self.lazy = kept
        self.lazy_cap = max(LAZY_COMPACT, 2 * len(kept))

    def _in_cluster(self, cluster: int, values: np.ndarray) -> np.ndarray:
        if self.single:
            return values
        lo, hi = self.bounds[cluster]
        return values[lo:hi]

    def _fitting(self, cluster: int, cpu: float, mem: float) -> np.ndarray:
        """Ids of the nodes of ``cluster`` with room for one task of ``(cpu, mem)``, ascending."""
        self.sync()
        if cpu >= 1.0:
            fits = self._in_cluster(cluster, self.cpu_used) == 0.0
        else:
            fits = self._in_cluster(cluster, self.cpu_used) <= 1.0 - cpu + EPS
        if mem > 0:
            fits &= self._in_cluster(cluster, self.mem_used) <= 1.0 - mem + EPS
        found = fits.nonzero()[0]
        lo = self.bounds[cluster][0]
        return found + lo if lo else found

    def place(self, cluster: int, size: int, cpu: float, mem: float) -> np.ndarray:
        """Choose ``size`` distinct nodes of ``cluster`` that fit one task each, lowest ids first.

        Raises:
            CapacityError: Fewer than ``size`` nodes have room.
        """
        if cpu >= 1.0 and mem == 0:
            found = first_ids(self._idle[cluster], size)
        else:
            found = self._fitting(cluster, cpu, mem)
        if found.size < size:
            raise CapacityError(
                f"cluster {cluster} has {found.size} nodes with room for a task of "
                f"cpu {cpu:g} and memory {mem:g}, {size} needed"
            )
        return found[:size]

    def take_idle(self, cluster: int, size: int, mem: float) -> tuple[np.ndarray, list[int]]:
        """Place ``size`` whole-node tasks on the lowest-numbered idle nodes and account them.

        Returns:
            The nodes, ascending, and the same as runs ``[lo0, hi0, lo1, hi1, ...]``.

        Raises:
            CapacityError: Fewer than ``size`` idle nodes in ``cluster``.
        """
        free = self.free
        if free[cluster] < size:
            raise CapacityError(f"cluster {cluster} has {free[cluster]} idle nodes, {size} needed")
        runs = self._idle[cluster]
        a = runs.take_front(size)
        free[cluster] -= size
        if a >= 0:
            self.cpu_used[a : a + size].fill(1.0)
            if mem:
                self.mem_used[a : a + size].fill(mem)
            return self.ids[a : a + size], [a, a + size]
        taken = runs.take_runs(size)
        nodes = self.ids_of(taken)
        set_runs(self.cpu_used, taken, nodes, 1.0)
        if mem:
            set_runs(self.mem_used, taken, nodes, mem)
        return nodes, taken

    def ids_of(self, runs: list[int]) -> np.ndarray:
        """The ids of runs ``[lo0, hi0, lo1, hi1, ...]`` as one array (a view for one run)."""
        ids = self.ids
        if len(runs) == 2:
            return ids[runs[0] : runs[1]]
        if len(runs) <= 32:
            return np.concatenate([ids[runs[i] : runs[i + 1]] for i in range(0, len(runs), 2)])
        return ids_of_runs(runs)

    def release_runs(self, cluster: int, runs: bytes, written: bool) -> None:
        """Free the whole-node tasks (no memory held) of a job, its packed runs ``runs``.

        ``written``: whether the holding was written to ``cpu_used`` (else nothing to clear).
        """
        if written:
            used = self.cpu_used
            bounds = unpack_runs(runs)
            for i in range(0, len(bounds), 2):
                used[bounds[i] : bounds[i + 1]].fill(0.0)
        # The count as a shared Python int (``box``) when small: no new object per end.
        free = cast("list[object]", self.free)
        free[cluster] = box(cast(int, free[cluster]) + self.gives[cluster](runs))

    def cluster_fitting(self, size: int, cpu: float, mem: float) -> int:
        """The first cluster in which ``size`` tasks fit one per node, or -1."""
        for k in range(len(self.bounds)):
            if cpu >= 1.0 and mem == 0:
                if self.free[k] >= size:
                    return k
            elif self._fitting(k, cpu, mem).size >= size:
                return k
        return -1

    def check(
        self,
        nodes: np.ndarray,
        cpu: np.ndarray,
        mem: float,
        freed_nodes: np.ndarray | None = None,
        freed_cpu: np.ndarray | None = None,
    ) -> int:
        """Validate that tasks ``(nodes[i], cpu[i])`` fit, optionally after freeing some tasks.

        Returns:
            The cluster index of the nodes.

        Raises:
            CommandError: Node ids out of range or spanning clusters, or shares out of range.
            CapacityError: A node's CPU or memory would exceed 1.
        """
        self.sync()
        n = self.cpu_used.size
        if nodes.size == 0:
            raise CommandError("no nodes given")
        if nodes.min() < 0 or nodes.max() >= n:
            raise CommandError(f"node ids must be in [0, {n}), got {nodes.min()}..{nodes.max()}")
        clusters = self.cluster_of[nodes]
        cluster = int(clusters[0])
        if np.any(clusters != cluster):
            raise CommandError("a job's tasks must all be on nodes of one cluster")
        if not (cpu.min() >= MIN_SHARE and cpu.max() <= 1.0):  # NaN fails both
            raise CommandError(f"CPU shares must be in [{MIN_SHARE:g}, 1]")
        # Sums per distinct node of the command (not per node of the platform: a wide machine
        # must not make a command on a few nodes cost its width).
        distinct, at = np.unique(nodes, return_inverse=True)
        add_cpu = np.bincount(at, weights=cpu, minlength=distinct.size)
        add_mem = np.bincount(at, minlength=distinct.size) * mem
        if freed_nodes is not None and freed_cpu is not None and freed_nodes.size:
            pos = np.searchsorted(distinct, freed_nodes).clip(max=distinct.size - 1)
            hit = distinct[pos] == freed_nodes
            add_cpu -= np.bincount(pos[hit], weights=freed_cpu[hit], minlength=distinct.size)
            add_mem -= np.bincount(pos[hit], minlength=distinct.size) * mem
        cpu_now = self.cpu_used[distinct]
        over_cpu = np.flatnonzero(cpu_now + add_cpu > 1.0 + EPS)
        if over_cpu.size:
            i = int(over_cpu[0])
            raise CapacityError(
                f"node {distinct[i]} would use {cpu_now[i] + add_cpu[i]:.4g} of its CPU (max 1)"
            )
        mem_now = self.mem_used[distinct]
        over_mem = np.flatnonzero(mem_now + add_mem > 1.0 + EPS)
        if over_mem.size:
            i = int(over_mem[0])
            raise CapacityError(
                f"node {distinct[i]} would use {mem_now[i] + add_mem[i]:.4g} of its memory (max 1)"
            )
        return cluster

    def add(self, cluster: int, nodes: np.ndarray, cpu: np.ndarray, mem: float, mode: int) -> None:
        """Account tasks on nodes (already checked); ``mode``: ``WHOLE``, ``UNIQUE``, ``SHARED``."""
        self.sync()
        used = self.cpu_used
        if mode == WHOLE:
            # Whole-node tasks: the nodes were idle and are now exactly full.
            self.free[cluster] -= nodes.size
            self._idle[cluster].occupy_ids(nodes)
            used[nodes] = 1.0
            if mem:
                self.mem_used[nodes] = mem
        elif mode == UNIQUE:
            taken = nodes[used[nodes] == 0.0]
            self.free[cluster] -= taken.size
            self._idle[cluster].occupy_ids(taken)
            used[nodes] += cpu
            if mem:
                self.mem_used[nodes] += mem
        else:
            distinct = np.unique(nodes)
            taken = distinct[used[distinct] == 0.0]
            self.free[cluster] -= taken.size
            self._idle[cluster].occupy_ids(taken)
            np.add.at(used, nodes, cpu)
            if mem:
                np.add.at(self.mem_used, nodes, mem)

    def remove(
        self, cluster: int, nodes: np.ndarray, cpu: np.ndarray, mem: float, mode: int
    ) -> None:
        """Remove tasks from nodes; nodes left with nothing become idle."""
        self.sync()
        used = self.cpu_used
        if mode == WHOLE:
            used[nodes] = 0.0
            if mem:
                self.mem_used[nodes] = 0.0
            self.free[cluster] += nodes.size
            self._idle[cluster].give_ids(nodes)
            return
        if mode == UNIQUE:
            used[nodes] -= cpu
            if mem:
                self.mem_used[nodes] -= mem
        else:
            np.subtract.at(used, nodes, cpu)
            if mem:
                np.subtract.at(self.mem_used, nodes, mem)
            nodes = np.unique(nodes)
        emptied = nodes[used[nodes] <= EPS]
        if emptied.size:
            # Snap rounding residue to exact zeros: idle means exactly 0.0.
            used[emptied] = 0.0
            self.mem_used[emptied] = 0.0
            self.free[cluster] += int(emptied.size)
            self._idle[cluster].give_ids(emptied)


def _read_only_ones(size: int) -> np.ndarray:
    ones = np.ones(size)
    ones.flags.writeable = False
    return ones


_ONES = [_read_only_ones(1024)]
"""One read-only array of ones, grown when a larger row is asked for; rows are views of it."""

BY_SIZE_CAP: Final = 1 << 18
"""Sizes below which ``whole_row`` and ``unknown_ids`` keep their arrays, indexed by size."""
_WHOLE_BY_SIZE: Final[list[object]] = []
"""``whole_row(size)`` at index ``size`` (``None``: not made yet). A list, not a dict keyed by
size: compiled, a dict key is a new Python int for each lookup of a size above 256."""

_UNIFORM: dict[tuple[int, float], np.ndarray] = {}
_UNIFORM_CAP: Final = 1 << 20
"""Shares the cache of ``uniform_shares`` may hold in all (8 MB) before it starts anew."""
_uniform_held = [0]


def _by_size(rows: list[object], size: int) -> object:
    """``rows[size]``, or ``None`` past its end."""
    return rows[size] if size < len(rows) else None


def _keep_by_size(rows: list[object], size: int, arr: np.ndarray) -> None:
    """Store ``arr`` at ``rows[size]`` (sizes from ``BY_SIZE_CAP`` on are not kept)."""
    if size < BY_SIZE_CAP:
        if size >= len(rows):
            rows.extend([None] * (size + 1 - len(rows)))
        rows[size] = arr


def whole_row(size: int) -> np.ndarray:
    """``size`` shares of 1.0: a read-only view of one shared array of ones (no copy)."""
    row = _by_size(_WHOLE_BY_SIZE, size)
    if row is not None:
        return cast(np.ndarray, row)
    ones = _ONES[0]
    if size > ones.size:
        ones = _ONES[0] = _read_only_ones(max(size, 2 * ones.size))
    made = ones[:size]
    _keep_by_size(_WHOLE_BY_SIZE, size, made)
    return made


_UNKNOWN_BY_SIZE: Final[list[object]] = []
"""``unknown_ids(size)`` at index ``size`` (``None``: not made yet)."""
_MINUS_ONE: Final = np.full(1, -1, dtype=np.int64)
_MINUS_ONE.flags.writeable = False  # the views made of it are read-only too


def unknown_ids(size: int) -> np.ndarray:
    """A stand-in for ``size`` node ids not built yet: read-only, every value -1, no data.

    A job whose whole-node start took several runs keeps this as its ids until something reads
    them (``Job._ids`` builds them from the runs): only its ``size`` may be used meanwhile.
    """
    arr = _by_size(_UNKNOWN_BY_SIZE, size)
    if arr is not None:
        return cast(np.ndarray, arr)
    # Its one value repeated with stride 0, as ``np.broadcast_to`` makes it, but by the C
    # constructor: a few times cheaper, and once per size a trace holds (hundreds on some).
    made = np.ndarray((size,), np.int64, _MINUS_ONE, 0, (0,))
    _keep_by_size(_UNKNOWN_BY_SIZE, size, made)
    return made


def uniform_shares(size: int, share: float) -> np.ndarray:
    """A read-only array of ``size`` equal shares, shared between callers (it never changes)."""
    if share == 1.0:
        return whole_row(size)
    key = (size, share)
    arr = _UNIFORM.get(key)
    if arr is None:
        if _uniform_held[0] + size > _UNIFORM_CAP:
            _UNIFORM.clear()
            _uniform_held[0] = 0
        arr = np.full(size, share)
        arr.flags.writeable = False
        _UNIFORM[key] = arr
        _uniform_held[0] += size
    return arr


def uniform_share(cpu: np.ndarray) -> float:
    """The common share of ``cpu`` if all are equal, else -1."""
    first = float(cpu[0])
    return first if cpu.min() == cpu.max() else -1.0


def placement_mode(nodes: np.ndarray, cpu: np.ndarray) -> int:
    """How tasks ``(nodes, cpu)`` sit: ``WHOLE``, ``UNIQUE`` or ``SHARED`` (see above)."""
    if np.unique(nodes).size != nodes.size:
        return SHARED
    return WHOLE if cpu.min() >= 1.0 else UNIQUE


BOXED_IDS: Final = 1 << 12
"""Counts below this are kept as Python ints made once (``box``). Small on purpose: the table
is read at random (a count jumps by a job's size), and 4,096 ints (128 KB) stay in the CPU's
caches. Above it, a new int from the allocator's free list costs less than a miss on a cold
one: on 100,000 nodes the event loop ran FCFS about 15% faster with a 4,096 cap than with a
table of every count (``benchmarks/RESULTS.md``, issue 43's tenth slice)."""
_BOXED: Final[list[object]] = []


def box(v: int) -> object:
    """``v`` as a Python int, the same object every time for a value the cache holds.

    Compiled, an ``int`` is a machine integer: storing one in a list makes a new Python int
    (above 256), and dropping it frees one. The idle counts of ``NodePool.free`` change at
    every start and end; shared objects spare both.
    """
    if 0 <= v < len(_BOXED):
        return _BOXED[v]
    return v


def _grow_boxes(n: int) -> None:
    """Let ``box`` share the values below ``n`` (at most ``BOXED_IDS``)."""
    n = min(n, BOXED_IDS)
    if len(_BOXED) < n:
        _BOXED.extend(range(len(_BOXED), n))


class Runs(Protocol):
    """The idle nodes of one cluster as sorted, disjoint, non-touching runs ``[lo, hi)``.

    Taking the ``k`` lowest idle ids walks runs from the front, and giving nodes back merges
    their runs in (a bisection): the cost follows the runs a job touches, never the cluster's
    width. ``NodePool`` keeps it equal to the nodes whose CPU in use is exactly 0.0. A job's
    runs are a flat list ``[lo0, hi0, lo1, hi1, ...]``, lowest first.

    Two implementations answer alike: ``IdleRuns`` is the C one (``_idleruns.c``) when it is
    built, else ``PyIdleRuns``; the tests hold them to the same answers.
    """

    @property
    def lo(self) -> list[int]:
        """The runs' first ids."""

    @property
    def hi(self) -> list[int]:
        """The runs' ends (exclusive)."""

    def take_front(self, k: int) -> int:
        """Take the ``k`` lowest idle ids if they are one run: its first id, else -1 (no change)."""

    def take_runs(self, k: int) -> list[int]:
        """Take the ``k`` lowest idle ids: their runs, lowest first.

        Raises:
            ValueError: Fewer than ``k`` ids are idle (nothing taken).
        """

    def take_packed(self, k: int) -> bytes:
        """``take_runs``, the runs packed (``pack_runs``): what a job keeps until it ends."""

    def give_packed(self, runs: bytes) -> int:
        """``give_runs`` of packed runs (``take_packed``'s); returns the nodes given."""

    def first_runs(self, k: int) -> list[int]:
        """The runs of the ``k`` lowest idle ids (at most as many as there are); nothing taken."""

    def give(self, a: int, b: int) -> None:
        """Nodes ``[a, b)``, all busy, become idle."""

    def give_runs(self, runs: list[int]) -> int:
        """``give`` of each run of ``runs`` (ascending, all busy); returns the nodes given."""

    def occupy(self, a: int, b: int) -> None:
        """Nodes ``[a, b)``, all idle (so inside one run), become busy."""

    def give_ids(self, ids: np.ndarray) -> None:
        """Nodes ``ids`` (distinct, any order), all busy, become idle."""

    def occupy_ids(self, ids: np.ndarray) -> None:
        """Nodes ``ids`` (distinct, any order), all idle, become busy."""

    def runs(self) -> list[int]:
        """Every idle run, flat."""


class PyIdleRuns:
    """``Runs`` in Python: two lists of ints, the runs' starts and ends.

    The pure-Python install's idle runs, and the tests' second opinion on the C ones.
    """

    __slots__ = ("hi", "lo")

    def __init__(self, lo: int, hi: int) -> None:
        self.lo: list[int] = [lo] if hi > lo else []
        self.hi: list[int] = [hi] if hi > lo else []

    def take_front(self, k: int) -> int:
        """See ``Runs``."""
        lo = self.lo
        if lo:
            a = lo[0]
            span = self.hi[0] - a
            if span > k:
                lo[0] = a + k
                return a
            if span == k:
                del lo[0]
                del self.hi[0]
                return a
        return -1

    def take_runs(self, k: int) -> list[int]:
        """See ``Runs``."""
        taken = self.first_runs(k)
        if sum(taken[i + 1] - taken[i] for i in range(0, len(taken), 2)) < k:
            idle = sum(b - a for a, b in zip(self.lo, self.hi, strict=True))
            raise ValueError(f"{k} idle ids wanted, {idle} idle")
        lo, hi = self.lo, self.hi
        full = len(taken) >> 1
        if taken and taken[-1] != hi[full - 1]:
            full -= 1  # the last run is taken in part: it keeps its top
            lo[full] = taken[-1]
        del lo[:full]
        del hi[:full]
        return taken

    def take_packed(self, k: int) -> bytes:
        """See ``Runs``."""
        return pack_runs(self.take_runs(k))

    def give_packed(self, runs: object) -> int:
        """See ``Runs``."""
        if not isinstance(runs, bytes) or len(runs) % 16:
            raise TypeError("give_packed takes bytes of native int64 pairs lo, hi")
        return self.give_runs(unpack_runs(runs))

    def first_runs(self, k: int) -> list[int]:
        """See ``Runs``."""
        lo, hi = self.lo, self.hi
        runs: list[int] = []
        i = 0
        while k > 0 and i < len(lo):
            a, b = lo[i], hi[i]
            if b - a > k:
                b = a + k
            runs.append(a)
            runs.append(b)
            k -= b - a
            i += 1
        return runs

    def give(self, a: int, b: int) -> None:
        """See ``Runs``."""
        self._give_from(0, a, b)

    def give_runs(self, runs: list[int]) -> int:
        """See ``Runs``: one pass, each run's place searched from the previous one's."""
        start = 0
        n = 0
        for r in range(0, len(runs), 2):
            a, b = runs[r], runs[r + 1]
            n += b - a
            i = self._give_from(start, a, b)
            # The run just given is at ``i - 1`` or ``i``; the next one lies after it.
            start = i - 1 if i > 0 else 0
        return n

    def _give_from(self, start: int, a: int, b: int) -> int:
        """Merge the busy run ``[a, b)`` in; returns its place (``bisect_left(lo, a, start)``)."""
        lo, hi = self.lo, self.hi
        i = bisect_left(lo, a, start)
        left = i > 0 and hi[i - 1] == a
        right = i < len(lo) and lo[i] == b
        if left and right:
            hi[i - 1] = hi[i]
            del lo[i]
            del hi[i]
        elif left:
            hi[i - 1] = b
        elif right:
            lo[i] = a
        else:
            lo.insert(i, a)
            hi.insert(i, b)
        return i

    def occupy(self, a: int, b: int) -> None:
        """See ``Runs``."""
        lo, hi = self.lo, self.hi
        i = bisect_right(lo, a) - 1
        if i < 0 or b > hi[i] or a >= b:
            raise ValueError(f"ids [{a}, {b}) are not all idle")
        c, d = lo[i], hi[i]
        if c == a:
            if d == b:
                del lo[i]
                del hi[i]
            else:
                lo[i] = b
        elif d == b:
            hi[i] = a
        else:
            hi[i] = a
            lo.insert(i + 1, b)
            hi.insert(i + 1, d)

    def give_ids(self, ids: np.ndarray) -> None:
        """See ``Runs``."""
        runs = _distinct_runs(ids)
        for i in range(0, len(runs), 2):
            self.give(runs[i], runs[i + 1])

    def occupy_ids(self, ids: np.ndarray) -> None:
        """See ``Runs``."""
        runs = _distinct_runs(ids)
        for i in range(0, len(runs), 2):
            self.occupy(runs[i], runs[i + 1])

    def runs(self) -> list[int]:
        """See ``Runs``."""
        out: list[int] = []
        for a, b in zip(self.lo, self.hi, strict=True):
            out.append(a)
            out.append(b)
        return out


def pack_runs(runs: list[int]) -> bytes:
    """Runs ``[lo0, hi0, lo1, hi1, ...]`` packed as native int64s.

    How a job keeps its runs from start to end: one object, where a list would hold a Python
    int per bound, made at the start and freed at the end.
    """
    return np.array(runs, dtype=np.int64).tobytes()


def unpack_runs(packed: bytes) -> list[int]:
    """``pack_runs``'s runs as a flat list of ints again."""
    runs: list[int] = np.frombuffer(packed, dtype=np.int64).tolist()
    return runs


def _distinct_runs(ids: Any) -> list[int]:
    """``runs_of_ids`` of ``ids`` (an array or a sequence of ints), which must be distinct.

    Raises:
        ValueError: An id is given twice (nothing changed).
    """
    arr = np.sort(np.asarray(ids, dtype=np.int64))
    twice = np.flatnonzero(arr[1:] == arr[:-1])
    if twice.size:
        raise ValueError(f"id {int(arr[twice[0]])} is given twice")
    return runs_of_ids(arr)


def _idle_runs_type() -> Any:
    """The C ``IdleRuns`` when built, else ``PyIdleRuns``."""
    try:
        from hpcgym.sim._idleruns import IdleRuns as CIdleRuns
    except ImportError:  # a pure-Python install
        return PyIdleRuns
    return CIdleRuns


IdleRuns: Final[Any] = _idle_runs_type()
"""What ``NodePool`` builds its idle runs with: ``IdleRuns(lo, hi)`` holds ``[lo, hi)``."""


def first_ids(idle: Runs, k: int) -> np.ndarray:
    """The ``k`` lowest idle ids of ``idle`` (at most as many as there are); nothing taken."""
    return ids_of_runs(idle.first_runs(k))


def idle_ids(idle: Runs) -> np.ndarray:
    """Every idle id of ``idle``, ascending (a new array)."""
    return ids_of_runs(idle.runs())


SLICE_RUN: Final = 64
"""Mean run length (nodes) from which ``set_runs`` writes run by run rather than scattering."""


def set_runs(values: np.ndarray, runs: list[int], ids: np.ndarray, value: float) -> None:
    """Set ``values`` to ``value`` at ``ids``, the ids of the runs ``[lo0, hi0, lo1, hi1, ...]``.

    One slice per run when the runs are long (a fill per run costs little per node; a scatter
    through ``ids`` costs several times more per node, which on a wide machine, where a job
    holds thousands of nodes in a few runs, was the largest cost of a start), else one scatter.
    Either way the same entries get the same value.
    """
    if ids.size >= SLICE_RUN * (len(runs) >> 1):
        for i in range(0, len(runs), 2):
            values[runs[i] : runs[i + 1]].fill(value)
    else:
        values[ids] = value


def ids_of_runs(runs: list[int]) -> np.ndarray:
    """The ids of the runs ``[lo0, hi0, lo1, hi1, ...]``, in order, as one int64 array."""
    if len(runs) == 2:
        return np.arange(runs[0], runs[1], dtype=np.int64)
    if not runs:
        return np.empty(0, dtype=np.int64)
    if len(runs) <= 32:
        parts = [np.arange(runs[i], runs[i + 1], dtype=np.int64) for i in range(0, len(runs), 2)]
        return np.concatenate(parts)
    bounds = np.array(runs, dtype=np.int64)
    s = bounds[0::2]
    lengths = bounds[1::2] - s
    # Each id is its run's start plus its position in the output minus the run's offset there.
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(s - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def runs_of_ids(ids: np.ndarray) -> list[int]:
    """Distinct ``ids`` (any order) as sorted runs, flat: ``[lo0, hi0, lo1, hi1, ...]``."""
    if not ids.size:
        return []
    ids = np.sort(ids)
    first, last = int(ids[0]), int(ids[-1])
    if last - first + 1 == ids.size:
        return [first, last + 1]
    breaks = np.flatnonzero(np.diff(ids) != 1)
    bounds = np.empty(2 * (breaks.size + 1), dtype=np.int64)
    bounds[0] = first
    bounds[2::2] = ids[breaks + 1]
    bounds[1:-1:2] = ids[breaks] + 1
    bounds[-1] = last + 1
    result: list[int] = bounds.tolist()
    return result
