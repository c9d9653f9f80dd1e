"""A baseline as a policy on the env: engine commands translated into menu indices.

An engine scheduler (:class:`~hpcgym.baselines.base.BaseScheduler`) issues commands on a
:class:`~hpcgym.sim.Simulator` at every decision point; an env policy returns one index of the flat
action menu (``hpcgym.envs.menu``) per step. :class:`BaselinePolicy` joins the two.

**How.** The adapter keeps a *shadow* engine (:mod:`hpcgym.policies.shadow`), a ``Simulator`` that
records the commands issued on it, over the env's episode (same platform, jobs and ``SimConfig``),
driven in lockstep with the env's own engine. When the env reaches a decision point, the shadow is
advanced to the same point (calling the scheduler at every engine decision point in between, as
``BaseScheduler.run`` does) and the scheduler decides on the shadow. Every command it issues there
is recorded with its outcome (the job, its size after the command, the CPU share, whether it chose
nodes or a cluster itself). Then, one per env step, each recorded command becomes the menu entry
that performs exactly it, which the menu itself answers from the env's current decision
(:meth:`hpcgym.envs.menu.ActionMenu.entry_for`: ``start[q]@level`` whose target is the size the job
got, ``shrink``/``expand`` whose target is the new size, ``grant``, ``suspend``, ``resume``,
``coschedule`` at the share's level when the env's ``coschedule_placement`` gives the job's nodes,
``lend`` and ``reclaim`` for the two forms of ``set_shares`` the menu has), and finally *advance*.
Both engines receive the same commands in the same order, so they stay identical; with
``check=True`` (default) this is verified at every decision point (queue, running sizes and node
usage), so a bug cannot pass silently.

**Not expressible.** A command has no menu entry when its job is outside the queue, running or
suspended window, its size is not the target of any level, it places tasks itself (explicit
``nodes`` that no ``coschedule_placement`` gives, a cluster other than the first that fits unless a
``"<size>@<k>"`` start level of that cluster has its size, a shrink's ``release``), or it is not in
the menu at all (``migrate``, ``set_walltime``, ``reject``, a ``set_shares`` that is neither a lend
nor a reclaim); also when the scheduler acts at a decision point the env skipped because only
*advance* was legal there (``skip_trivial``), when the scheduler's :meth:`~BaseScheduler.setting`
asks for another world than the env's (DFRS's penalised jobs and period), and when the scheduler
itself says it cannot act through the menu (:meth:`~BaseScheduler.env_refusal`: MEBF ranked by a
score). With ``strict=True`` (default) the adapter raises :class:`NotExpressible` naming the command
and the reason. With ``strict=False`` it counts the reason in ``stats.inexpressible``, drops the
command (or, with ``approximate=True``, takes the legal level closest to its size for a start or
resize, or the engine's placement for a command that placed its tasks itself), and re-synchronises
the shadow with a copy of the env's engine at the next decision point, so the episode goes on as
"the baseline's decisions, minus what the menu cannot do". A scheduler whose own state no longer
fits such an episode (it fails, or stalls) is then reset (``stats.restarts``).

**Wake-ups.** ``Simulator.wake_at`` (evolving-application list scheduling) asks for a decision point
at a time; it is a timer, not a scheduling decision, and the menu has no entry for it. The adapter
forwards it to the env's engine (``wakeups=True``, default; counted in ``stats.wakeups``), or treats
it as not expressible (``wakeups=False``).

>>> import gymnasium as gym
>>> import hpcgym
>>> from hpcgym.policies import as_env_policy
>>> policy = as_env_policy("easy")
>>> env = gym.make("hpcgym/Rigid-v0", n_jobs=32, queue_slots=32)
>>> policy.bind(env)
>>> obs, info = env.reset(seed=0)
>>> done = False
>>> while not done:
...     obs, r, term, trunc, info = env.step(policy.act(obs, info["action_mask"]))
...     done = term or trunc
>>> policy.stats.inexpressible
Counter()
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.koala.scheduler import koala_levels
from hpcgym.baselines.mebf.scheduler import mebf_levels
from hpcgym.baselines.registry import make
from hpcgym.baselines.sdpolicy.scheduler import sd_levels
from hpcgym.envs.menu_entry import (
    NO_LEVEL,
    NOT_IN_MENU,
    NOT_LEGAL,
    OUTSIDE_WINDOW,
    PLACEMENT,
    NoMenuEntry,
)
from hpcgym.errors import HpcGymError
from hpcgym.policies.contract import EnvPolicy
from hpcgym.policies.shadow import Command, ShadowSimulator, decision_point, shadow_of
from hpcgym.sim import Simulator

__all__ = [
    "ADVANCE",
    "ADVANCED",
    "NOT_IN_MENU",
    "NOT_LEGAL",
    "NO_LEVEL",
    "OUTSIDE_WINDOW",
    "PLACEMENT",
    "SETTING",
    "SKIPPED",
    "WAKEUP",
    "AdapterDivergence",
    "AdapterStats",
    "BaselinePolicy",
    "Command",
    "NotExpressible",
    "Rollout",
    "as_env_policy",
    "koala_levels",
    "mebf_levels",
    "rollout",
    "sd_levels",
]

ADVANCE = 0
"""The menu index of *advance*."""


class NotExpressible(HpcGymError, RuntimeError):
    """A baseline's command has no entry in the env's action menu (see the module doc).

    Attributes:
        reason: Why, as counted in ``AdapterStats.inexpressible``.
        command: The command, or ``None`` for a whole-episode reason (the setting).
    """

    def __init__(self, reason: str, command: Command | None = None, detail: str = "") -> None:
        self.reason = reason
        self.command = command
        self.nearest: int | None = None
        """A legal entry of the same block and slot at the closest size, when there is one."""
        what = f"{command}: " if command is not None else ""
        super().__init__(f"{what}{reason}{'; ' + detail if detail else ''}")


class AdapterDivergence(HpcGymError, RuntimeError):
    """The env's engine and the adapter's shadow differ without a known cause (a bug)."""


@dataclass
class AdapterStats:
    """What the adapter did over its episodes (cumulative; ``reset_stats`` clears it)."""

    commands: int = 0
    """Commands translated into menu entries."""
    advances: int = 0
    """*Advance* entries returned."""
    decisions: int = 0
    """Engine decision points at which the scheduler was called."""
    wakeups: int = 0
    """``wake_at`` requests forwarded to the env's engine."""
    resyncs: int = 0
    """Times the shadow was replaced by a copy of the env's engine (``strict=False`` only)."""
    approximated: int = 0
    """Inexpressible commands replaced by the closest legal entry (``approximate=True``)."""
    restarts: int = 0
    """Times the scheduler was reset after failing on a departed episode (lenient only)."""
    inexpressible: Counter[str] = field(default_factory=Counter)
    """Commands (or episodes, for ``setting``) without a menu entry, by reason."""


# Reasons, as counted (those of the menu's side come from ``hpcgym.envs.menu_entry``).
SKIPPED = "at a decision point the env skipped"
ADVANCED = "left when the env advanced by itself"
SETTING = "setting differs from the env's"
WAKEUP = "wake-up"


class BaselinePolicy(EnvPolicy):
    """An engine scheduler acting on an hpcgym env through its action menu (module doc).

    It is an :class:`~hpcgym.policies.contract.EnvPolicy`: ``bind(env)`` once, then
    ``act(obs, mask)`` per step (``reset(seed)`` is optional: a new episode is recognised by the
    env's new engine). ``env_overrides`` lists the env arguments the scheduler needs, as the
    scheduler itself states them (:meth:`~hpcgym.baselines.base.BaseScheduler.env_needs`: its
    setting's walltime rule, and for MEBF, KOALA and SD-Policy the menu levels its commands are
    targets of).

    Args:
        scheduler: A scheduler, or a registered name (``hpcgym.baselines.names()``).
        strict: Raise :class:`NotExpressible` (default) or count and go on.
        wakeups: Forward ``wake_at`` to the env's engine (else it is not expressible).
        check: Verify at every decision point that the env's engine equals the shadow.
        approximate: With ``strict=False``, replace a start or resize whose size no level
            targets by the legal level of the same entry with the closest target, and a command
            that places its tasks itself by the same command with the engine's placement
            (counted in ``stats.approximated`` as well as ``stats.inexpressible``) instead of
            skipping it: closer to the scheduler's intent, for imitation.
    """

    def __init__(
        self,
        scheduler: BaseScheduler | str,
        *,
        strict: bool = True,
        wakeups: bool = True,
        check: bool = True,
        approximate: bool = False,
    ) -> None:
        self.scheduler = make(scheduler) if isinstance(scheduler, str) else scheduler
        self.strict = strict
        self.wakeups = wakeups
        self.check = check
        self.approximate = approximate
        self.stats = AdapterStats()
        self.env_overrides: dict[str, Any] = self.scheduler.env_needs()
        """Env arguments the scheduler needs (:meth:`BaseScheduler.env_needs`)."""
        self._env: Any = None
        self._esim: Simulator | None = None
        self._shadow: ShadowSimulator | None = None
        self._here: Any = None
        self._plan: deque[Command | float] = deque()
        self._diverged = False
        self._strayed = False
        """Whether this episode departed from the scheduler's (lenient only)."""

    def __repr__(self) -> str:
        return f"BaselinePolicy({self.scheduler!r}, strict={self.strict})"

    # ------------------------------------------------------------------ policy API
    def bind(self, env: Any) -> None:
        """Act on ``env`` (any wrapper of a ``ClusterEnv``) from now on."""
        self._env = env.unwrapped
        self._esim = None

    def reset(self, seed: int | None = None) -> None:
        """Forget the episode (the next ``act`` starts from the env's new one)."""
        self._esim = None

    def reset_stats(self) -> None:
        """Zero :attr:`stats`."""
        self.stats = AdapterStats()

    def __call__(self, obs: Any, mask: np.ndarray) -> int:
        """``act(obs, mask)``."""
        return self.act(obs, mask)

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The menu index of the scheduler's next command here, or *advance* (0)."""
        env = self._env
        if env is None:
            raise HpcGymError("BaselinePolicy.bind(env) first")
        esim: Simulator = env.sim
        if esim is not self._esim:
            self._begin(esim)
        elif esim.happened is not self._here:
            self._left_behind()
            self._decide()
        mask = np.asarray(mask)
        while self._plan:
            item = self._plan.popleft()
            if isinstance(item, float):
                self._wake(item)
                continue
            index = self._index(item, env, mask)
            if index is not None:
                self.stats.commands += 1
                return index
        self.stats.advances += 1
        self._here = None  # the env moves on: decide again at the next call
        return ADVANCE

    # ------------------------------------------------------------------ episodes
    def _begin(self, esim: Simulator) -> None:
        """A new episode: a fresh shadow over the env's jobs, in the scheduler's setting."""
        self._esim = esim
        self._plan.clear()
        self._diverged = self._strayed = False
        specs = [job.spec for job in esim.jobs.values()]
        jobs, cfg = self.scheduler.setting(specs, esim.config)
        same = cfg == esim.config and list(jobs) == specs
        if not same:
            jobs_note = "" if list(jobs) == specs else " and changes the jobs"
            detail = (
                f"the scheduler runs with {cfg}{jobs_note}; the env's engine has {esim.config}"
                + (f"; make the env with {self.env_overrides}" if self.env_overrides else "")
            )
            self._fail(NotExpressible(SETTING, None, detail))
            jobs, cfg = specs, esim.config
        refusal = self.scheduler.env_refusal()
        if refusal is not None:
            self._fail(NotExpressible(SETTING, None, refusal))
        self.scheduler.reset()
        self._shadow = shadow_of(esim, jobs, cfg)
        self._decide()

    def _decide(self) -> None:
        """Bring the shadow to the env's decision point and let the scheduler decide there.

        Lenient only, once the episode has departed from the scheduler's: a scheduler whose own
        state no longer fits the env's (it fails, or the engine stalls under it) is reset and
        decides again on a copy of the env's engine (counted in ``stats.restarts``).
        """
        try:
            self._follow()
        except (AdapterDivergence, NotExpressible):
            raise
        except Exception:
            if self.strict or not self._strayed:
                raise
            self.stats.restarts += 1
            self.scheduler.reset()
            assert self._esim is not None
            self._shadow = shadow_of(self._esim)
            self._diverged = False
            self._schedule(self._shadow)
        esim, shadow = self._esim, self._shadow
        assert esim is not None and shadow is not None
        self._here = esim.happened
        log = shadow.log
        # Wake-ups first: they only add a timer, and the env may advance by itself after the
        # last command of the point (``skip_trivial``).
        self._plan = deque([x for x in log if isinstance(x, float)])
        self._plan.extend(x for x in log if isinstance(x, Command))

    def _follow(self) -> None:
        """Advance the shadow to the env's point (or copy the env's engine) and schedule."""
        esim, shadow = self._esim, self._shadow
        assert esim is not None and shadow is not None
        if self._diverged:
            self._shadow = shadow = shadow_of(esim)
            self._diverged = False
            self.stats.resyncs += 1
            self._schedule(shadow)
        else:
            target = decision_point(esim)
            while True:
                if not shadow.advance():
                    raise AdapterDivergence(
                        f"the shadow engine ended before the env's (env at t={esim.now:g})"
                    )
                if decision_point(shadow) == target:
                    if self.check:
                        self._compare(shadow, esim)
                    self._schedule(shadow)
                    break
                if shadow.now > esim.now:
                    raise AdapterDivergence(
                        f"the shadow passed the env's decision point (t={esim.now:g})"
                    )
                self._schedule(shadow)
                for item in shadow.log:
                    if isinstance(item, float) and item > esim.now:
                        self._wake(item)  # still ahead of the env: the same timer
                        continue
                    cmd = item if isinstance(item, Command) else Command("wake_at", -1, time=item)
                    self._fail(NotExpressible(SKIPPED, cmd, "only advance was legal there"))
                if self._diverged:  # lenient: restart from the env's state
                    self._follow()
                    return

    def _schedule(self, shadow: ShadowSimulator) -> None:
        shadow.log.clear()
        self.scheduler.schedule(shadow)
        self.stats.decisions += 1

    def _left_behind(self) -> None:
        """The env advanced by itself with commands of the last decision still planned."""
        for item in self._plan:
            if isinstance(item, Command):
                self._fail(NotExpressible(ADVANCED, item, "no entry for it was legal"))
        self._plan.clear()

    # ------------------------------------------------------------------ translation
    def _fail(self, err: NotExpressible) -> None:
        if self.strict:
            raise err
        self.stats.inexpressible[err.reason] += 1
        self._diverged = self._strayed = True

    def _wake(self, time: float) -> None:
        esim = self._esim
        assert esim is not None
        if not self.wakeups:
            self._fail(NotExpressible(f"{NOT_IN_MENU} (wake_at)", Command("wake_at", -1)))
            return
        if time < esim.now:  # pragma: no cover - wake-ups are forwarded at their own point
            self._fail(NotExpressible(WAKEUP, Command("wake_at", -1), f"t={time:g} has passed"))
            return
        esim.wake_at(time)
        self.stats.wakeups += 1

    def _index(self, cmd: Command, env: Any, mask: np.ndarray) -> int | None:
        """The menu index performing ``cmd`` now, or ``None`` (not expressible, counted)."""
        try:
            index = self._find(cmd, env)
            if not mask[index]:
                raise NotExpressible(NOT_LEGAL, cmd, f"entry {env.action_labels()[index]}")
        except NotExpressible as err:
            self._fail(err)
            if self.approximate and err.nearest is not None and mask[err.nearest]:
                self.stats.approximated += 1
                return err.nearest
            return None
        return index

    @staticmethod
    def _find(cmd: Command, env: Any) -> int:
        """The entry performing ``cmd`` (legal or not), else raise ``NotExpressible``.

        The menu answers (:meth:`hpcgym.envs.menu.ActionMenu.entry_for`). A command that places
        its tasks itself is not expressible; its ``nearest`` entry is the same command with the
        engine's placement, when the menu has that.
        """
        try:
            index = env.menu.entry_for(env.decision, env.ledger, cmd)
        except NoMenuEntry as miss:
            if cmd.issue is None:
                err = NotExpressible(miss.reason, cmd, miss.detail)
                err.nearest = miss.nearest
                raise err from None
            index = miss.nearest
        if cmd.issue is None:
            return int(index)
        err = NotExpressible(cmd.issue, cmd)
        err.nearest = index
        raise err

    # ------------------------------------------------------------------ checking
    @staticmethod
    def _compare(shadow: Simulator, esim: Simulator) -> None:
        """Raise :class:`AdapterDivergence` unless both engines hold the same state."""
        same = (
            list(shadow.queue) == list(esim.queue)
            and [(i, j.size, j.state) for i, j in shadow.running.items()]
            == [(i, j.size, j.state) for i, j in esim.running.items()]
            and list(shadow.suspended) == list(esim.suspended)
            and np.array_equal(shadow.node_cpu_used, esim.node_cpu_used)
        )
        if not same:
            raise AdapterDivergence(f"the env's engine and the shadow differ at t={esim.now:g}")


def as_env_policy(scheduler: BaseScheduler | str, **kwargs: Any) -> BaselinePolicy:
    """``BaselinePolicy(scheduler, **kwargs)``: a baseline (or its name) as an env policy."""
    return BaselinePolicy(scheduler, **kwargs)


@dataclass
class Rollout:
    """One env episode of a policy: per step the observation, mask and action, and the end."""

    obs: list[Any]
    masks: list[np.ndarray]
    actions: list[int]
    info: dict[str, Any]
    """The last step's ``info`` (``metrics``, ``objectives``, ...)."""
    truncated: bool


def rollout(
    policy: BaselinePolicy,
    env: Any,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    record: bool = False,
) -> Rollout:
    """Run one episode of ``policy`` on ``env`` (bound here); ``record`` keeps every step."""
    policy.bind(env)
    obs, info = env.reset(seed=seed, options=options)
    policy.reset(seed)
    out = Rollout([], [], [], info, False)
    while True:
        mask = np.asarray(info["action_mask"])
        a = policy.act(obs, mask)
        if record:
            out.obs.append(obs)
            out.masks.append(mask.copy())
            out.actions.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            out.info, out.truncated = info, bool(truncated)
            return out
