"""Rewards relative to a heuristic's schedule of the same episode (``--hp reward_reference=NAME``).

The env's dense reward is minus the change of a running estimate of the episode objective (its
*potential*, :mod:`hpcgym.envs.rewards`). Most of that change comes from the episode itself
(jobs arrive and age whatever the agent does), which the value network cannot foresee: the
advantages PPO estimates are dominated by the workload's noise, not by the action's effect.

:class:`RelativeReward` adds the same potential along a reference scheduler's schedule of the
same jobs (run on the bare engine at ``reset``), evaluated at the env's clock:

    r'(t_k -> t_k+1) = r(t_k -> t_k+1) + Phi_ref(t_k+1) - Phi_ref(t_k)

At the episode's last step ``Phi_ref`` is the reference's own objective, so a finished
episode's shaped return is ``objective(reference) - objective(agent)`` (the potentials are 0 at
the first decision: nothing has waited yet): positive when the agent beats the reference, 0
at every step when it plays the reference's schedule. The added terms depend on the episode and
the clock only, and their sum over every finished episode of the same jobs is the same number,
so the policy that maximizes the shaped return is the one that maximizes the env's.

Supported terms: ``bsld`` and ``wait``, whose potentials between two events are linear in time
and are computed here exactly from the reference's start and end times (the env's ledger gives
the same numbers when the agent plays the reference's schedule; tested).

The wrapper's state is a function of the episode and the actions, so a checkpointed run that
replays its episodes (:meth:`hpcgym.agents.rl.vec.MaskVecEnv.restore`) rebuilds it exactly.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from hpcgym.envs.rewards import REWARDS
from hpcgym.errors import SpecError

SUPPORTED = ("bsld", "wait")
"""Reward terms whose potential along a reference schedule is computed here."""


def check_reference(name: Any, weights: Mapping[str, float]) -> str:
    """``name`` if it is a registered baseline and every reward term is supported.

    Raises:
        SpecError: Otherwise, saying what to choose.
    """
    from hpcgym.baselines import names

    known = names()
    if not isinstance(name, str) or name not in known:
        raise SpecError(
            f"reward_reference {name!r} is not a baseline; choose one of hpcgym.baselines.names() "
            f"(e.g. f1-reserve, sjf-reserve-bf, easy)"
        )
    other = sorted(set(weights) - set(SUPPORTED))
    if other:
        raise SpecError(
            f"reward_reference needs reward terms from {', '.join(SUPPORTED)}; this env's "
            f"reward has {', '.join(other)}"
        )
    return name


class _Curve:
    """``sum_j`` of one term's per-job potential along a fixed schedule, at any time.

    Jobs with submit ``s``, start ``b`` and end ``e`` (``b``, ``e``: NaN if never started):
    ``bsld``: ``(t - s) * c`` while ``s <= t < e`` (``c = 1 / max(work, tau)``), then the job's
    bounded slowdown; ``wait``: ``(t - s) / 3600`` while ``s <= t < b``, then ``(b - s) / 3600``.
    Both are ramps ``(t - x) * c`` switched on at ``x`` and off at ``y``, and a step at ``y``,
    read with prefix sums.
    """

    def __init__(
        self,
        on: np.ndarray,
        off: np.ndarray,
        slope: np.ndarray,
        step_at: np.ndarray,
        step: np.ndarray,
    ) -> None:
        # A ramp on at x with slope c adds c*t - c*x for t >= x; off at y removes c*t - c*x and
        # (bsld) the job's final value is a step at y.
        self._on = _Prefix(on, slope, on * slope)
        self._off = _Prefix(off, slope, on * slope)
        self._step = _Prefix(step_at, step, np.zeros_like(step))

    def __call__(self, t: float) -> float:
        c_on, cx_on = self._on.upto(t)
        c_off, cx_off = self._off.upto(t)
        steps, _ = self._step.upto(t)
        return (c_on - c_off) * t - (cx_on - cx_off) + steps


class _Prefix:
    """Prefix sums of two columns over keys sorted ascending (NaN keys dropped)."""

    def __init__(self, keys: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        keep = ~np.isnan(keys)
        order = np.argsort(keys[keep], kind="stable")
        self.keys: list[float] = keys[keep][order].tolist()
        self.a: list[float] = [0.0, *np.cumsum(a[keep][order]).tolist()]
        self.b: list[float] = [0.0, *np.cumsum(b[keep][order]).tolist()]

    def upto(self, t: float) -> tuple[float, float]:
        """The sums over keys ``<= t``."""
        i = bisect.bisect_right(self.keys, t)
        return self.a[i], self.b[i]


def reference_curves(
    name: str, episode: Any, kill_on_walltime: bool, tau: float, weights: Mapping[str, float]
) -> tuple[dict[str, _Curve], dict[str, float], int]:
    """Run baseline ``name`` on ``episode``'s jobs; each term's potential curve and objective.

    The baseline runs in its own setting (``BaseScheduler.setting``), as in the benchmark.
    Returns the curves (sums over jobs, not yet divided by the number of jobs), the reference's
    objective per term (as the env's rewarder reads it from the summary) and the number of jobs.
    """
    from hpcgym.baselines import make
    from hpcgym.sim import SimConfig

    result = make(name).simulate(
        episode.platform, episode.jobs, SimConfig(kill_on_walltime=kill_on_walltime, bsld_tau=tau)
    )
    cols = result.columns
    s, b, e = cols["submit"], cols["start"], cols["end"]
    n = len(s)
    on = np.where(np.isnan(b), np.nan, s)  # a rejected job never counts (as in the ledger)
    curves: dict[str, _Curve] = {}
    for term in weights:
        if term == "bsld":
            run = e - b
            final = np.maximum(1.0, (e - s) / np.maximum(run, tau))
            c = 1.0 / np.maximum(cols["work"], tau)
            curves[term] = _Curve(on, e, c, e, np.nan_to_num(final))
        else:  # wait, in hours as the env's term
            ones = np.full(n, 1.0 / 3600.0)
            curves[term] = _Curve(on, b, ones, b, np.nan_to_num((b - s) / 3600.0))
    objectives = {term: REWARDS[term]().objective(result.summary) for term in weights}
    return curves, objectives, n


class RelativeReward(gym.Wrapper[Any, Any, Any, Any]):
    """The env's reward plus the change of its potential along ``reference``'s schedule.

    ``info["reference_objectives"]`` (last step of a finished episode): the reference's
    objective per reward term.

    Raises:
        SpecError: ``reference`` is not a baseline name, or the env's reward has a term other
            than ``bsld`` and ``wait``.
    """

    replayable = True
    """Its state follows from the episode and the actions (checkpoints replay them)."""

    def __init__(self, env: gym.Env[Any, Any], reference: str) -> None:
        super().__init__(env)
        u: Any = env.unwrapped
        self.weights: dict[str, float] = dict(u.config.weights)
        self.reference = check_reference(reference, self.weights)
        self._curves: dict[str, _Curve] = {}
        self._objectives: dict[str, float] = {}
        self._n = 1
        self._phi = 0.0

    def _potential(self, t: float) -> float:
        return sum(w * self._curves[k](t) for k, w in self.weights.items()) / self._n

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:  # noqa: D102
        obs, info = self.env.reset(**kwargs)
        u: Any = self.env.unwrapped
        self._curves, self._objectives, n = reference_curves(
            self.reference,
            u.episode,
            u.config.kill_on_walltime,
            u.sim.config.bsld_tau,
            self.weights,
        )
        self._n = max(n, 1)
        self._phi = self._potential(u.sim.now)
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:  # noqa: D102
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated:
            phi = sum(w * self._objectives[k] for k, w in self.weights.items())
            info["reference_objectives"] = dict(self._objectives)
        else:
            phi = self._potential(self.env.unwrapped.sim.now)  # type: ignore[attr-defined]
        shaped = float(reward) + phi - self._phi
        self._phi = phi
        return obs, shaped, terminated, truncated, info
