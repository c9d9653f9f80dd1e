"""The flat action menu: its fixed layout, what each entry does now, and the mask.

Layout, in this order (blocks a preset does not enable are absent; ``Q``, ``R``, ``U`` are the
queue, running and suspended window sizes)::

    0                                advance time to the next decision point
    start      Q x len(start_levels)     start queue slot q at size level l
    coschedule Q x len(coschedule_levels) start queue slot q at CPU share level c (shared nodes)
    shrink     R x len(shrink_levels)    shrink running slot r to target k
    expand     R x len(expand_levels)    expand running slot r to target k
    grant      R                         grant the pending request of running slot r
    suspend    R                         suspend running slot r
    resume     U                         resume suspended slot u
    lend       R x len(lend_levels)      running slot r keeps 1 - f of its CPU need per task
    reclaim    R                         running slot r takes back its nodes' idle CPU

Entry ``(q, l)`` of a block is ``offset + q * levels + l``. :meth:`ActionMenu.decide` computes,
for the current state, the target of every entry (0 when it is not a legal command); the mask
and the command an action issues are both read from that one :class:`Decision`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Final

import numpy as np
from mypy_extensions import mypyc_attr

from hpcgym.envs.capacity import Capacity
from hpcgym.envs.commands import Commander
from hpcgym.envs.config import START_LEVELS, EnvConfig, exact_size, start_level
from hpcgym.envs.ledger import SIZE, JobLedger
from hpcgym.envs.menu_entry import MenuCommand, entry_for
from hpcgym.envs.shares import share_flags
from hpcgym.envs.sizes import accepted_floor, floor_sizes, levels_key, running_targets
from hpcgym.sim.planning import easy_backfill_sizes

_NONE: Final = np.zeros(0, dtype=np.int64)
_NONE2: Final = np.zeros((0, 0), dtype=np.int64)
_NONE_B: Final = np.zeros(0, dtype=bool)


class _ReqStarts:
    """``start`` targets of the fast path: ``[slot][0]`` is the requested size where it fits."""

    __slots__ = ("flags", "reqs")

    def __init__(self, reqs: list[int], flags: list[bool]) -> None:
        self.reqs = reqs
        self.flags = flags

    def __len__(self) -> int:
        return len(self.reqs)

    def __getitem__(self, slot: int) -> list[int]:
        return [self.reqs[slot] if self.flags[slot] else 0]

    def __iter__(self) -> Iterator[list[int]]:
        return (self[i] for i in range(len(self.reqs)))


@dataclass(slots=True)
class Decision:
    """Windows and the target of every menu entry at one decision point.

    ``start``, ``cosched``, ``shrink``, ``expand``: target sizes (0: entry not legal), indexed
    ``[slot][level]`` (``start`` is list-like on the fast path; ``shrink`` and ``expand`` are
    lists of rows, read only). ``grant``, ``suspend``,
    ``resume``: legality flags. ``fits``: whether each queue slot's first start level is legal
    (a sequence of bools). ``choice``: whether any entry besides advance is legal (before a
    ``resize_budget`` narrows the mask: whether this is a decision point). Windows list
    ledger rows.
    """

    queue_rows: list[int]
    run_rows: list[int]
    susp_rows: list[int]
    start: Any
    cosched: np.ndarray
    shrink: np.ndarray
    expand: np.ndarray
    grant: np.ndarray
    suspend: np.ndarray
    resume: np.ndarray
    mask: np.ndarray
    holding: int
    fits: Any
    choice: bool
    lend: np.ndarray = field(default_factory=lambda: _NONE_B)
    reclaim: np.ndarray = field(default_factory=lambda: _NONE_B)

    def __init__(
        self,
        queue_rows: list[int],
        run_rows: list[int],
        susp_rows: list[int],
        start: Any,
        cosched: np.ndarray,
        shrink: np.ndarray,
        expand: np.ndarray,
        grant: np.ndarray,
        suspend: np.ndarray,
        resume: np.ndarray,
        mask: np.ndarray,
        holding: int,
        fits: Any,
        choice: bool,
        lend: np.ndarray | None = None,
        reclaim: np.ndarray | None = None,
    ) -> None:
        # Written out (``dataclass`` keeps it): the generated one runs interpreted under mypyc,
        # about 0.4 us a decision point.
        self.queue_rows = queue_rows
        self.run_rows = run_rows
        self.susp_rows = susp_rows
        self.start = start
        self.cosched = cosched
        self.shrink = shrink
        self.expand = expand
        self.grant = grant
        self.suspend = suspend
        self.resume = resume
        self.mask = mask
        self.holding = holding
        self.fits = fits
        self.choice = choice
        self.lend = _NONE_B if lend is None else lend
        self.reclaim = _NONE_B if reclaim is None else reclaim


@mypyc_attr(allow_interpreted_subclasses=True)
class ActionMenu:
    """The ``"menu"`` action encoding (see the module docstring for the layout)."""

    def __init__(self, cfg: EnvConfig) -> None:
        self.cfg = cfg
        q, r, u = cfg.queue_slots, cfg.running_slots, cfg.suspended_slots
        sizes = [
            ("advance", 1, 1),
            ("start", q, len(cfg.start_levels)),
            ("coschedule", q, len(cfg.coschedule_levels)),
            ("shrink", r, len(cfg.shrink_levels)),
            ("expand", r, len(cfg.expand_levels)),
            ("grant", r, 1 if cfg.grant else 0),
            ("suspend", r, 1 if cfg.suspend else 0),
            ("resume", u, 1 if cfg.suspend else 0),
            ("lend", r, len(cfg.lend_levels)),
            ("reclaim", r, 1 if cfg.reclaim else 0),
        ]
        self.blocks: dict[str, tuple[int, int, int]] = {}
        """Block name -> (offset, slots, levels) for the blocks present."""
        offset = 0
        for name, slots, levels in sizes:
            if slots * levels:
                self.blocks[name] = (offset, slots, levels)
                offset += slots * levels
        self.n = offset
        self._template = np.zeros(self.n, dtype=np.int8)
        self._template[0] = 1
        self._start_offset = self.blocks["start"][0]
        self._after_start = self._start_offset + q * len(cfg.start_levels)
        """First index past the start block."""
        self._running_blocks = any(b in self.blocks for b in ("shrink", "expand", "grant"))
        self._shrink_offset = self.blocks["shrink"][0] if "shrink" in self.blocks else -1
        self._expand_offset = self.blocks["expand"][0] if "expand" in self.blocks else -1
        self._shares = "lend" in self.blocks or "reclaim" in self.blocks
        self._packed = cfg.coschedule_placement == "packed"
        self._levels_key = levels_key(cfg)
        self._fast = (
            cfg.start_levels == ("req",) and cfg.queue_order == "fcfs" and not cfg.coschedule_levels
        )
        self._starts_only = self._fast and not self._running_blocks and not cfg.suspend
        """The menu is advance and "start at the requested size" only."""
        self.answers_choice = self._starts_only
        """Whether :meth:`has_choice` can answer without :meth:`decide` (else always ``None``)."""
        self._q = q
        self._starts = [start_level(level) for level in cfg.start_levels]
        """Size name and cluster (``None``: the first that fits) of each start level."""
        self._exact: dict[int | None, tuple[list[int], np.ndarray]] = {}
        """Exact-size start levels (``n<k>``) by cluster: their columns and sizes ``k``."""
        plain: list[int] = []
        for col, (size, k) in enumerate(self._starts):
            n = exact_size(size)
            if n is None:
                plain.append(col)
                continue
            cols, ks = self._exact.get(k, ([], np.zeros(0, dtype=np.int64)))
            self._exact[k] = ([*cols, col], np.append(ks, n))
        self._plain_starts = plain
        """Columns of the other start levels."""
        self._level_codes = [
            (START_LEVELS.index(size) if size in START_LEVELS else -1, k)
            for size, k in self._starts
        ]
        self._ebf = any(size == "ebf" for size, _ in self._starts)
        """Whether a start level needs the EASY backfill sizes (computed once per decision)."""
        self._row_cache = not self._ebf and all(k is None for _, k in self._starts)
        """Whether a row's start sizes depend on the row and the best room only (see decide)."""
        self._levels: dict[tuple[int, int], list[int]] = {}
        self._cached_ledger: JobLedger | None = None
        self._masks: dict[bytes, np.ndarray] = {}
        """Masks of the fast path by their start flags."""
        self._decode = [
            (name, i // levels, i % levels)
            for name, (off, slots, levels) in self.blocks.items()
            for i in range(slots * levels)
        ]

    def decode(self, action: int) -> tuple[str, int, int]:
        """``(block, slot, level)`` of an action index."""
        return self._decode[action]

    def labels(self) -> list[str]:
        """A readable name for every action index."""
        cfg = self.cfg
        levels = {
            "start": cfg.start_levels,
            "coschedule": [f"{c:g}" for c in cfg.coschedule_levels],
            "shrink": cfg.shrink_levels,
            "expand": cfg.expand_levels,
            "lend": [f"{f:g}" for f in cfg.lend_levels],
        }
        out = []
        for name, slot, level in self._decode:
            if name == "advance":
                out.append("advance")
            elif name in levels:
                out.append(f"{name}[{slot}]@{levels[name][level]}")
            else:
                out.append(f"{name}[{slot}]")
        return out

    def entry_for(self, d: Decision, ledger: JobLedger, cmd: MenuCommand) -> int:
        """The index whose entry performs the engine command ``cmd`` in ``d``, legal or not.

        See :func:`hpcgym.envs.menu_entry.entry_for`; raises its ``NoMenuEntry`` when none does.
        """
        return entry_for(self, d, ledger, cmd)

    # ------------------------------------------------------------------ state -> targets
    def has_choice(self, ledger: JobLedger, cap: Capacity) -> bool | None:
        """Whether any entry besides advance is legal; ``None`` when only ``decide`` can tell."""
        if not (self._starts_only and ledger.simple):
            return None
        window = ledger.queued[: self._q]
        return bool(window) and min(map(ledger.req_list.__getitem__, window)) <= cap.max_idle()

    def decide(self, ledger: JobLedger, cap: Capacity) -> Decision:
        """Windows, targets and mask for the current state."""
        cfg = self.cfg
        queued = ledger.queued
        off = self._start_offset
        if self._fast and ledger.simple:
            # Whole-node tasks, one start level ("req"), submission order: plain Python on
            # the window is cheaper than numpy calls at these sizes.
            qlist = queued[: self._q]
            room = cap.max_idle()
            reqs = list(map(ledger.req_list.__getitem__, qlist))
            flags = [x <= room for x in reqs]
            start: Any = _ReqStarts(reqs, flags)
            fits: Any = flags
            any_start = True in flags
            if any_start:
                # The start block depends on the flags only: copy a cached mask.
                key = bytes(flags)
                cached = self._masks.get(key)
                if cached is None:
                    if len(self._masks) > 4096:
                        self._masks.clear()
                    cached = self._masks[key] = self._template.copy()
                    cached[off : off + len(flags)] = flags
                mask = cached.copy()
            else:
                mask = self._template.copy()
            if self._starts_only:
                return Decision(
                    qlist,
                    ledger.holding[: cfg.running_slots],
                    [],
                    start,
                    _NONE2,
                    _NONE2,
                    _NONE2,
                    _NONE_B,
                    _NONE_B,
                    _NONE_B,
                    mask,
                    len(ledger.holding),
                    fits,
                    any_start,
                    _NONE_B,
                    _NONE_B,
                )
        elif ledger.simple and cfg.queue_order == "fcfs" and not self._exact:
            # Whole-node tasks in submission order: every level in plain Python on the window.
            qlist = queued[: self._q]
            room = cap.max_idle()
            free = cap.free
            if self._row_cache:
                # Each row's levels depend on the row and the room only: cached per episode.
                if self._cached_ledger is not ledger:
                    self._cached_ledger = ledger
                    self._levels.clear()
                levels = self._levels
                start = []
                for r in qlist:
                    sizes = levels.get((r, room))
                    if sizes is None:
                        if len(levels) > 65536:
                            levels.clear()
                        sizes = levels[r, room] = self._levels_at(ledger, r, room, free, 0)
                    start.append(sizes)
            else:
                ebf: Iterable[int] = self._ebf_sizes(ledger, qlist) if self._ebf else repeat(0)
                pairs = zip(qlist, ebf, strict=False)
                start = [self._levels_at(ledger, r, room, free, e) for r, e in pairs]
            flat = [x > 0 for sizes in start for x in sizes]
            fits = [sizes[0] > 0 for sizes in start]
            any_start = True in flat
            if any_start:
                key = bytes(flat)
                cached = self._masks.get(key)
                if cached is None:
                    if len(self._masks) > 4096:
                        self._masks.clear()
                    cached = self._masks[key] = self._template.copy()
                    cached[off : off + len(flat)] = flat
                mask = cached.copy()
            else:
                mask = self._template.copy()
        else:
            mask = self._template.copy()
            qrows = self._order(ledger, cap, queued)
            qlist = qrows.tolist()
            if self._exact:
                start = self._all_start_sizes(ledger, cap, qrows)
            else:
                start = np.stack(
                    [self._start_sizes(ledger, cap, qrows, size, k) for size, k in self._starts],
                    1,
                )
            fits = (start[:, 0] > 0).tolist()
            legal = start.ravel() > 0
            mask[off : off + start.size] = legal
            any_start = bool(legal.any())
        d = self._rest(ledger, cap, qlist, start, fits, mask)
        # ``_rest`` set ``choice`` when it allowed an entry past the start block.
        d.choice = any_start or d.choice
        return d

    def _order(self, ledger: JobLedger, cap: Capacity, queued: list[int]) -> np.ndarray:
        cfg = self.cfg
        if cfg.queue_order == "fcfs" or len(queued) <= 1:
            return np.array(queued[: cfg.queue_slots], dtype=np.int64)
        allq = np.array(queued, dtype=np.int64)
        if cfg.queue_order == "fits_first":
            fits = self._start_sizes(ledger, cap, allq, "req") > 0
            allq = np.concatenate((allq[fits], allq[~fits]))
        else:
            allq = allq[np.argsort(ledger.estimate[allq], kind="stable")]
        return allq[: cfg.queue_slots]

    def _rest(
        self,
        ledger: JobLedger,
        cap: Capacity,
        qlist: list[int],
        start: Any,
        fits: Any,
        mask: np.ndarray,
    ) -> Decision:
        cfg = self.cfg
        cosched = _NONE2
        choice = False  # whether any entry here is legal
        if cfg.coschedule_levels and qlist:
            qrows = np.array(qlist, dtype=np.int64)
            cosched = np.zeros((qrows.size, len(cfg.coschedule_levels)), dtype=np.int64)
            req = ledger.req[qrows]
            for c, frac in enumerate(cfg.coschedule_levels):
                share = ledger.cpu_need[qrows] * frac
                room = cap.best_room(share, ledger.mem[qrows], False)
                cosched[:, c] = np.where(req <= room, req, 0)
            flags = cosched > 0
            self._put(mask, "coschedule", flags)
            choice = bool(flags.any())
        holding = ledger.holding
        rlist = holding[: cfg.running_slots]
        shrink: Any = _NONE2
        expand: Any = _NONE2
        grant = suspend = resume = _NONE_B
        slist: list[int] = []
        if self._running_blocks:
            shrink, expand, grant, legal = running_targets(
                ledger, cap, rlist, cfg, self._levels_key
            )
            if legal:
                # Flags straight from the target lists: one bytes buffer per block.
                # The template's entries are 0: write a block only when some entry is legal.
                for off, targets in ((self._shrink_offset, shrink), (self._expand_offset, expand)):
                    if off >= 0:
                        flat = bytes([x > 0 for row in targets for x in row])
                        if 1 in flat:
                            mask[off : off + len(flat)] = np.frombuffer(flat, dtype=np.int8)
                self._put(mask, "grant", grant)
                choice = True
        if cfg.suspend:
            suspend = np.ones(len(rlist), dtype=bool)
            self._put(mask, "suspend", suspend)
            choice = choice or bool(rlist)
            slist = ledger.suspended[: cfg.suspended_slots]
            if slist:
                ledger.fresh(slist)
                srows = np.array(slist, dtype=np.int64)
                dyn = ledger.dyn_rows
                saved = np.array([dyn[r][SIZE] for r in slist])
                room = cap.best_room(ledger.cpu_need[srows], ledger.mem[srows], ledger.simple)
                resume = saved <= room
                self._put(mask, "resume", resume)
                choice = choice or bool(resume.any())
        lend = reclaim = _NONE_B
        if self._shares:
            can_lend, can_reclaim = share_flags(ledger, rlist)
            lend = can_lend if cfg.lend_levels else _NONE_B
            reclaim = can_reclaim if cfg.reclaim else _NONE_B
            self._put(mask, "lend", np.repeat(lend, len(cfg.lend_levels)))
            self._put(mask, "reclaim", reclaim)
            choice = choice or bool(lend.any()) or bool(reclaim.any())
        return Decision(
            qlist,
            rlist,
            slist,
            start,
            cosched,
            shrink,
            expand,
            grant,
            suspend,
            resume,
            mask,
            len(holding),
            fits,
            choice,
            lend,
            reclaim,
        )

    def _put(self, mask: np.ndarray, block: str, flags: np.ndarray) -> None:
        off = self.blocks[block][0] if block in self.blocks else -1
        if off >= 0 and flags.size:
            mask[off : off + flags.size] = flags.ravel()

    def _all_start_sizes(self, ledger: JobLedger, cap: Capacity, rows: np.ndarray) -> np.ndarray:
        """Start sizes of ``rows`` at every level (0: not legal), with exact-size levels.

        An ``n<k>`` entry is ``k`` where the job accepts ``k`` tasks (rigid and evolving jobs:
        their requested size only) and ``k`` fits the room (in its cluster, or the best one).
        """
        out = np.zeros((rows.size, len(self._starts)), dtype=np.int64)
        for col in self._plain_starts:
            size, k = self._starts[col]
            out[:, col] = self._start_sizes(ledger, cap, rows, size, k)
        if not rows.size:
            return out
        table = ledger.table
        lo, hi = ledger.min[rows][:, None], ledger.max[rows][:, None]
        rule, mult = ledger.rule[rows][:, None], ledger.multiple[rows][:, None]
        req, flexible = ledger.req[rows][:, None], table.flexible[rows][:, None]
        for cluster, (cols, ks) in self._exact.items():
            n = ks[None, :]
            ok = (n >= lo) & (n <= hi)
            ok &= np.where(rule == 1, (n & (n - 1)) == 0, np.where(rule == 2, n % mult == 0, True))
            ok = np.where(flexible, ok, n == req)
            room = self._room(ledger, cap, rows, cluster)
            ok &= n <= np.broadcast_to(room, (rows.size,))[:, None]
            out[:, cols] = np.where(ok, n, 0)
        return out

    @staticmethod
    def _ebf_sizes(ledger: JobLedger, rows: Any) -> list[int]:
        """The ``"ebf"`` size of each ledger row (0: none), from the engine's state."""
        jobs = ledger.jobs
        return easy_backfill_sizes(ledger.sim, [jobs[r] for r in rows])

    def _levels_at(self, ledger: JobLedger, r: int, best: int, free: Any, ebf: int) -> list[int]:
        """Start size of row ``r`` at each level (0: not legal), whole-node tasks.

        ``best``: most idle nodes in one cluster; ``free``: idle nodes per cluster; ``ebf``:
        the row's ``"ebf"`` size when a level has it.
        """
        out = []
        for level, k in self._level_codes:
            room = best if k is None else (free[k] if k < len(free) else 0)
            if level == 0:
                size = ledger.req_list[r]
            elif level == 1:
                size = ledger.size_min_list[r]
            elif level == 2:
                size = ledger.size_max_list[r]
            elif level == 4:
                size = ebf or room + 1
            else:
                if ledger.flexible_list[r]:
                    size = accepted_floor(
                        ledger.rule_list[r],
                        ledger.multiple_list[r],
                        ledger.min_list[r],
                        ledger.max_list[r],
                        room,
                    )
                else:  # rigid and evolving jobs start at their requested size only
                    size = ledger.req_list[r]
                if size <= 0:
                    size = room + 1
            out.append(size if size <= room else 0)
        return out

    @staticmethod
    def _room(ledger: JobLedger, cap: Capacity, rows: np.ndarray, cluster: int | None) -> Any:
        """Tasks of each row that fit now: in ``cluster``, or the best cluster (``None``)."""
        if cluster is None:
            return cap.best_room(ledger.cpu_need[rows], ledger.mem[rows], ledger.simple)
        if cluster >= len(cap.free):
            return 0
        if ledger.simple:
            return cap.free[cluster]
        return cap.room(ledger.cpu_need[rows], ledger.mem[rows])[:, cluster]

    @staticmethod
    def _start_sizes(
        ledger: JobLedger, cap: Capacity, rows: np.ndarray, level: str, cluster: int | None = None
    ) -> np.ndarray:
        """Start size of each row at ``level`` (in ``cluster``) where it is legal now, else 0."""
        room = ActionMenu._room(ledger, cap, rows, cluster)
        table = ledger.table
        if level == "ebf":
            size = np.array(ActionMenu._ebf_sizes(ledger, rows.tolist()), dtype=np.int64)
            return np.where((size > 0) & (size <= room), size, 0)
        if level == "req":
            size = ledger.req[rows]
        elif level == "min":
            size = table.size_min[rows]
        elif level == "max":
            size = table.size_max[rows]
        else:
            lo, hi = ledger.min[rows], ledger.max[rows]
            if ledger.any_size:
                fit = np.minimum(hi, room)
                fit = np.where(fit >= lo, fit, 0)
            else:
                x = np.broadcast_to(room, lo.shape)
                fit = floor_sizes(ledger.rule[rows], ledger.multiple[rows], lo, hi, x)
            # Rigid and evolving jobs start at their requested size only.
            size = np.where(table.flexible[rows], fit, ledger.req[rows])
            return np.where((size > 0) & (size <= room), size, 0)
        return np.where(size <= room, size, 0)

    # ------------------------------------------------------------------ action -> command
    def apply(self, action: int, d: Decision, cmd: Commander) -> None:
        """Issue the command of a legal ``action`` (``d.mask[action] == 1``, not advance)."""
        name, slot, level = self._decode[action]
        if name == "start":
            cluster = self._starts[level][1]
            cmd.start(d.queue_rows[slot], int(d.start[slot][level]), cluster=cluster)
        elif name == "coschedule":
            row = d.queue_rows[slot]
            share = float(cmd.ledger.cpu_need[row] * self.cfg.coschedule_levels[level])
            cmd.start(row, None, share, packed=self._packed)
        elif name == "shrink":
            cmd.resize(d.run_rows[slot], int(d.shrink[slot][level]))
        elif name == "expand":
            cmd.resize(d.run_rows[slot], int(d.expand[slot][level]))
        elif name == "grant":
            cmd.grant(d.run_rows[slot])
        elif name == "suspend":
            cmd.suspend(d.run_rows[slot])
        elif name == "resume":
            cmd.resume(d.susp_rows[slot])
        elif name == "lend":
            row = d.run_rows[slot]
            need = float(cmd.ledger.cpu_need[row])
            cmd.set_share(row, need * (1.0 - self.cfg.lend_levels[level]))
        elif name == "reclaim":
            cmd.reclaim(d.run_rows[slot])
        else:  # pragma: no cover - advance is handled by the env
            raise ValueError(f"action {action} ({name}) is not a command")
