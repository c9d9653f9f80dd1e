"""``ClusterEnv``: the Gymnasium adapter over the ``hpcgym.sim`` engine."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hpcgym.envs.capacity import Capacity
from hpcgym.envs.commands import Commander
from hpcgym.envs.config import EnvConfig, expand_wildcards
from hpcgym.envs.episodes import Episode, choose_episode, dropped_jobs, load_cached, workload_for
from hpcgym.envs.ledger import JobLedger
from hpcgym.envs.menu import ActionMenu, Decision
from hpcgym.envs.observations import OBSERVATIONS, DictObservation
from hpcgym.envs.render import GanttLog, render_ansi, render_gantt
from hpcgym.envs.reserve import ReserveSelection, ReserveStep
from hpcgym.envs.rewards import Rewarder
from hpcgym.errors import CommandError, SpecError
from hpcgym.sim.config import SimConfig
from hpcgym.sim.metrics import episode_summary
from hpcgym.sim.simulator import Simulator

ACTIONS: dict[str, type[ActionMenu]] = {"menu": ActionMenu}
"""Action encodings by name."""

_INTEGERS = (int, np.integer)
_BOOLEANS = (bool, np.bool_)


def _action_index(action: Any) -> int:
    """The menu index an action names: an integer of any integer type, or a one-element array.

    Raises:
        CommandError: Anything else (``0.7``, ``"0"``, ``True``): it names no menu entry.
    """
    kind = type(action)
    if kind is int or kind is np.int64:  # the usual actions, first (``bool`` is not ``int``)
        return int(action)
    if isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        return int(action.reshape(()))
    if isinstance(action, _INTEGERS) and not isinstance(action, _BOOLEANS):
        return int(action)
    raise CommandError(f"an action is an integer menu index, got {action!r}")


class ClusterEnv(gym.Env[Any, np.int64]):
    """Schedule the jobs of an HPC workload on a simulated cluster, one command per step.

    ## Description

    An episode replays a window of a workload set (``hpcgym.workloads``) on a platform of one or
    more clusters, in the exact discrete-event engine of ``hpcgym.sim``. At each decision point
    (a submission, completion, reconfiguration end or evolving request) the agent issues
    commands one step at a time (start a queued job, resize a malleable one, grant an evolving
    request, co-schedule, suspend or resume) until it chooses *advance*, which runs the engine
    to its next decision point. Presets (``hpcgym/Rigid-v0``, ``Malleable-v0``, ``Evolving-v0``,
    ``Shared-v0``, ``MultiCluster-v0``) are registered ids over this one class.

    ## Action Space

    ``Discrete(N)``, a flat menu with a fixed layout (see ``hpcgym.envs.menu``; ``env.unwrapped
    .action_labels()`` names every entry):

    | block | entries | command |
    |---|---|---|
    | advance | 1 (index 0) | run the engine to its next decision point |
    | start | ``Q x len(start_levels)`` | start queue slot q at size level l (req, min, max, fit) |
    | coschedule | ``Q x len(coschedule_levels)`` | start queue slot q at a CPU share level |
    | shrink | ``R x len(shrink_levels)`` | shrink running slot r (one, half, min) |
    | expand | ``R x len(expand_levels)`` | expand running slot r (one, double, fit) |
    | grant | ``R`` | grant the pending request of running slot r |
    | suspend | ``R`` | suspend running slot r |
    | resume | ``U`` | resume suspended slot u |
    | lend | ``R x len(lend_levels)`` | running slot r keeps ``1 - f`` of its CPU need per task |
    | reclaim | ``R`` | running slot r takes back the idle CPU of its nodes, up to its need |

    Opt-in levels (``hpcgym.envs.config``): ``cut<f>`` shrinks by a share of the size,
    ``spare<f>`` expands by a share of the free nodes, ``<level>@<k>`` starts in cluster k,
    ``ebf`` starts within EASY's reservation for the queue head, ``n<k>`` is exactly ``k`` tasks
    (``n*`` and ``@*`` spell out every size and cluster). ``coschedule_placement="packed"`` puts
    a co-scheduled job on lent CPU before idle nodes.
    Entry ``(slot, level)`` of a block is ``offset + slot * levels + level``. ``action_masks()``
    and ``info["action_mask"]`` (int8) are the same array: 1 exactly where the command is legal.
    Advance is always valid. When advance is chosen but the engine can never move again (jobs
    wait and nothing runs, ``StalledError``), the env issues the first forced command that
    applies (grant, resume, start the earliest queued job, suspend a deadlocked job, reject) and
    advances; these are counted in ``info["forced_commands"]``. An action the mask forbids is a
    no-op costing ``invalid_penalty``, counted in ``info["invalid_actions"]``; it never raises.
    An action that is not an integer (``0.7``, ``"0"``, ``True``) names no entry: ``step``
    raises ``CommandError`` and changes nothing.

    ## Observation Space

    A ``Dict`` of float32 boxes in ``[0, 1]`` (``observation="flat"``: one concatenated box):
    ``cluster (K, 4)``, ``queue (Q, 15)``, ``running (R, 12)``, ``suspended (U, 12)`` (presets
    with suspend), ``time (6,)``; features are listed in ``hpcgym.envs.observations``. The queue
    window is ordered by ``queue_order``: ``fcfs``, ``fits_first`` or ``sjf``.

    ## Rewards

    Dense; a name or a weighted mapping of names from ``bsld``, ``wait``, ``utilization``,
    ``makespan``, ``reconfiguration``, ``killed`` (``hpcgym.envs.rewards``). Over a finished
    episode the rewards sum to minus the weighted episode objective (read from
    ``hpcgym.sim.metrics``), minus the invalid-action penalties. ``info["reward_parts"]``
    holds each term's share.

    ## Starting State

    ``reset(seed=..., options=...)`` picks the episode's jobs with ``self.np_random``: a window
    of ``n_jobs`` jobs at a random start (``episode="window"``) or a freshly generated case
    (``"seeded"``); ``options`` may fix ``start``, ``workload_seed`` and ``n_jobs``, and
    ``window_starts`` restricts the window's start to a list. The engine then runs to the first
    decision point; ``env.unwrapped.episode`` describes the episode (read only).

    ## Episode End

    Terminated when every job has ended (completed, killed at its walltime, or rejected).
    Truncated after ``max_steps`` steps. The last ``info`` carries ``metrics``
    (``sim.result().summary``) and ``objectives`` (each reward term's episode objective).

    ## Arguments

    ``render_mode`` (``"ansi"`` or ``"rgb_array"``) and the fields of
    :class:`hpcgym.envs.config.EnvConfig` as keyword arguments.

    >>> import gymnasium as gym
    >>> import hpcgym
    >>> env = gym.make("hpcgym/Rigid-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs["queue"].shape, info["action_mask"][0]
    ((32, 15), np.int8(1))

    ## Version History

    * v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise SpecError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self._kwargs = dict(kwargs)
        self.config = cfg = EnvConfig.from_kwargs(kwargs)
        if cfg.action not in ACTIONS:
            raise SpecError(f"unknown action encoding {cfg.action!r}; choose from {list(ACTIONS)}")
        if cfg.observation not in OBSERVATIONS:
            raise SpecError(
                f"unknown observation {cfg.observation!r}; choose from {list(OBSERVATIONS)}"
            )
        if cfg.platform is not None:
            sizes = tuple(cfg.platform)
            if cfg.episode == "window":  # a trace that does not fit is refused here, at make
                workload_for(cfg, cfg.workload_seed)
        else:
            w, _ = load_cached(cfg.workload, cfg.workload_seed, cfg.workload_options)
            sizes = tuple(c.nodes for c in w.platform.clusters)
        n_clusters = len(sizes)
        # Opt-in "n*" and "@*" levels, spelled out for this platform.
        self.config = cfg = expand_wildcards(cfg, sizes)
        self.menu = ACTIONS[cfg.action](cfg)
        self.encoder = OBSERVATIONS[cfg.observation](cfg, n_clusters)
        self._n_actions = self.menu.n
        self.action_space: spaces.Space[np.int64] = spaces.Discrete(self.menu.n)
        self.observation_space = self.encoder.space
        self.rewarder = Rewarder(cfg.weights)
        self.reserve: ReserveSelection | None = None
        if cfg.selection == "reserve":
            if n_clusters != 1:
                raise SpecError('selection="reserve" needs a single-cluster platform')
            start_offset = self.menu.blocks["start"][0]
            self.reserve = ReserveSelection(cfg.reserve_backfill, start_offset, sizes[0])
        self.sim: Simulator | None = None
        self._fast: ReserveStep | None = None
        """Reserve mode's compiled step over the episode's objects (set at each reset)."""
        self._actions: list[int] = []
        self._episode: Episode | None = None

    @property
    def dropped_jobs(self) -> int:
        """Jobs left out as never fitting the named platform (``drop_oversized=True``)."""
        seed = self.config.workload_seed if self._episode is None else self._episode.workload_seed
        return dropped_jobs(self.config, seed)

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode (see *Starting State*)."""
        super().reset(seed=seed)
        self._setup(choose_episode(self.config, self.np_random, options))
        return self._observe(), self._info({})

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one menu entry (see *Action Space*)."""
        fast = self._fast
        if fast is not None:
            return fast.step(self, action)
        sim = self.sim
        if sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        a = _action_index(action)
        self._actions.append(a)
        self._steps += 1
        penalty = 0.0
        d = self._decision
        if not 0 <= a < self._n_actions or not d.mask[a]:
            self._invalid += 1
            penalty = self.config.invalid_penalty
        elif a == 0:
            self.cmd.advance()
        elif self.reserve is not None:  # a start entry: commit to that job
            self.reserve.commit(d.queue_rows[a - self.reserve.offset], sim, self.cmd)
        else:
            try:
                self.menu.apply(a, d, self.cmd)
            except CommandError:  # pragma: no cover - masks follow the engine's rules
                self._refused += 1
                penalty = self.config.invalid_penalty
        self._decide()
        d = self._decision
        now = sim.now
        terminated = sim.done
        truncated = not terminated and self._steps >= self._max_steps
        summary = episode_summary(sim) if terminated or truncated else None
        reward, parts = self.rewarder.step(now, summary if terminated else None)
        parts["invalid"] = -penalty
        info = {
            "action_mask": d.mask,
            "invalid_actions": self._invalid,
            "forced_commands": self.cmd.forced,
            "reward_parts": parts,
            "time": now,
        }
        if summary is not None:
            info["metrics"] = summary
            info["objectives"] = self.rewarder.objectives(summary)
        obs = self.encoder.encode(d, now, self.capacity.free, sim.next_submission)
        return obs, reward - penalty, terminated, truncated, info

    @property
    def episode(self) -> Episode | None:
        """The current episode (``None`` before the first reset).

        Its jobs, their static table, the platform, the workload seed and the window's start.
        Read only: the record is frozen, the jobs immutable and the table's arrays not writeable.
        """
        return self._episode

    @property
    def decision(self) -> Decision:
        """The current decision point (``hpcgym.envs.menu.Decision``).

        Its windows (ledger rows), the target of every menu entry and the mask. Read only.
        """
        return self._decision

    def action_masks(self) -> np.ndarray:
        """Legal entries of the menu (int8, the same array as ``info["action_mask"]``)."""
        return self._decision.mask

    def action_labels(self) -> list[str]:
        """A readable name for every action index."""
        return self.menu.labels()

    def render(self) -> Any:
        """``"ansi"``: text; ``"rgb_array"``: a Gantt chart with resize events."""
        if self.sim is None or self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            ids = [self.ledger.jobs[int(r)].spec.id for r in self._decision.queue_rows]
            return render_ansi(self.sim, ids)
        assert self.cmd.log is not None
        return render_gantt(self.sim, self.cmd.log, title=self.gantt_title())

    def gantt_title(self) -> str:
        """The ``rgb_array`` picture's title: the env id, the episode's jobs and its start."""
        sim = self.sim
        assert sim is not None
        origin = min((j.spec.submit for j in sim.jobs.values()), default=0.0)
        name = self.spec.id if self.spec is not None else type(self).__name__
        return (
            f"{name}: {len(sim.jobs)} jobs on {sim.platform.total_nodes} nodes, "
            f"episode from trace time {origin:,.0f} s"
        )

    # ------------------------------------------------------------------ internals
    def _setup(self, episode: Episode) -> None:
        cfg = self.config
        self._episode = episode
        self._actions = []
        sim = Simulator(
            episode.platform, episode.jobs, SimConfig(kill_on_walltime=cfg.kill_on_walltime)
        )
        self.sim = sim
        self.ledger = JobLedger(sim, episode.table)
        self.capacity = Capacity(sim)
        log = GanttLog() if self.render_mode == "rgb_array" else None
        self.cmd = Commander(sim, self.ledger, log)
        t0 = episode.jobs[0].submit if episode.jobs else 0.0
        self.encoder.reset(self.ledger, [c.nodes for c in episode.platform.clusters], t0)
        self.rewarder.reset(self.ledger, sim)
        n = len(episode.jobs)
        self._max_steps = cfg.max_steps if cfg.max_steps is not None else 20 * n + 100
        self._steps = self._invalid = self._refused = 0
        reserve = self.reserve
        if (
            type(reserve) is ReserveSelection
            and isinstance(self.encoder, DictObservation)
            and type(self)._decide is ClusterEnv._decide
        ):
            self._fast = ReserveStep(
                reserve,
                self.menu,
                self.ledger,
                self.capacity,
                sim,
                self.cmd,
                self.encoder,
                self.rewarder,
                cfg.skip_trivial,
                cfg.invalid_penalty,
                _action_index,
            )
        self.cmd.advance()
        self._decide()

    def _decide(self) -> None:
        """Compute the decision point, advancing past those where only "advance" is legal."""
        sim = self.sim
        assert sim is not None
        menu, ledger, cap, skip = self.menu, self.ledger, self.capacity, self.config.skip_trivial
        reserve = self.reserve
        if reserve is not None:
            self._decision: Decision = reserve.settle(menu, ledger, cap, sim, self.cmd, skip)
            return
        advance = self.cmd.advance
        if skip and menu.answers_choice:
            has_choice = menu.has_choice
            while not sim.done and has_choice(ledger, cap) is False:
                advance()
        while True:
            d = menu.decide(ledger, cap)
            if d.choice or not skip or sim.done:
                break
            advance()
        self._decision = d

    def _observe(self) -> Any:
        sim = self.sim
        assert sim is not None
        return self.encoder.encode(self._decision, sim.now, self.capacity.free, sim.next_submission)

    def _info(self, parts: dict[str, float]) -> dict[str, Any]:
        assert self.sim is not None
        return {
            "action_mask": self._decision.mask,
            "invalid_actions": self._invalid,
            "forced_commands": self.cmd.forced,
            "reward_parts": parts,
            "time": self.sim.now,
        }

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """The arguments, the episode's choice and its actions (the engine is deterministic)."""
        ep = self._episode
        return {
            "render_mode": self.render_mode,
            "kwargs": self._kwargs,
            "episode": None if ep is None else (ep.workload_seed, ep.start, len(ep.jobs)),
            "actions": list(self._actions),
            "np_random": self._np_random,
            "np_random_seed": self._np_random_seed,
            "spec": self.spec,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild the env and replay the episode's actions."""
        self.__init__(state["render_mode"], **state["kwargs"])  # type: ignore[misc]
        if state["episode"] is not None:
            seed, start, n = state["episode"]
            opts = {"workload_seed": seed, "start": start, "n_jobs": n}
            self._setup(choose_episode(self.config, np.random.default_rng(0), opts))
            for a in state["actions"]:
                self.step(a)
        self._np_random = state["np_random"]
        self._np_random_seed = state["np_random_seed"]
        self.spec = state["spec"]
