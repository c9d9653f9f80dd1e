"""Before a ``<baseline>@env`` run: do the preset's windows hold every job the baseline acts on?

Through the env a baseline can only start a job that is in the queue window and resize, grant
or suspend one in the running window (``queue_slots``, ``running_slots``, ``suspended_slots``).
EASY on a 256-job ``Rigid-v0`` episode backfills jobs far down a queue of more than 32, so the
adapter would stop half-way with "outside the window (queue)". :func:`windows_needed` finds, for
one episode, the smallest windows that hold every command: it runs the baseline through the
env with every window as wide as the episode and notes the highest slot each command used. A
job's slot is its position in the env's own order (submission order, or the preset's
``queue_order``) and does not depend on the window's width, so the same commands fit a window
of that size exactly; :func:`check_adapted` refuses before anything runs when a preset's window
is smaller, naming the window it needs. A run that passes still checks every step (the adapter
is strict), so it gives the bare-engine schedule exactly or fails with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from hpcgym.envs.episodes import env_config
from hpcgym.errors import SpecError
from hpcgym.policies import BaselinePolicy

WINDOW_OF_BLOCK = {
    "start": "queue_slots",
    "coschedule": "queue_slots",
    "shrink": "running_slots",
    "expand": "running_slots",
    "grant": "running_slots",
    "suspend": "running_slots",
    "lend": "running_slots",
    "reclaim": "running_slots",
    "resume": "suspended_slots",
}
"""The window each menu block's slots index."""


def windows_needed(
    baseline: str, env_id: str, env_kwargs: dict[str, Any], seed: int
) -> dict[str, int]:
    """The smallest ``queue_slots``/``running_slots``/``suspended_slots`` episode ``seed`` needs.

    Args:
        baseline: A baseline name (without ``@env``).
        env_id: The preset.
        env_kwargs: The scenario's overrides.
        seed: The episode's reset seed.
    """
    policy = BaselinePolicy(baseline, strict=True)
    kwargs = {**env_kwargs, **policy.env_overrides}
    cfg = env_config(env_id, kwargs)
    wide = len(policy_episode_jobs(env_id, kwargs, seed))
    kwargs["queue_slots"] = max(cfg.queue_slots, wide)
    kwargs["running_slots"] = max(cfg.running_slots, wide)
    if cfg.suspend:
        kwargs["suspended_slots"] = max(cfg.suspended_slots, wide)
    env = gym.make(env_id, **kwargs)
    needed = dict.fromkeys(("queue_slots", "running_slots", "suspended_slots"), 0)
    try:
        policy.bind(env)
        blocks = env.unwrapped.menu.blocks  # type: ignore[attr-defined]
        bounds = sorted((off, name, levels) for name, (off, _, levels) in blocks.items())
        offsets = np.array([b[0] for b in bounds])
        _, info = env.reset(seed=seed)
        policy.reset(seed)
        done = False
        while not done:
            action = policy.act(None, info["action_mask"])
            if action:
                off, name, levels = bounds[int(np.searchsorted(offsets, action, "right")) - 1]
                window = WINDOW_OF_BLOCK[name]
                needed[window] = max(needed[window], (action - off) // levels + 1)
            _, _, term, trunc, info = env.step(action)
            done = term or trunc
    finally:
        env.close()
    return needed


def policy_episode_jobs(env_id: str, env_kwargs: dict[str, Any], seed: int) -> list[Any]:
    """The jobs of episode ``seed`` (as the env draws it)."""
    from hpcgym.envs.episodes import episode_for

    return list(episode_for(env_id, env_kwargs, seed).jobs)


def check_adapted(
    runs: Sequence[tuple[str, str, str, dict[str, Any], Sequence[int]]],
) -> None:
    """Refuse ``<baseline>@env`` runs whose preset windows are too small (module doc).

    Args:
        runs: ``(policy, scenario name, env_id, env_kwargs, seeds)`` of each adapted policy.

    Raises:
        SpecError: Naming the policy, scenario, episode seed and the window it needs.
    """
    problems = []
    for policy, scenario, env_id, env_kwargs, seeds in runs:
        baseline = policy.removesuffix("@env")
        cfg = env_config(env_id, env_kwargs)
        have = {
            "queue_slots": cfg.queue_slots,
            "running_slots": cfg.running_slots,
            "suspended_slots": cfg.suspended_slots,
        }
        worst: dict[str, tuple[int, int]] = {}
        for seed in seeds:
            for window, n in windows_needed(baseline, env_id, env_kwargs, seed).items():
                if n > have[window] and n > worst.get(window, (0, 0))[0]:
                    worst[window] = (n, seed)
        for window, (n, seed) in worst.items():
            problems.append(
                f"{policy} on {scenario}: episode seed {seed} needs {window} >= {n} "
                f"({env_id} has {have[window]})"
            )
    if problems:
        raise SpecError(
            "through the env a baseline can only act on jobs inside the preset's windows, so "
            "these runs would not give the baseline's own schedule:\n  "
            + "\n  ".join(problems)
            + "\nRun the baseline by its plain name (the same scheduler on the bare engine), or "
            "widen the window with hpcgym evaluate --env-kwargs "
            '\'{"queue_slots": N, "running_slots": N}\'.'
        )
