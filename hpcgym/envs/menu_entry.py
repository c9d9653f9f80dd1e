"""Which menu entry performs an engine command: the menu's side of the baseline adapter.

An engine scheduler issues commands (``start``, ``resize``, ``grant``, ...) on a simulator; the
env takes one index of the flat action menu (:mod:`hpcgym.envs.menu`) per step.
:func:`entry_for` answers, for one command and the env's current decision (:class:`Decision`),
the index whose entry does exactly that command (``start[q]@level`` whose target is the size the
job got, ``shrink``/``expand`` whose target is the new size, ``grant``, ``suspend``, ``resume``,
``coschedule`` at the share's level when the env's ``coschedule_placement`` gives the job's
nodes, ``lend`` and ``reclaim``), or raises :class:`NoMenuEntry` saying why none does. It does
not look at the mask: a legal-or-not check is the caller's.

The menu owns its layout, so this is the one place that maps a command onto it; the adapter
(:mod:`hpcgym.policies.adapted`) only records commands and forwards them here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from hpcgym.envs.config import start_level
from hpcgym.errors import HpcGymError

if TYPE_CHECKING:
    from hpcgym.envs.ledger import JobLedger
    from hpcgym.envs.menu import ActionMenu, Decision

# Why a command has no entry (the adapter counts them under these names).
OUTSIDE_WINDOW = "outside the window"
NO_LEVEL = "no level has this target"
PLACEMENT = "explicit placement"
NOT_IN_MENU = "not in the menu"
NOT_LEGAL = "masked in the env"


class MenuCommand(Protocol):
    """What :func:`entry_for` reads of a command (the adapter's ``Command`` has these)."""

    @property
    def verb(self) -> str:
        """``start``, ``resize``, ``grant``, ``suspend``, ``resume``, ``lend`` or ``reclaim``."""

    @property
    def job(self) -> int:
        """The job's id."""

    @property
    def size(self) -> int:
        """The job's tasks after the command."""

    @property
    def before(self) -> int:
        """The job's tasks before it (a resize: shrink when ``size`` is smaller)."""

    @property
    def cpu(self) -> float | None:
        """The CPU share per task it asked for (``None``: the job's need)."""

    @property
    def cluster(self) -> int | None:
        """The cluster a start asked for, when it is not the first that fits."""

    @property
    def placed(self) -> int | None:
        """The cluster a start placed the job in."""

    @property
    def placements(self) -> tuple[str, ...]:
        """A co-scheduled start: the env placements giving its nodes."""


class NoMenuEntry(HpcGymError, LookupError):
    """No entry of the menu performs a command.

    Attributes:
        reason: Why (one of this module's reasons, with the block in parentheses).
        detail: What the menu offers instead (targets, slots), for the message.
        nearest: A legal entry of the same block and slot at the closest size, when there is
            one (an approximation a lenient caller may take).
    """

    def __init__(self, reason: str, detail: str = "", nearest: int | None = None) -> None:
        self.reason = reason
        self.detail = detail
        self.nearest = nearest
        super().__init__(f"{reason}{'; ' + detail if detail else ''}")


def entry_for(menu: ActionMenu, d: Decision, ledger: JobLedger, cmd: MenuCommand) -> int:
    """The index of the entry performing ``cmd`` in decision ``d`` (legal or not).

    Raises:
        NoMenuEntry: No entry performs it (outside the windows, no level with its size, a
            placement the env does not make, or a verb the menu lacks).
    """
    blocks = menu.blocks
    cfg = menu.cfg
    row = ledger.row_of[cmd.job]
    verb = cmd.verb

    def slot_of(rows: list[int], window: str) -> int:
        try:
            return rows.index(row)
        except ValueError:
            raise NoMenuEntry(f"{OUTSIDE_WINDOW} ({window})", f"{len(rows)} slots") from None

    def pick(block: str, slot: int, targets: Any, names: Any) -> int:
        if block not in blocks:
            raise NoMenuEntry(f"{NOT_IN_MENU} ({block})")
        off, _, levels = blocks[block]
        for level in range(levels):
            if int(targets[level]) == cmd.size:
                return int(off + slot * levels + level)
        have = {str(names[k]): int(targets[k]) for k in range(levels)}
        legal = [k for k in range(levels) if int(targets[k]) > 0]
        nearest = None
        if legal:  # the legal level whose target is closest (ties: the larger)
            k = min(legal, key=lambda k: (abs(int(targets[k]) - cmd.size), -int(targets[k])))
            nearest = int(off + slot * levels + k)
        raise NoMenuEntry(f"{NO_LEVEL} ({block})", f"targets {have}", nearest)

    def flag(block: str, slot: int, flags: Any) -> int:
        if block not in blocks:
            raise NoMenuEntry(f"{NOT_IN_MENU} ({block})")
        if not flags[slot]:
            raise NoMenuEntry(NOT_LEGAL, f"{block}[{slot}] is masked")
        return int(blocks[block][0] + slot)

    if verb == "start":
        slot = slot_of(d.queue_rows, "queue")
        if cmd.cpu is None:
            return _start_entry(menu, d, slot, cmd, pick)
        if "coschedule" not in blocks:
            raise NoMenuEntry(f"{NOT_IN_MENU} (coschedule)")
        if cfg.coschedule_placement not in cmd.placements:
            raise NoMenuEntry(
                f"{PLACEMENT} (the env co-schedules by {cfg.coschedule_placement!r})",
                f"the scheduler's nodes are the {cmd.placements or 'neither'} placement",
            )
        need = float(ledger.cpu_need[row])
        off, _, levels = blocks["coschedule"]
        for c, frac in enumerate(cfg.coschedule_levels):
            if math.isclose(need * frac, cmd.cpu) and int(d.cosched[slot, c]) == cmd.size:
                return int(off + slot * levels + c)
        raise NoMenuEntry(f"{NO_LEVEL} (coschedule)", f"share {cmd.cpu:g} of need {need:g}")
    if verb == "lend":
        slot = slot_of(d.run_rows, "running")
        if "lend" not in blocks:
            raise NoMenuEntry(f"{NOT_IN_MENU} (lend)")
        off, _, levels = blocks["lend"]
        need = float(ledger.cpu_need[row])
        for c, f in enumerate(cfg.lend_levels):
            if need * (1.0 - f) == cmd.cpu:
                return int(off + slot * levels + c)
        raise NoMenuEntry(f"{NO_LEVEL} (lend)", f"share {cmd.cpu:g} of need {need:g}")
    if verb == "reclaim":
        return flag("reclaim", slot_of(d.run_rows, "running"), d.reclaim)
    if verb == "resize":
        slot = slot_of(d.run_rows, "running")
        if cmd.size < cmd.before:
            return pick("shrink", slot, d.shrink[slot], cfg.shrink_levels)
        return pick("expand", slot, d.expand[slot], cfg.expand_levels)
    if verb == "grant":
        return flag("grant", slot_of(d.run_rows, "running"), d.grant)
    if verb == "suspend":
        return flag("suspend", slot_of(d.run_rows, "running"), d.suspend)
    if verb == "resume":
        return flag("resume", slot_of(d.susp_rows, "suspended"), d.resume)
    raise NoMenuEntry(f"{NOT_IN_MENU} ({verb})")


def _start_entry(menu: ActionMenu, d: Decision, slot: int, cmd: MenuCommand, pick: Any) -> int:
    """A start at the job's full CPU need: a level placing in the cluster the scheduler chose."""
    cfg = menu.cfg
    at = [start_level(name)[1] for name in cfg.start_levels]
    row_targets = d.start[slot]
    plain = [int(row_targets[k]) if c is None else 0 for k, c in enumerate(at)]
    if cmd.cluster is None:
        # The engine's placement; a level of the cluster it chose does the same.
        if cmd.placed is not None and cmd.size not in plain:
            here = [int(row_targets[k]) if c in (None, cmd.placed) else 0 for k, c in enumerate(at)]
            if cmd.size in here:
                plain = here
        return int(pick("start", slot, plain, cfg.start_levels))
    there = [int(row_targets[k]) if c == cmd.cluster else 0 for k, c in enumerate(at)]
    if "start" in menu.blocks and cmd.size in there:
        off, _, levels = menu.blocks["start"]
        return int(off + slot * levels + there.index(cmd.size))
    try:
        nearest: int | None = pick("start", slot, plain, cfg.start_levels)
    except NoMenuEntry as other:
        nearest = other.nearest
    raise NoMenuEntry(
        f"{PLACEMENT} (cluster {cmd.cluster}; the env places in the first that fits)",
        f"no start level in cluster {cmd.cluster} has this target",
        nearest,
    )
