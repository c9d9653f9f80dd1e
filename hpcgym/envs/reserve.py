"""RLScheduler's decision mode, ``selection="reserve"``: choose a job; it starts when it fits.

At each decision point the agent picks one queued job (a start entry of the menu), whether it
fits now or not, and the env commits to it:

1. if it fits, it starts, and the agent chooses again at the same instant;
2. otherwise the env waits for it: the engine runs from decision point to decision point,
   and the job starts at the first one where it fits; the agent is not asked meanwhile.
   With ``reserve_backfill=True`` the job gets a reservation when the wait begins (the
   earliest of the running jobs' estimated ends by which enough nodes are free,
   :func:`hpcgym.sim.planning.shadow`), and at every decision point of the wait any other
   queued job, in submission order, starts if it fits now and its estimated end is strictly
   before the reservation; nothing uses the nodes left spare at the reservation. So the
   chosen job never starts later than its reservation when estimates bound run times.

A start entry is legal for every queued job in the window that fits the empty machine.
``advance`` is legal only when no job can be chosen (then, with ``skip_trivial``, the env
advances by itself): as in RLScheduler, the agent must pick a job whenever there is one. (A
legal ``advance`` beside the jobs trapped greedy policies: one whose ``advance`` logit came out
highest never committed, and jobs started only when the env forced one to avoid a stall.)

This is the decision rule of the ``<score>-reserve`` and ``<score>-reserve-bf`` baselines
(``hpcgym.baselines.priority``): an agent that always picks the best-ranked job by a score gives
their schedule (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from hpcgym.envs.capacity import Capacity
from hpcgym.envs.commands import Commander
from hpcgym.envs.ledger import JobLedger
from hpcgym.envs.menu import _NONE2, _NONE_B, ActionMenu, Decision, _ReqStarts
from hpcgym.envs.observations import DictObservation
from hpcgym.sim.job import JobState
from hpcgym.sim.metrics import episode_summary
from hpcgym.sim.planning import estimated_end, shadow
from hpcgym.sim.simulator import Simulator

_INT64: Final = np.int64
_QUEUED: Final = JobState.QUEUED


class ReserveSelection:
    """Commits to chosen jobs and waits for them (see the module doc)."""

    def __init__(self, backfill: bool, start_offset: int, machine: int) -> None:
        self.backfill = backfill
        self.offset = start_offset
        self.machine = machine
        self._ledger: JobLedger | None = None
        self._all_fit = False
        """Whether every job of ``_ledger``'s episode fits the machine (then a mask depends on
        the window's length only)."""
        self._masks: list[np.ndarray] = []
        """The mask of a window of ``k`` jobs that all fit the machine, by ``k``."""

    def decide(self, menu: ActionMenu, ledger: JobLedger, cap: Capacity) -> tuple[Decision, bool]:
        """The decision point with reserve mode's mask (see :meth:`mask`); any job to choose?

        The same ``Decision`` as ``menu.decide`` with the mask of :meth:`mask`. When the menu
        is advance and the start block only, jobs are whole nodes and the window is in
        submission order (``ActionMenu.decide``'s fast path; not a subclass), it is built
        here without the menu's own mask; when every job of the episode fits the machine, the
        mask is a copy of one cached by the window's length.
        """
        if not (menu._starts_only and ledger.simple) or type(menu) is not ActionMenu:
            d = menu.decide(ledger, cap)
            d.mask = d.mask.copy()
            return d, self.mask(d.mask, d.queue_rows, ledger)
        if ledger is not self._ledger:
            self._ledger = ledger
            self._all_fit = max(ledger.req_list, default=0) <= self.machine
        qlist = ledger.queued[: menu._q]
        k = len(qlist)
        room = cap.max_idle()
        req_list = ledger.req_list
        reqs = [req_list[r] for r in qlist]
        flags = [x <= room for x in reqs]
        choosable = k > 0
        if self._all_fit:
            masks = self._masks
            while len(masks) <= k:
                m = menu._template.copy()
                m[self.offset : self.offset + len(masks)] = 1
                m[0] = not masks
                masks.append(m)
            mask = masks[k].copy()
        else:
            mask = menu._template.copy()
            choosable = self.mask(mask, qlist, ledger)
        holding = ledger.holding
        d = Decision(
            qlist,
            holding[: menu.cfg.running_slots],
            [],
            _ReqStarts(reqs, flags),
            _NONE2,
            _NONE2,
            _NONE2,
            _NONE_B,
            _NONE_B,
            _NONE_B,
            mask,
            len(holding),
            flags,
            True in flags,
            _NONE_B,
            _NONE_B,
        )
        return d, choosable

    def mask(self, mask: np.ndarray, queue_rows: list[int], ledger: JobLedger) -> bool:
        """Make every queued job of the window that fits the machine choosable; any such job?

        ``advance`` (entry 0) is legal only when none is.
        """
        reqs = ledger.req_list
        off = self.offset
        choosable = False
        for q, row in enumerate(queue_rows):
            ok = reqs[row] <= self.machine
            mask[off + q] = ok
            choosable = choosable or ok
        mask[0] = not choosable
        return choosable

    def settle(
        self,
        menu: ActionMenu,
        ledger: JobLedger,
        cap: Capacity,
        sim: Simulator,
        cmd: Commander,
        skip: bool,
    ) -> Decision:
        """The next decision point (:meth:`decide`).

        With ``skip`` (``skip_trivial``), the engine advances past those without a job to
        choose, until the episode ends.
        """
        while True:
            d, choice = self.decide(menu, ledger, cap)
            if choice or not skip or sim.done:
                return d
            cmd.advance()

    def commit(self, row: int, sim: Simulator, cmd: Commander) -> None:
        """Start the job of ledger ``row`` now if it fits, else wait for it (and backfill)."""
        job = cmd.ledger.jobs[row]
        need = job.spec.nodes
        limit: float | None = None
        while True:
            free = sim.pool.free[0]
            if need <= free:
                cmd.start(row)
                return
            if self.backfill:
                if limit is None:
                    releases = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
                    limit = shadow(sim.now, free, need, releases)[0]
                if free:
                    self._backfill(row, limit, free, sim, cmd)
            if not cmd.advance():
                return  # every job has ended (the chosen one was rejected or killed)
            if job.state is not _QUEUED:  # not ``jid in sim.queue``: a read-only view's lookup
                return

    @staticmethod
    def _backfill(chosen: int, limit: float, free: int, sim: Simulator, cmd: Commander) -> None:
        """Start the other queued jobs that fit and end strictly before ``limit``.

        In submission order, each on the ``free`` nodes left by those before it; ``chosen`` is
        the ledger row of the job waited for. The ledger's queued rows are the engine's queue
        in its order (``sim.queued_jobs()``), its ``req_list`` the requested sizes and its
        estimates the :func:`~hpcgym.sim.planning.runtime_estimate` of each row.
        """
        now = sim.now
        ledger = cmd.ledger
        req = ledger.req_list
        estimate = ledger._estimate
        for r in ledger.queued.copy():  # a start takes its row out of the list
            n = req[r]
            if r == chosen or n > free:
                continue
            if now + estimate[r] < limit:
                cmd.start(r)
                free -= n
                if free == 0:
                    return


class ReserveStep:
    """``ClusterEnv.step`` in reserve mode, compiled: the same statements in the same order.

    Built by the env at every reset over that episode's objects; the env's own counters
    (``_steps``, ``_invalid``, ``_actions``) and its current ``_decision`` are read and written
    on the env, as its interpreted ``step`` does.
    """

    def __init__(
        self,
        reserve: ReserveSelection,
        menu: ActionMenu,
        ledger: JobLedger,
        cap: Capacity,
        sim: Simulator,
        cmd: Commander,
        encoder: DictObservation,
        rewarder: Any,
        skip: bool,
        penalty: Any,
        action_index: Callable[[Any], int],
    ) -> None:
        self.reserve = reserve
        self.menu = menu
        self.ledger = ledger
        self.cap = cap
        self.sim = sim
        self.cmd = cmd
        self.encoder = encoder
        self.rewarder = rewarder
        self.skip = skip
        self.penalty = penalty
        self.action_index = action_index
        self.n_actions = menu.n

    def step(self, env: Any, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One step of ``env`` (see ``ClusterEnv.step``)."""
        kind = type(action)
        a: int = int(action) if kind is int or kind is _INT64 else self.action_index(action)
        env._actions.append(a)
        steps: int = env._steps + 1
        env._steps = steps
        penalty: Any = 0.0
        d: Decision = env._decision
        sim = self.sim
        cmd = self.cmd
        reserve = self.reserve
        if not 0 <= a < self.n_actions or not d.mask[a]:
            env._invalid += 1
            penalty = self.penalty
        elif a == 0:
            cmd.advance()
        else:  # a start entry: commit to that job
            reserve.commit(d.queue_rows[a - reserve.offset], sim, cmd)
        d = reserve.settle(self.menu, self.ledger, self.cap, sim, cmd, self.skip)
        env._decision = d
        now = sim.now
        terminated = sim.done
        truncated = not terminated and steps >= env._max_steps
        summary = episode_summary(sim) if terminated or truncated else None
        reward, parts = self.rewarder.step(now, summary if terminated else None)
        parts["invalid"] = -penalty
        info: dict[str, Any] = {
            "action_mask": d.mask,
            "invalid_actions": env._invalid,
            "forced_commands": cmd.forced,
            "reward_parts": parts,
            "time": now,
        }
        if summary is not None:
            info["metrics"] = summary
            info["objectives"] = self.rewarder.objectives(summary)
        obs = self.encoder.encode(d, now, self.cap.free, sim.next_submission)
        return obs, reward - penalty, terminated, truncated, info
