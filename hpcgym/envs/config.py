"""The environment's settings, gathered in one frozen, JSON-friendly record."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from hpcgym.errors import SpecError

START_LEVELS = ("req", "min", "max", "fit", "ebf")
"""Start sizes: requested, smallest accepted, largest accepted, largest accepted that fits now,
and (opt-in, one cluster) ``"ebf"``: the size EASY backfilling allows without delaying the queue
head's reservation (``hpcgym.sim.planning.easy_backfill_sizes``: the requested size, or for an
elastic job the largest that fits, within the head's extra nodes when the job would still run at
the head's reservation)."""
SHRINK_LEVELS = ("one", "half", "min")
"""Shrink targets: next accepted size down, largest accepted ``<= size // 2`` (or min), min."""
EXPAND_LEVELS = ("one", "double", "fit")
"""Expand targets: next accepted size up, largest accepted ``<= 2 * size``, largest that fits."""
SHRINK_CUT = "cut"
"""Opt-in shrink level ``"cut<f>"`` (``0 < f < 1``, e.g. ``"cut0.4"``): release
``max(1, floor(f * size))`` tasks, to the largest accepted size ``<=`` what is left (MEBF's
shrink by a share of the job's size)."""
EXPAND_SPARE = "spare"
"""Opt-in expand level ``"spare<f>"`` (``0 < f <= 1``, e.g. ``"spare0.5"``): grow by at most
``floor(f * room)`` tasks, ``room`` the tasks the job's cluster has room for, to the largest
accepted size ``<=`` that (MEBF's Spare expand policy)."""
EXACT = "n"
"""Opt-in level ``"n<k>"`` (start, shrink or expand; e.g. ``"n12"``): exactly ``k`` tasks, legal
where the job accepts ``k`` and the command fits. ``"n*"`` stands for ``n1`` ... ``n<N>``, ``N``
the largest cluster's nodes, and a start level's ``"@*"`` for every cluster (``"n*@*"``: every
size in every cluster): the env expands them when it is built (``expand_wildcards``). These
menus grow with the platform; they exist so that any scheduler's sizes and placements are
entries (``hpcgym.policies.adapted``), e.g. KOALA's grows and shrinks."""
QUEUE_ORDERS = ("fcfs", "fits_first", "sjf")
EPISODE_MODES = ("window", "seeded")
SELECTIONS = ("menu", "reserve")
"""Decision modes: ``menu`` (each entry is a command) or ``reserve`` (``hpcgym.envs.reserve``)."""
SPLIT_NAMES = ("train", "validation", "test")
"""The episode splits (``hpcgym.workloads.splits``): disjoint, in this time order."""
PLACEMENTS = ("first", "packed")
"""Where a co-scheduled job's tasks go: the lowest-numbered nodes with room (``first``), or the
nodes with the least CPU left that still have room, then the lowest-numbered (``packed``: onto
CPU other jobs lent, before idle nodes)."""


def _whole(value: object) -> bool:
    """Whether ``value`` is an int (numpy ones too), not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _finite_real(value: object) -> bool:
    """Whether ``value`` is a finite int or float (numpy ones too), not a bool or a string."""
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool | np.bool_)
        and math.isfinite(value)
    )


def exact_size(name: str) -> int | None:
    """``k`` of an exact-size level ``"n<k>"`` (``k >= 1``), else ``None``."""
    if name.startswith(EXACT) and name[1:].isdigit() and int(name[1:]) >= 1:
        return int(name[1:])
    return None


def _expand_sizes(levels: tuple[str, ...], n_max: int) -> tuple[str, ...]:
    out: list[str] = []
    for name in levels:
        size, at, cluster = name.partition("@")
        if size == EXACT + "*":
            out.extend(f"{EXACT}{k}{at}{cluster}" for k in range(1, n_max + 1))
        else:
            out.append(name)
    return tuple(out)


def expand_wildcards(cfg: EnvConfig, clusters: tuple[int, ...]) -> EnvConfig:
    """``cfg`` with ``"n*"`` and ``"@*"`` levels spelled out for a platform (see ``EXACT``)."""
    starts: list[str] = []
    for name in cfg.start_levels:
        size, _, cluster = name.partition("@")
        if cluster == "*":
            starts.extend(f"{size}@{k}" for k in range(len(clusters)))
        else:
            starts.append(name)
    n_max = max(clusters)
    start = _expand_sizes(tuple(starts), n_max)
    shrink = _expand_sizes(cfg.shrink_levels, n_max)
    expand = _expand_sizes(cfg.expand_levels, n_max)
    if (start, shrink, expand) == (cfg.start_levels, cfg.shrink_levels, cfg.expand_levels):
        return cfg
    return replace(cfg, start_levels=start, shrink_levels=shrink, expand_levels=expand)


def start_level(name: str) -> tuple[str, int | None]:
    """A start level's size and cluster: ``"fit@2"`` is ``("fit", 2)``, ``"req"`` ``("req", None)``.

    ``None``: the engine's placement, the first cluster that fits.
    """
    size, at, cluster = name.partition("@")
    if not at:
        return name, None
    if not cluster.isdigit():
        raise SpecError(
            f"start_levels: {name!r}: the cluster after '@' is an index >= 0 "
            "('@*' is expanded when the env is built)"
        )
    return size, int(cluster)


def level_fraction(name: str, prefix: str) -> float | None:
    """The fraction ``f`` of a level named ``prefix + str(f)``, or ``None`` if not one."""
    if not name.startswith(prefix):
        return None
    try:
        return float(name[len(prefix) :])
    except ValueError:
        return None


def _check_level(name: str, value: str, named: tuple[str, ...], prefix: str, one: bool) -> None:
    """Raise unless ``value`` is in ``named`` or ``prefix<f>``, ``0 < f < 1`` (or 1: ``one``)."""
    if value in named or value == EXACT + "*" or exact_size(value) is not None:
        return
    f = level_fraction(value, prefix)
    if f is None or not (0.0 < f < 1.0 or (one and f == 1.0)):
        top = "<= 1" if one else "< 1"
        raise SpecError(
            f"{name}: {value!r} is not one of {named}, {prefix}<f> (0 < f {top}), "
            f"{EXACT}<k> (k >= 1) nor {EXACT}*"
        )


@dataclass(frozen=True)
class EnvConfig:
    """Everything a :class:`~hpcgym.envs.ClusterEnv` is built from (presets are kwargs of this).

    Attributes:
        workload: Name of a workload set (``hpcgym.workloads.names()``), or the path of an SWF
            file.
        workload_options: Options of the set (see its ``options``).
        workload_seed: Seed of the set in ``"window"`` mode (the trace the windows come from).
        episode: ``"window"``: each episode is a contiguous window of ``n_jobs`` jobs at a random
            start in the set's workload; ``"seeded"``: each episode loads the set with a seed drawn
            in ``[0, n_seeds)`` (a new generated case) and keeps its first ``n_jobs`` jobs.
        n_jobs: Jobs per episode (``None``: all of the workload).
        n_seeds: Number of distinct set seeds in ``"seeded"`` mode.
        window_starts: In ``"window"`` mode, the job indices an episode's window may start at
            (drawn uniformly from this list; ``None``: any start). Use disjoint lists for
            training and evaluation windows. A ``start`` reset option overrides it.
        split: ``None`` (episodes from the whole workload), or ``"train"``, ``"validation"`` or
            ``"test"``: in ``"window"`` mode every window lies inside that split of the trace's
            submission-time span (70% / 10% / 20%, ``hpcgym.workloads.splits``), so the splits'
            episodes share no job; in ``"seeded"`` mode the set seeds are drawn from that
            split's share of ``[0, n_seeds)``. ``window_starts`` and a ``start`` reset option
            must then lie inside the split.
        platform: Nodes per cluster; ``None`` (every single-cluster preset's) takes the
            workload's own machine, from its trace's header. A platform named here must hold
            every job: jobs that could never run on it are an error naming how many and the
            widest, unless ``drop_oversized``.
        cores: Cores per node (informative) when ``platform`` is given.
        drop_oversized: With a ``platform`` given, leave out the jobs that could never run on
            it (a warning says how many, once per workload; ``ClusterEnv.dropped_jobs`` counts
            them) instead of refusing the workload.
        queue_slots: Queued jobs visible and actionable (the queue window).
        running_slots: Running jobs visible and actionable (the running window).
        suspended_slots: Suspended jobs visible and resumable (0 without suspend/resume).
        start_levels: Sizes a queued job can be started at (names from ``START_LEVELS``); opt-in
            ``"<size>@<k>"`` (e.g. ``"fit@2"``) starts it in cluster ``k`` (room counted there)
            instead of the first cluster that fits.
        coschedule_levels: CPU share levels (fractions of the job's CPU need, in (0, 1)) at which
            a queued job can be started onto nodes it shares with others.
        coschedule_placement: ``"first"`` or ``"packed"`` (``PLACEMENTS``).
        lend_levels: Fractions ``f`` in (0, 1): "running malleable slot r keeps ``1 - f`` of its
            CPU need per task" (it must hold its full need), making room for a co-scheduled job.
        reclaim: Whether the menu has "running slot r takes back the idle CPU of its nodes, up
            to its need per task".
        resize_budget: Reconfigurations (resizes and grants) after which a running job can no
            longer be shrunk or expanded (its entries are masked); ``None``: no limit. The rule
            of the training guard ``hpcgym.agents.guard``, applied where the targets are
            computed: it narrows the mask and moves no decision point (a point whose only legal
            entries were such resizes is still one, where advance is what is left).
        shrink_levels: Shrink targets of running malleable jobs (``SHRINK_LEVELS``, or
            ``"cut<f>"``: see ``SHRINK_CUT``).
        expand_levels: Expand targets of running malleable jobs (``EXPAND_LEVELS``, or
            ``"spare<f>"``: see ``EXPAND_SPARE``).
        grant: Whether the menu has "grant the pending request of running slot r".
        suspend: Whether the menu has "suspend running slot r" and "resume suspended slot s".
        selection: ``"menu"``: every entry is one command; ``"reserve"``: RLScheduler's mode, a
            start entry commits to that queued job, which starts as soon as it fits (the env
            waits for it; see ``hpcgym.envs.reserve``). Reserve mode is for rigid jobs on one
            cluster: start level ``"req"`` only, no other command blocks.
        reserve_backfill: In reserve mode, start other jobs that end before the chosen job's
            reservation while it waits.
        queue_order: ``"fcfs"`` (submission order), ``"fits_first"`` (jobs that can start now
            first, each group in submission order) or ``"sjf"`` (shortest estimate first).
        reward: A reward name, or a mapping of reward names to weights.
        observation: Observation encoder name (``"dict"`` or ``"flat"``).
        action: Action menu name (``"menu"``).
        invalid_penalty: Reward subtracted for an action the mask forbids (it is a no-op).
        max_steps: Truncate after this many steps (``None``: ``20 * jobs + 100``).
        skip_trivial: Advance automatically while "advance" is the only valid action.
        kill_on_walltime: Kill jobs that exceed their walltime (the engine's setting).
    """

    workload: str = "swf/lublin256-v0"
    workload_options: Mapping[str, Any] = field(default_factory=dict)
    workload_seed: int = 0
    episode: str = "window"
    n_jobs: int | None = 256
    n_seeds: int = 1000
    window_starts: tuple[int, ...] | None = None
    split: str | None = None
    platform: tuple[int, ...] | None = None
    cores: int = 1
    drop_oversized: bool = False
    queue_slots: int = 32
    running_slots: int = 16
    suspended_slots: int = 0
    start_levels: tuple[str, ...] = ("req",)
    coschedule_levels: tuple[float, ...] = ()
    coschedule_placement: str = "first"
    lend_levels: tuple[float, ...] = ()
    reclaim: bool = False
    resize_budget: int | None = None
    shrink_levels: tuple[str, ...] = ()
    expand_levels: tuple[str, ...] = ()
    grant: bool = False
    suspend: bool = False
    selection: str = "menu"
    reserve_backfill: bool = False
    queue_order: str = "fcfs"
    reward: str | Mapping[str, float] = "bsld"
    observation: str = "dict"
    action: str = "menu"
    invalid_penalty: float = 0.1
    max_steps: int | None = None
    skip_trivial: bool = True
    kill_on_walltime: bool = True

    def __post_init__(self) -> None:
        self._check_types()
        for name in (
            "platform",
            "start_levels",
            "coschedule_levels",
            "lend_levels",
            "window_starts",
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        for name in ("shrink_levels", "expand_levels"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        self._check_choice("episode", self.episode, EPISODE_MODES)
        self._check_choice("queue_order", self.queue_order, QUEUE_ORDERS)
        if self.split is not None:
            self._check_choice("split", self.split, SPLIT_NAMES)
        self._check_choice("selection", self.selection, SELECTIONS)
        if self.selection == "reserve":
            others = [
                name
                for name in (
                    "coschedule_levels",
                    "lend_levels",
                    "shrink_levels",
                    "expand_levels",
                    "grant",
                    "suspend",
                    "reclaim",
                )
                if getattr(self, name)
            ]
            multi = self.platform is not None and len(self.platform) > 1
            if tuple(self.start_levels) != ("req",) or others or multi:
                raise SpecError(
                    'selection="reserve" chooses rigid jobs on one cluster: it needs '
                    'start_levels=("req",), one cluster and no other command blocks'
                    + (f" (set: {', '.join(others)})" if others else "")
                )
        elif self.reserve_backfill:
            raise SpecError('reserve_backfill needs selection="reserve"')
        for lvl in self.start_levels:
            size, at, where = lvl.partition("@")
            cluster = None
            if where != "*":
                size, cluster = start_level(lvl)
            if size != EXACT + "*" and exact_size(size) is None:
                self._check_choice("start_levels", size, START_LEVELS)
            if size == "ebf" and (at or (self.platform is not None and len(self.platform) > 1)):
                raise SpecError(
                    f"start_levels: {lvl!r}: EASY backfill sizes plan on a single cluster; "
                    "use them on one-cluster platforms, without '@k'"
                )
            if cluster is not None and self.platform is not None and cluster >= len(self.platform):
                raise SpecError(
                    f"start_levels: {lvl!r}: the platform has {len(self.platform)} clusters"
                )
        for lvl in self.shrink_levels:
            _check_level("shrink_levels", lvl, SHRINK_LEVELS, SHRINK_CUT, False)
        for lvl in self.expand_levels:
            _check_level("expand_levels", lvl, EXPAND_LEVELS, EXPAND_SPARE, True)
        if not self.start_levels:
            raise SpecError("start_levels needs at least one level")
        for share in self.coschedule_levels:
            if not 0.0 < share < 1.0:
                raise SpecError(f"coschedule_levels are CPU share fractions in (0, 1), got {share}")
        for share in self.lend_levels:
            if not 0.0 < share < 1.0:
                raise SpecError(f"lend_levels are CPU share fractions in (0, 1), got {share}")
        self._check_choice("coschedule_placement", self.coschedule_placement, PLACEMENTS)
        if self.resize_budget is not None and (
            isinstance(self.resize_budget, bool)
            or not isinstance(self.resize_budget, int)
            or self.resize_budget < 0
        ):
            raise SpecError(
                f"resize_budget must be an integer >= 0 or None, got {self.resize_budget!r}"
            )
        if self.queue_slots < 1 or self.running_slots < 1:
            raise SpecError("queue_slots and running_slots must be >= 1")
        if self.suspend and self.suspended_slots < 1:
            raise SpecError("suspend=True needs suspended_slots >= 1")
        if not self.suspend and self.suspended_slots:
            raise SpecError("suspended_slots > 0 needs suspend=True")
        if self.window_starts is not None:
            if self.episode != "window":
                raise SpecError('window_starts needs episode="window"')
            if not self.window_starts or any(int(x) != x or x < 0 for x in self.window_starts):
                raise SpecError(
                    f"window_starts must be a non-empty list of indices >= 0, "
                    f"got {self.window_starts}"
                )
            object.__setattr__(self, "window_starts", tuple(int(x) for x in self.window_starts))
        if not _finite_real(self.invalid_penalty):
            raise SpecError(
                f"invalid_penalty must be a finite number, got {self.invalid_penalty!r}"
            )
        if not isinstance(self.reward, str):
            bad = {k: w for k, w in dict(self.reward).items() if not _finite_real(w)}
            if bad:
                raise SpecError(f"reward weights must be finite numbers, got {bad}")
        for name in ("n_jobs", "max_steps"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise SpecError(f"{name} must be an integer >= 1 or None, got {value!r}")
            object.__setattr__(self, name, int(value))

    def _check_types(self) -> None:
        """Refuse arguments of the wrong type, saying what each expects (one line each)."""
        if not isinstance(self.workload, str):
            raise SpecError(
                f"workload must be a set name or the path of a workload file (SWF, a sacct dump, "
                f"a Batsim JSON; a string), got "
                f"{self.workload!r}; e.g. 'swf/lublin256-v0' (hpcgym workloads list)"
            )
        if not isinstance(self.workload_options, Mapping):
            raise SpecError(
                f"workload_options must be a mapping of option names to values, got "
                f"{self.workload_options!r}; e.g. {{'n_jobs': 1000}} (hpcgym workloads show NAME "
                "lists a set's options)"
            )
        platform = self.platform
        if platform is not None and (
            isinstance(platform, str | bytes | Mapping)
            or not isinstance(platform, Sequence | np.ndarray)
            or len(platform) == 0
            or not all(_whole(n) and n >= 1 for n in platform)
        ):
            raise SpecError(
                f"platform must be a non-empty list of node counts (whole numbers >= 1), one per "
                f"cluster, or None for the workload's own machine; got {platform!r}"
            )
        if platform is not None:
            object.__setattr__(self, "platform", tuple(int(n) for n in platform))
        for name, least in (
            ("cores", 1),
            ("queue_slots", 1),
            ("running_slots", 1),
            ("suspended_slots", 0),
            ("workload_seed", 0),
            ("n_seeds", 1),
        ):
            value = getattr(self, name)
            if not _whole(value) or value < least:
                raise SpecError(f"{name} must be an integer >= {least}, got {value!r}")
            object.__setattr__(self, name, int(value))
        for name in (
            "start_levels",
            "coschedule_levels",
            "lend_levels",
            "shrink_levels",
            "expand_levels",
            "window_starts",
        ):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, str | bytes | Mapping)
                or not isinstance(value, Sequence | np.ndarray)
            ):
                raise SpecError(
                    f"{name} must be a list (or tuple) of levels, got {value!r}; "
                    f"e.g. {name}=[{value!r}] for one"
                    if name != "window_starts"
                    else f"window_starts must be a list of job indices or None, got {value!r}"
                )
        if not isinstance(self.reward, str | Mapping):
            raise SpecError(
                f"reward must be a reward name or a mapping of names to weights, got "
                f"{self.reward!r}; e.g. 'bsld' or {{'bsld': 1.0, 'utilization': 0.5}}"
            )
        for name in (
            "reclaim",
            "grant",
            "suspend",
            "reserve_backfill",
            "skip_trivial",
            "kill_on_walltime",
            "drop_oversized",
        ):
            value = getattr(self, name)
            if not isinstance(value, bool | np.bool_):
                raise SpecError(f"{name} must be True or False, got {value!r}")
            object.__setattr__(self, name, bool(value))

    @staticmethod
    def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
        if value not in allowed:
            raise SpecError(f"{name}: {value!r} is not one of {allowed}")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> EnvConfig:
        """Build from keyword arguments, naming any unknown one."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise SpecError(f"unknown ClusterEnv argument(s) {unknown}; known: {sorted(known)}")
        return cls(**kwargs)

    @property
    def weights(self) -> dict[str, float]:
        """The reward as ``{name: weight}``."""
        if isinstance(self.reward, str):
            return {self.reward: 1.0}
        return {str(k): float(v) for k, v in self.reward.items()}
