"""A baseline as a policy on the env: engine commands translated into menu indices.

An engine scheduler (:class:`~hpcgym.baselines.base.BaseScheduler`) issues commands on a
:class:`~hpcgym.sim.Simulator` at every decision point; an env policy returns one index of the
flat action menu (``hpcgym.envs.menu``) per step. :class:`BaselinePolicy` joins the two.

**How.** The adapter keeps a *shadow* engine: a plain ``Simulator`` over the env's episode (same
platform, jobs and ``SimConfig``), driven in lockstep with the env's own engine. When the env
reaches a decision point, the shadow is advanced to the same point (calling the scheduler at every
engine decision point in between, as ``BaseScheduler.run`` does) and the scheduler decides on the
shadow. Every command it issues there is recorded with its outcome (the job, its size after the
command, the CPU share, whether it chose nodes or a cluster itself). Then, one per env step, each
recorded command becomes the menu entry that performs exactly it, read from the env's current
decision (``start[q]@level`` whose target is the size the job got, ``shrink``/``expand`` whose
target is the new size, ``grant``, ``suspend``, ``resume``, ``coschedule`` at the share's level
when the env's ``coschedule_placement`` gives the job's nodes, ``lend`` and ``reclaim`` for the
two forms of ``set_shares`` the menu has), and finally *advance*. Both engines receive the same
commands in the same order, so they stay identical; with ``check=True`` (default) this is
verified at every decision point (queue, running sizes and node usage), so a bug cannot pass
silently.

**Not expressible.** A command has no menu entry when its job is outside the queue, running or
suspended window, its size is not the target of any level, it places tasks itself (explicit
``nodes`` that no ``coschedule_placement`` gives, a cluster other than the first that fits
unless a ``"<size>@<k>"`` start level of that cluster has its size, a shrink's ``release``), or
it is not in the menu at all (``migrate``, ``set_walltime``, ``reject``, a ``set_shares`` that
is neither a lend nor a reclaim); also when the scheduler acts at a decision point the env
skipped because only *advance* was legal there
(``skip_trivial``), and when the scheduler's :meth:`~BaseScheduler.setting` asks for another
world than the env's (DFRS's penalised jobs and period). With ``strict=True`` (default) the
adapter raises :class:`NotExpressible` naming the command and the reason. With ``strict=False``
it counts the reason in ``stats.inexpressible``, drops the command (or, with
``approximate=True``, takes the legal level closest to its size for a start or resize, or the
engine's placement for a command that placed its tasks itself), and re-synchronises the
shadow with a copy of the env's engine at the next decision point, so the episode goes on as
"the baseline's decisions, minus what the menu cannot do". A scheduler whose own state no
longer fits such an episode (it fails, or stalls) is then reset (``stats.restarts``).

**Wake-ups.** ``Simulator.wake_at`` (evolving-application list scheduling) asks for a decision
point at a time; it is a timer, not a scheduling decision, and the menu has no entry for it. The
adapter forwards it to the env's engine (``wakeups=True``, default; counted in
``stats.wakeups``), or treats it as not expressible (``wakeups=False``).

>>> import gymnasium as gym
>>> import hpcgym
>>> from hpcgym.baselines.adapter import as_env_policy
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

import math
import pickle
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.evolving.online import EvolvingListScheduler
from hpcgym.baselines.koala.scheduler import Koala
from hpcgym.baselines.mebf.scheduler import MEBF
from hpcgym.baselines.registry import make
from hpcgym.baselines.sdpolicy.scheduler import SDPolicy
from hpcgym.envs.config import start_level
from hpcgym.errors import HpcGymError
from hpcgym.sim import SimConfig, Simulator
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.planning import packed_nodes, reclaimed_shares
from hpcgym.sim.simulator import JobId, as_job_id
from hpcgym.sim.spec import JobKind

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


@dataclass(frozen=True)
class Command:
    """One engine command a scheduler issued, with its outcome on the shadow engine.

    ``size``: the job's tasks after the command (``before``: before it); ``cpu``: the CPU share
    per task it asked for (``None``: the job's need); ``issue``: why no menu entry can perform
    it whatever the state (``None`` when one may); ``cluster``: see below.
    """

    verb: str
    job: int
    size: int = 0
    before: int = 0
    cpu: float | None = None
    issue: str | None = None
    time: float = math.nan
    cluster: int | None = None
    """The cluster a start asked for, when it is not the first that fits (the env's default)."""
    placed: int | None = None
    """The cluster a start placed the job in."""
    placements: tuple[str, ...] = ()
    """A co-scheduled start: the env placements (``coschedule_placement``) giving its nodes."""

    def __str__(self) -> str:
        size = f" -> {self.size}" if self.size else ""
        return f"{self.verb}(job {self.job}{size}) at t={self.time:g}"


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


# Reasons, as counted.
OUTSIDE_WINDOW = "outside the window"
NO_LEVEL = "no level has this target"
PLACEMENT = "explicit placement"
NOT_IN_MENU = "not in the menu"
SKIPPED = "at a decision point the env skipped"
ADVANCED = "left when the env advanced by itself"
NOT_LEGAL = "masked in the env"
SETTING = "setting differs from the env's"
WAKEUP = "wake-up"


class _Shadow(Simulator):
    """A simulator that records the commands issued on it (outermost calls only)."""

    def _init_log(self) -> None:
        self.log: list[Command | float] = []
        """Commands, and ``wake_at`` times as floats, in issue order."""
        self._depth = 0

    def _record(self, cmd: Command) -> None:
        if self._depth == 0:
            self.log.append(cmd)

    def _default_cluster(self, job: Job, size: int, cpu: float | None) -> int:
        spec = job.spec
        share = spec.cpu_need if cpu is None else cpu
        return self.pool.cluster_fitting(size, share, spec.mem)

    def start(
        self,
        job_id: JobId,
        size: int | np.integer | None = None,
        *,
        nodes: Any = None,
        cpu: Any = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        issue = None
        share: float | None = None
        if cpu is not None:
            if np.ndim(cpu) != 0:
                issue = f"{PLACEMENT} (per-task CPU shares)"
            else:
                share = float(cpu)
        at: int | None = None
        options: dict[str, Any] = {}
        if share is not None and issue is None and job is not None and cluster is None:
            # Where each env placement would put the co-scheduled tasks (compared below).
            n = job.spec.nodes if size is None else int(size)
            k = self._default_cluster(job, n, share)
            if k >= 0:
                options["first"] = self.pool.place(k, n, share, job.spec.mem)
            options["packed"] = packed_nodes(self, n, share, job.spec.mem)
        if nodes is not None and not options:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        elif cluster is not None and job is not None and issue is None:
            n = job.spec.nodes if size is None else int(size)
            first = self._default_cluster(job, n, share)
            if first != cluster:
                at = int(cluster)  # a per-cluster start level ("fit@k") may express it
        self._depth += 1
        try:
            super().start(job_id, size, nodes=nodes, cpu=cpu, cluster=cluster)
        finally:
            self._depth -= 1
        job = self._jobs[job_id]
        got = np.sort(job.nodes)
        placements = tuple(
            name
            for name, where in options.items()
            if where is not None and np.array_equal(where, got)
        )
        if nodes is not None and not placements:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        if share is not None and share == job.spec.cpu_need:
            share = None
        placed = job.cluster if job.cluster >= 0 else None
        cmd = Command("start", job_id, job.size, 0, share, issue, self._now, at, placed, placements)
        self._record(cmd)

    def resize(
        self, job_id: JobId, size: int | np.integer, *, nodes: Any = None, release: Any = None
    ) -> None:
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        before = job.size if job is not None else 0
        issue = None
        if nodes is not None or release is not None:
            issue = f"{PLACEMENT} (nodes chosen by the scheduler)"
        self._depth += 1
        try:
            super().resize(job_id, size, nodes=nodes, release=release)
        finally:
            self._depth -= 1
        self._record(Command("resize", job_id, int(size), before, None, issue, self._now))

    def grant(self, job_id: JobId, *, nodes: Any = None) -> None:
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        before = job.size if job is not None else 0
        issue = f"{PLACEMENT} (nodes chosen by the scheduler)" if nodes is not None else None
        self._depth += 1
        try:
            super().grant(job_id, nodes=nodes)
        finally:
            self._depth -= 1
        size = self._jobs[job_id].size
        self._record(Command("grant", job_id, size, before, None, issue, self._now))

    def suspend(self, job_id: JobId) -> None:
        job_id = as_job_id(job_id)
        self._depth += 1
        try:
            super().suspend(job_id)
        finally:
            self._depth -= 1
        self._record(Command("suspend", job_id, 0, 0, None, None, self._now))

    def resume(
        self,
        job_id: JobId,
        *,
        nodes: Any = None,
        cpu: Any = None,
        cluster: int | np.integer | None = None,
    ) -> None:
        job_id = as_job_id(job_id)
        issue = None
        if nodes is not None or cpu is not None or cluster is not None:
            issue = f"{PLACEMENT} (resume placed by the scheduler)"
        self._depth += 1
        try:
            super().resume(job_id, nodes=nodes, cpu=cpu, cluster=cluster)
        finally:
            self._depth -= 1
        size = self._jobs[job_id].size
        self._record(Command("resume", job_id, size, 0, None, issue, self._now))

    def _unexpressible(self, verb: str, job_id: int, call: Any) -> None:
        self._depth += 1
        try:
            call()
        finally:
            self._depth -= 1
        self._record(Command(verb, job_id, 0, 0, None, f"{NOT_IN_MENU} ({verb})", self._now))

    def migrate(self, job_id: JobId, nodes: Any, *, cpu: Any = None) -> None:
        job_id = as_job_id(job_id)
        self._unexpressible(
            "migrate", job_id, lambda: super(_Shadow, self).migrate(job_id, nodes, cpu=cpu)
        )

    def set_shares(self, job_id: JobId, cpu: Any) -> None:
        job_id = as_job_id(job_id)
        job = self._jobs.get(job_id)
        verb = _share_verb(self, job, cpu) if job is not None else None
        if verb is None:
            self._unexpressible(
                "set_shares", job_id, lambda: super(_Shadow, self).set_shares(job_id, cpu)
            )
            return
        self._depth += 1
        try:
            super().set_shares(job_id, cpu)
        finally:
            self._depth -= 1
        share = float(np.asarray(cpu, dtype=float).ravel()[0]) if verb == "lend" else None
        self._record(Command(verb, job_id, 0, 0, share, None, self._now))

    def set_walltime(self, job_id: JobId, walltime: float | np.floating | None) -> None:
        job_id = as_job_id(job_id)
        self._unexpressible(
            "set_walltime", job_id, lambda: super(_Shadow, self).set_walltime(job_id, walltime)
        )

    def reject(self, job_id: JobId) -> None:
        job_id = as_job_id(job_id)
        self._unexpressible("reject", job_id, lambda: super(_Shadow, self).reject(job_id))

    def wake_at(self, time: float | np.floating) -> None:
        super().wake_at(time)
        if self._depth == 0:
            self.log.append(float(time))


def _share_verb(sim: Simulator, job: Job, cpu: Any) -> str | None:
    """The menu command a ``set_shares`` is, before it runs: ``lend``, ``reclaim`` or ``None``.

    ``lend``: a running malleable job at its full CPU need gets one lower share for every task.
    ``reclaim``: the shares are exactly those of taking back its nodes' idle CPU.
    """
    if job.state is not JobState.RUNNING:
        return None
    try:
        target = np.broadcast_to(np.asarray(cpu, dtype=float), job.cpu.shape)
    except ValueError:
        return None
    need = job.spec.cpu_need
    if (job.cpu == need).all():
        v = target[0] if target.size else need
        lends = job.spec.kind is JobKind.MALLEABLE and (target == v).all() and 0 < v < need
        return "lend" if lends else None
    back = reclaimed_shares(sim, job)
    return "reclaim" if back is not None and np.array_equal(back, target) else None


def _shadow_of(sim: Simulator, jobs: Any = None, config: SimConfig | None = None) -> _Shadow:
    """A fresh shadow over ``sim``'s episode, or (``jobs is None and config is None``) a copy."""
    if jobs is None and config is None:
        # A pickle round trip copies an engine about twice as fast as ``copy.deepcopy``.
        # The state goes into a new ``_Shadow`` (a compiled ``Simulator`` cannot change class).
        state = pickle.loads(pickle.dumps(sim.__getstate__(), protocol=pickle.HIGHEST_PROTOCOL))
        shadow = _Shadow.__new__(_Shadow)
        shadow.__setstate__(state)
    else:
        shadow = _Shadow(sim.platform, jobs, config)
    assert isinstance(shadow, _Shadow)
    shadow._init_log()
    return shadow


def _point(sim: Simulator) -> tuple[Any, ...]:
    """What identifies a decision point of an episode (the clock and what happened)."""
    events = tuple((e.value, -1 if j is None else j.spec.id) for e, j in sim.happened)
    return (sim.now, sim.done, events)


class BaselinePolicy:
    """An engine scheduler acting on an hpcgym env through its action menu (module doc).

    The interface is the benchmark's env policy (``hpcgym.bench.policies.EnvPolicy``):
    ``bind(env)`` once, then ``act(obs, mask)`` per step (``reset(seed)`` is optional: a new
    episode is recognised by the env's new engine). ``env_overrides`` lists the env arguments the
    scheduler needs: its setting's (``kill_on_walltime=False`` for MEBF and SD-Policy) and, for
    MEBF, the menu levels its commands are targets of (:func:`mebf_levels`).

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
        _, cfg = self.scheduler.setting([], SimConfig())
        self.env_overrides: dict[str, Any] = {}
        """Env arguments the scheduler needs (``kill_on_walltime``, MEBF's and KOALA's levels)."""
        if not cfg.kill_on_walltime:
            self.env_overrides["kill_on_walltime"] = False
        if isinstance(self.scheduler, EvolvingListScheduler):
            # Its wake-ups may fall at decision points the env would skip.
            self.env_overrides["skip_trivial"] = False
        if isinstance(self.scheduler, MEBF):
            self.env_overrides.update(mebf_levels(self.scheduler))
        if isinstance(self.scheduler, Koala):
            self.env_overrides.update(koala_levels(self.scheduler))
        if isinstance(self.scheduler, SDPolicy) and self.scheduler.config.coschedule:
            self.env_overrides.update(sd_levels(self.scheduler))
        self._env: Any = None
        self._esim: Simulator | None = None
        self._shadow: _Shadow | None = None
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
        if isinstance(self.scheduler, MEBF) and self.scheduler.config.order != "fcfs":
            # The env's "ebf" start level plans EASY's reservation for the submission-order
            # head; MEBF ranked by a score reserves for its own head.
            order = self.scheduler.config.order
            detail = (
                f"MEBF with its queue ranked by {order} backfills behind its own head, and the "
                "env's ebf level reserves for the submission-order head: run it on the engine "
                f"(mebf-{order}, not mebf-{order}@env)"
            )
            self._fail(NotExpressible(SETTING, None, detail))
        self.scheduler.reset()
        self._shadow = _shadow_of(esim, jobs, cfg)
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
            self._shadow = _shadow_of(self._esim)
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
            self._shadow = shadow = _shadow_of(esim)
            self._diverged = False
            self.stats.resyncs += 1
            self._schedule(shadow)
        else:
            target = _point(esim)
            while True:
                if not shadow.advance():
                    raise AdapterDivergence(
                        f"the shadow engine ended before the env's (env at t={esim.now:g})"
                    )
                if _point(shadow) == target:
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

    def _schedule(self, shadow: _Shadow) -> None:
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

    @classmethod
    def _find(cls, cmd: Command, env: Any) -> int:
        """The entry performing ``cmd`` (legal or not), else raise ``NotExpressible``.

        A command that places its tasks itself is not expressible; its ``nearest`` entry is the
        same command with the engine's placement, when the menu has that.
        """
        if cmd.issue is None:
            return cls._entry(cmd, env)
        err = NotExpressible(cmd.issue, cmd)
        try:
            err.nearest = cls._entry(cmd, env)
        except NotExpressible as other:
            err.nearest = None if other.nearest is None else other.nearest
        raise err

    @staticmethod
    def _entry(cmd: Command, env: Any) -> int:
        """:meth:`_find` for a command whose placement is the engine's."""
        # The decision the env's mask was computed from.
        d = env.decision
        blocks = env.menu.blocks
        cfg = env.config
        row = env.ledger.row_of[cmd.job]
        verb = cmd.verb

        def slot_of(rows: list[int], window: str) -> int:
            try:
                return rows.index(row)
            except ValueError:
                raise NotExpressible(
                    f"{OUTSIDE_WINDOW} ({window})", cmd, f"{len(rows)} slots"
                ) from None

        def pick(block: str, slot: int, targets: Any, names: Any) -> int:
            if block not in blocks:
                raise NotExpressible(f"{NOT_IN_MENU} ({block})", cmd)
            off, _, levels = blocks[block]
            for level in range(levels):
                if int(targets[level]) == cmd.size:
                    return int(off + slot * levels + level)
            have = {str(names[k]): int(targets[k]) for k in range(levels)}
            err = NotExpressible(f"{NO_LEVEL} ({block})", cmd, f"targets {have}")
            legal = [k for k in range(levels) if int(targets[k]) > 0]
            if legal:  # the legal level whose target is closest (ties: the larger)
                k = min(legal, key=lambda k: (abs(int(targets[k]) - cmd.size), -int(targets[k])))
                err.nearest = int(off + slot * levels + k)
            raise err

        def flag(block: str, slot: int, flags: Any) -> int:
            if block not in blocks:
                raise NotExpressible(f"{NOT_IN_MENU} ({block})", cmd)
            off = blocks[block][0]
            if not flags[slot]:
                raise NotExpressible(NOT_LEGAL, cmd, f"{block}[{slot}] is masked")
            return int(off + slot)

        if verb == "start":
            slot = slot_of(d.queue_rows, "queue")
            if cmd.cpu is None:
                # A level placing in the cluster the scheduler chose, else the engine's.
                at = [start_level(name)[1] for name in cfg.start_levels]
                row_targets = d.start[slot]
                plain = [int(row_targets[k]) if c is None else 0 for k, c in enumerate(at)]
                if cmd.cluster is None:
                    # The engine's placement; a level of the cluster it chose does the same.
                    if cmd.placed is not None and cmd.size not in plain:
                        here = [
                            int(row_targets[k]) if c in (None, cmd.placed) else 0
                            for k, c in enumerate(at)
                        ]
                        if cmd.size in here:
                            plain = here
                    return pick("start", slot, plain, cfg.start_levels)
                there = [int(row_targets[k]) if c == cmd.cluster else 0 for k, c in enumerate(at)]
                if "start" in blocks and cmd.size in there:
                    off, _, levels = blocks["start"]
                    return int(off + slot * levels + there.index(cmd.size))
                err = NotExpressible(
                    f"{PLACEMENT} (cluster {cmd.cluster}; the env places in the first that fits)",
                    cmd,
                    f"no start level in cluster {cmd.cluster} has this target",
                )
                try:
                    err.nearest = pick("start", slot, plain, cfg.start_levels)
                except NotExpressible as other:
                    err.nearest = other.nearest
                raise err
            if "coschedule" not in blocks:
                raise NotExpressible(f"{NOT_IN_MENU} (coschedule)", cmd)
            if cfg.coschedule_placement not in cmd.placements:
                raise NotExpressible(
                    f"{PLACEMENT} (the env co-schedules by {cfg.coschedule_placement!r})",
                    cmd,
                    f"the scheduler's nodes are the {cmd.placements or 'neither'} placement",
                )
            need = float(env.ledger.cpu_need[row])
            off, _, levels = blocks["coschedule"]
            for c, frac in enumerate(cfg.coschedule_levels):
                if math.isclose(need * frac, cmd.cpu) and int(d.cosched[slot, c]) == cmd.size:
                    return int(off + slot * levels + c)
            raise NotExpressible(
                f"{NO_LEVEL} (coschedule)", cmd, f"share {cmd.cpu:g} of need {need:g}"
            )
        if verb == "lend":
            slot = slot_of(d.run_rows, "running")
            if "lend" not in blocks:
                raise NotExpressible(f"{NOT_IN_MENU} (lend)", cmd)
            off, _, levels = blocks["lend"]
            need = float(env.ledger.cpu_need[row])
            for c, f in enumerate(cfg.lend_levels):
                if need * (1.0 - f) == cmd.cpu:
                    return int(off + slot * levels + c)
            raise NotExpressible(f"{NO_LEVEL} (lend)", cmd, f"share {cmd.cpu:g} of need {need:g}")
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
        raise NotExpressible(f"{NOT_IN_MENU} ({verb})", cmd)  # pragma: no cover

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


def mebf_levels(scheduler: MEBF) -> dict[str, tuple[str, ...]]:
    """The menu levels MEBF's commands are targets of (``BaselinePolicy.env_overrides``).

    Starts at the requested size (``req``) or, elastic jobs, the largest size that fits
    (``fit``); backfills within the head's reservation (``ebf``); shrinks by its share factor
    (``cut<f>``); expands to the largest size that fits (Handoff, Intensive: ``fit``) or by the
    Spare ratio of the idle nodes (``spare<f>``).
    """
    cfg = scheduler.config
    expand = f"spare{cfg.spare_ratio!r}" if cfg.policy == "spare" else "fit"
    return {
        "start_levels": ("req", "fit", "ebf"),
        "shrink_levels": (f"cut{cfg.share_factor!r}",),
        "expand_levels": (expand,),
    }


def sd_levels(scheduler: SDPolicy) -> dict[str, Any]:
    """The menu entries SD-Policy's co-scheduling needs (``BaselinePolicy.env_overrides``).

    Mates lend ``sharing_factor`` of their CPU (``lend_levels``); the guest starts at that share
    on the lent CPU (``coschedule_levels``, ``coschedule_placement="packed"``); when a guest or a
    mate ends, the other takes its CPU back (``reclaim``).
    """
    sf = scheduler.config.sharing_factor
    return {
        "coschedule_levels": (sf,),
        "coschedule_placement": "packed",
        "lend_levels": (sf,),
        "reclaim": True,
    }


def koala_levels(scheduler: Koala) -> dict[str, tuple[str, ...]]:
    """The menu levels KOALA's commands are targets of (``BaselinePolicy.env_overrides``).

    Worst-Fit places a job in a cluster of its own choosing, at its requested size or the
    largest it accepts there: ``req@*`` and ``fit@*`` (every cluster). Its malleability manager
    hands out or reclaims processors by FPSMA or EGS, so a grow or shrink can end at any size:
    exact-size levels ``n*``. Under PWA, processors held for a job waiting on shrinks leave the
    others less than the cluster's idle nodes, so its starts need every size in every cluster
    (``n*@*``).
    """
    approach = scheduler.config.approach
    if approach == "none":
        return {"start_levels": ("req@*", "fit@*")}
    if approach == "pra":
        return {"start_levels": ("req@*", "fit@*"), "expand_levels": ("n*",)}
    return {"start_levels": ("n*@*",), "shrink_levels": ("n*",), "expand_levels": ("n*",)}


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
