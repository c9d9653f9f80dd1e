"""One episode of one policy on one preset and seed: the unit of evaluation and benchmarking.

Two paths, the same jobs:

* **env path** (``advance``, ``random``, saved agents, ``<baseline>@env`` through the adapter of
  ``hpcgym.policies.adapted``): ``gym.make(env_id)``, ``reset(seed=seed)``, one ``step`` per
  action with the mask always applied; the metrics are the final ``info["metrics"]``
  (``hpcgym.sim.metrics``).
* **engine path** (baselines by their plain name, the fast path): the baseline runs on the bare
  engine over the episode the env draws for that seed. :func:`episode_for` rebuilds
  it exactly as ``ClusterEnv.reset`` does (``choose_episode`` with the generator Gymnasium seeds
  from ``seed``), with the env's ``kill_on_walltime`` passed through the baseline's own
  ``setting`` (a scheduler whose paper fixes part of the world, such as MEBF's "no walltime
  kills", gets it); the metrics are ``sim.result().summary``. Every outcome records the
  ``kill_on_walltime`` it ran with, so a world that differs from the env's is visible; the
  malleable scenarios turn kills off for everyone.

Both record utilization and queue length at every decision point they see, and on request a
Gantt chart with resize events (``hpcgym.envs.render``).

**Unfinished jobs are counted** (:func:`count_unfinished`). An env episode cut at its step limit
(``truncated``) leaves jobs queued, running or not yet submitted. Every outcome says how many
(``unfinished``, ``unstarted``) and when the episode stopped (``episode_end``); a job that never
started gets the wait it had by then (``episode_end - submit``, 0 for one not yet submitted), so
``mean_wait`` and ``max_wait`` include it instead of leaving it out. The other per-job means
(``mean_bsld``, ...) cover the jobs that started; a truncated episode stays flagged, and the
leaderboards rank a policy with truncated episodes after every policy without them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from hpcgym.baselines import make as make_baseline
from hpcgym.bench.policy_names import ON_ENV, make_env_policy, policy_kind
from hpcgym.cli_checks import read_text_file
from hpcgym.envs.episodes import env_config, episode_for
from hpcgym.envs.render import GanttLog, render_gantt
from hpcgym.sim import JobState, SimConfig, Simulator
from hpcgym.sim.engine import EngineCore


@dataclass(frozen=True)
class EpisodeOutcome:
    """What one episode produced."""

    summary: dict[str, float]
    jobs: pd.DataFrame
    timeline: pd.DataFrame
    """``time``, ``busy_nodes``, ``utilization`` (busy / total nodes), ``queued``."""
    path: str
    """``"env"`` or ``"engine"``."""
    steps: int
    truncated: bool
    kill_on_walltime: bool = True
    invalid_actions: int = 0
    gantt: np.ndarray | None = None
    counts: dict[str, float] = field(default_factory=dict)
    """``unfinished``, ``unstarted`` and ``episode_end`` (:func:`count_unfinished`)."""


_ENDED = ("completed", "killed", "rejected")


def count_unfinished(
    summary: dict[str, float], jobs: pd.DataFrame, now: float
) -> tuple[dict[str, float], pd.DataFrame, dict[str, float]]:
    """``summary`` and ``jobs`` with the jobs unfinished at ``now`` counted (module doc).

    Returns the summary, the jobs and the counts ``unfinished``, ``unstarted`` and
    ``episode_end``. When some job never started (and was not rejected), its ``wait`` becomes
    ``max(0, now - submit)`` and ``mean_wait``/``max_wait`` are recomputed over every job with a
    wait; otherwise summary and jobs are returned as they were.
    """
    state = jobs["state"].astype(str)
    ended = state.isin(_ENDED)
    unstarted = jobs["start"].isna() & (state != "rejected")
    counts = {
        "unfinished": float((~ended).sum()),
        "unstarted": float(unstarted.sum()),
        "episode_end": float(now),
    }
    out = dict(summary)
    if not unstarted.any():
        return out, jobs, counts
    jobs = jobs.copy()
    jobs.loc[unstarted, "wait"] = (now - jobs.loc[unstarted, "submit"]).clip(lower=0.0)
    waits = jobs["wait"].to_numpy(dtype=float)
    waits = waits[np.isfinite(waits)]
    out["mean_wait"] = float(waits.mean()) if waits.size else 0.0
    out["max_wait"] = float(waits.max()) if waits.size else 0.0
    return out, jobs, counts


class _Recorder:
    """Utilization and queue samples, and (optionally) the Gantt log of an engine run."""

    def __init__(self, sim: EngineCore, gantt: bool) -> None:
        self.sim = sim
        self.rows: list[tuple[float, int, int]] = []
        self.log = GanttLog() if gantt else None
        self._sizes: dict[int, int] = {}

    def sample(self) -> None:
        sim = self.sim
        busy = sim.platform.total_nodes - sim.free_nodes()
        row = (float(sim.now), int(busy), len(sim.queue))
        if self.rows and self.rows[-1][0] == row[0]:
            self.rows[-1] = row
        else:
            self.rows.append(row)

    def track(self) -> None:
        """Update the Gantt log from the running set (engine path only)."""
        log, sim = self.log, self.sim
        if log is None:
            return
        now = sim.now
        for jid in [j for j in self._sizes if j not in sim.running]:
            job = sim.jobs[jid]
            log.touch(job, now, "suspend" if job.state is JobState.SUSPENDED else "")
            del self._sizes[jid]
        for jid, job in sim.running.items():
            before = self._sizes.get(jid)
            what = ""
            if before is None:
                what = "resume" if job.preemptions and job.start_time < now else "start"
            elif job.size > before:
                what = "expand"
            elif job.size < before:
                what = "shrink"
            log.touch(job, now, what)
            self._sizes[jid] = job.size

    def timeline(self) -> pd.DataFrame:
        total = self.sim.platform.total_nodes
        df = pd.DataFrame(self.rows, columns=["time", "busy_nodes", "queued"])
        df.insert(2, "utilization", df["busy_nodes"] / total)
        return df


def forced_kill_rule(policy: str) -> bool | None:
    """The walltime kill rule a baseline's own setting imposes on the engine path, or ``None``.

    ``False`` for a baseline whose paper runs without kills (MEBF), whatever the env says, on
    the engine or through the env (``mebf@env``, whose adapter sets the same), and for a saved
    agent whose card says it trained without them (it plays with its card's setting); ``None``
    for every other policy (it runs with the env's rule).
    """
    kind = policy_kind(policy)
    if kind == "agent":  # a network trained without kills plays without them (its card says)
        from hpcgym.agents.rl.saved import AgentCard, model_paths

        card = model_paths(policy)[1]
        if card.is_file():
            kwargs = AgentCard.from_json(
                read_text_file(card, "an agent card"), str(card)
            ).env_kwargs
            return False if kwargs.get("kill_on_walltime") is False else None
        return None
    if kind not in ("baseline", "adapted"):
        return None
    name = policy if kind == "baseline" else policy[: -len(ON_ENV)]
    _, config = make_baseline(name).setting([], SimConfig(kill_on_walltime=True))
    return None if config.kill_on_walltime else False


def _run_engine(
    name: str, env_id: str, env_kwargs: dict[str, Any], seed: int, gantt: str | None
) -> EpisodeOutcome:
    ep = episode_for(env_id, env_kwargs, seed)
    cfg = env_config(env_id, env_kwargs)
    if policy_kind(name) == "baseline":
        scheduler = make_baseline(name)
    else:
        scheduler = score_scheduler(name, env_id, env_kwargs)
    jobs, config = scheduler.setting(ep.jobs, SimConfig(kill_on_walltime=cfg.kill_on_walltime))
    sim = Simulator(ep.platform, jobs, config)
    scheduler.reset()
    rec = _Recorder(sim, gantt is not None)
    steps = 0
    while sim.advance():
        rec.track()
        scheduler.schedule(sim)
        rec.track()
        rec.sample()
        steps += 1
    rec.track()
    rec.sample()
    result = sim.result()
    image = render_gantt(sim, rec.log, title=gantt) if rec.log is not None else None
    summary, table, counts = count_unfinished(result.summary, result.jobs, sim.now)
    return EpisodeOutcome(
        summary,
        table,
        rec.timeline(),
        "engine",
        steps,
        False,
        config.kill_on_walltime,
        0,
        image,
        counts,
    )


def score_scheduler(path: str, env_id: str, env_kwargs: dict[str, Any]) -> Any:
    """The scheduler of the engine agent at ``path``, checked to suit the episode's preset.

    Raises:
        SpecError: The agent was trained in another mode (reserve with or without
            backfilling, or EASY order) than the preset's, or for another preset.
    """
    from hpcgym.agents.engine.cards import load_engine_card

    return load_engine_card(path).scheduler_for(env_id, env_kwargs, path)


def _run_env(
    name: str, env_id: str, env_kwargs: dict[str, Any], seed: int, gantt: str | None
) -> EpisodeOutcome:
    policy = make_env_policy(name)
    kwargs = {**env_kwargs, **policy.env_overrides}
    env = gym.make(env_id, render_mode="rgb_array" if gantt is not None else None, **kwargs)
    try:
        policy.bind(env)
        obs, info = env.reset(seed=seed)
        policy.reset(seed)
        sim = env.unwrapped.sim  # type: ignore[attr-defined]
        rec = _Recorder(sim, gantt=False)
        rec.sample()
        steps = 0
        while True:
            mask = info["action_mask"]
            obs, _, terminated, truncated, info = env.step(policy.act(obs, mask))
            rec.sample()
            steps += 1
            if terminated or truncated:
                break
        result = sim.result()
        log = env.unwrapped.cmd.log  # type: ignore[attr-defined]
        image = render_gantt(sim, log, title=gantt) if gantt is not None else None
    finally:
        env.close()
    summary, jobs, counts = count_unfinished(dict(info["metrics"]), result.jobs, sim.now)
    return EpisodeOutcome(
        summary,
        jobs,
        rec.timeline(),
        "env",
        steps,
        bool(truncated),
        bool(env.unwrapped.config.kill_on_walltime),  # type: ignore[attr-defined]
        int(info["invalid_actions"]),
        image,
        counts,
    )


def run_episode(
    policy: str,
    env_id: str,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
    *,
    gantt: bool | str = False,
) -> EpisodeOutcome:
    """Run ``policy`` (a :mod:`~hpcgym.bench.policy_names` name) on episode ``seed`` of ``env_id``.

    Args:
        policy: ``advance``, ``random``, a baseline name, a saved agent's path or a score
            agent's (run on the engine, as a baseline).
        env_id: A registered id (``hpcgym/Rigid-v0``, ...).
        seed: The env's reset seed; it fixes the episode's jobs.
        env_kwargs: Overrides of the preset's arguments (``n_jobs``, ...).
        gantt: Also draw the Gantt chart (an RGB array); a string is its title (default: the
            policy, preset and seed).
    """
    kwargs = dict(env_kwargs or {})
    title = None
    if gantt:
        title = gantt if isinstance(gantt, str) else f"{policy} on {env_id}, episode seed {seed}"
    if policy_kind(policy) in ("baseline", "score"):
        return _run_engine(policy, env_id, kwargs, seed, title)
    return _run_env(policy, env_id, kwargs, seed, title)
