"""Training checkpoints, and resuming from one to the very agent an uninterrupted run gives.

A checkpoint is taken at a rollout boundary: after an update, before the next rollout starts
(an on-policy algorithm cannot be stopped mid-rollout and give the same update: the rollout
buffer would be lost). ``checkpoints/`` then gets, for ``N`` steps done:

* ``agent_<N>_steps.safetensors`` and ``agent_<N>_steps.json``: the policy at that point, a
  saved agent like the final one (``hpcgym evaluate --policy runs/x/checkpoints/agent_N_steps``);
* ``state_<N>_steps.pt``, written last (its presence marks a complete checkpoint): the optimizer's
  state and torch's generator (tensors, read back with ``torch.load(weights_only=True)``, which
  rebuilds tensors and plain containers only), and as JSON the step and update counters, NumPy's
  and Python's global generators, the recent episodes SB3 logs, the last episode starts, the
  run's configuration and where every env is (:meth:`hpcgym.agents.rl.vec.MaskVecEnv.positions`:
  its episode, the actions taken in it, its generators).

Resuming rebuilds the run from its configuration, loads the weights and the optimizer, replays
each env's current episode, restores the generators last, and lets SB3 continue
(``learn(..., reset_num_timesteps=False)``): the remaining rollouts and updates draw the same
numbers as they would have, so the final weights are bit-identical (tested).

Needs an on-policy algorithm (MaskablePPO, PPO, A2C; DQN's replay buffer is not saved) without
gSDE, and the default ``mask`` VecEnv; other runs still save the agent snapshots.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from hpcgym import atomic
from hpcgym.agents.rl.saved import AgentCard, save_agent
from hpcgym.agents.rl.vec import MaskVecEnv
from hpcgym.agents.runrecord import error_line
from hpcgym.errors import SpecError

STATE_FORMAT = "hpcgym-train-state/1"
_STATE = re.compile(r"state_(\d+)_steps\.pt")


def checkpoint_dir(run_dir: Path) -> Path:
    """Where a run's checkpoints are."""
    return run_dir / "checkpoints"


def _mask_vec_env(venv: Any) -> MaskVecEnv | None:
    while not isinstance(venv, MaskVecEnv):
        venv = getattr(venv, "venv", None)
        if venv is None:
            return None
    return venv


def resumable(model: Any, algo: str) -> str | None:
    """Why ``model`` cannot be resumed exactly (``None``: it can)."""
    if algo == "dqn":
        return "DQN's replay buffer is not saved"
    if getattr(model, "use_sde", False):
        return "gSDE's exploration noise is not saved"
    if _mask_vec_env(model.get_env()) is None:
        return "only the default VecEnv (--vec-env mask) records where its envs are"
    return None


def save_checkpoint(model: Any, card: AgentCard, run_dir: Path, config: dict[str, Any]) -> int:
    """Write the checkpoint of ``model`` now (see the module docstring); return its step."""
    import torch

    steps = int(model.num_timesteps)
    folder = checkpoint_dir(run_dir)
    save_agent(model, replace(card, timesteps=steps), folder / f"agent_{steps}_steps")
    venv = _mask_vec_env(model.get_env())
    if venv is None or resumable(model, card.algo) is not None:
        return steps
    np_name, np_key, np_pos, np_gauss, np_cached = np.random.get_state()
    py_version, py_key, py_gauss = random.getstate()
    meta = {
        "format": STATE_FORMAT,
        "num_timesteps": steps,
        "n_updates": int(getattr(model, "_n_updates", 0)),
        "numpy_random": [np_name, [int(v) for v in np_key], np_pos, np_gauss, np_cached],
        "python_random": [py_version, list(py_key), py_gauss],
        "last_episode_starts": [bool(v) for v in model._last_episode_starts],
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "envs": venv.positions(),
        "config": config,
    }
    state = {
        "optimizer": model.policy.optimizer.state_dict(),
        "torch_random": torch.get_rng_state(),
        "meta": json.dumps(meta),
    }
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic.write_bytes(folder / f"state_{steps}_steps.pt", buffer.getvalue())
    return steps


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The state file of the run's last complete checkpoint (``None``: there is none)."""
    folder = checkpoint_dir(run_dir)
    found = []
    for path in folder.glob("state_*_steps.pt") if folder.is_dir() else []:
        m = _STATE.fullmatch(path.name)
        agent = folder / f"agent_{m.group(1)}_steps" if m else None
        if m and agent and agent.with_suffix(".safetensors").is_file():
            found.append((int(m.group(1)), path))
    return max(found)[1] if found else None


def _differences(saved: Any, now: Any, at: str = "") -> list[str]:
    if isinstance(saved, dict) and isinstance(now, dict):
        out = []
        for key in sorted(set(saved) | set(now)):
            out += _differences(saved.get(key), now.get(key), f"{at}.{key}" if at else key)
        return out
    return [] if saved == now else [f"{at}: {saved!r} then, {now!r} now"]


def resume(model: Any, state_path: Path, config: dict[str, Any]) -> int:
    """Put a freshly built ``model`` (and its envs) where the checkpoint was; return its step.

    Raises:
        SpecError: The checkpoint is not one, was taken with another configuration, or its
            weights are damaged (cut short, a tensor of another shape): saying which files to
            remove to resume from the checkpoint before.
    """
    import torch
    from safetensors.torch import load_model

    m = _STATE.fullmatch(state_path.name)
    agent = f"agent_{m.group(1)}_steps" if m else "agent_<N>_steps"
    instead = (
        f"remove {agent}.safetensors, {agent}.json and {state_path.name} from "
        f"{state_path.parent} to resume from the checkpoint before, or start anew with --overwrite"
    )
    try:
        state = torch.load(state_path, weights_only=True)
        meta = json.loads(state["meta"])
    except Exception as e:  # a damaged or foreign file: say which
        raise SpecError(
            f"{state_path}: not a training checkpoint ({error_line(e)}); {instead}"
        ) from None
    if meta.get("format") != STATE_FORMAT:
        raise SpecError(f"{state_path}: format {meta.get('format')!r}, expected {STATE_FORMAT}")
    # JSON has no tuples: compare the configurations as JSON values.
    diff = _differences(meta["config"], json.loads(json.dumps(config)))
    if diff:
        raise SpecError(
            f"{state_path} was taken with another configuration ({'; '.join(diff)}); resume "
            "with the same command, or start a new run (--overwrite or another --out)"
        )
    steps = int(meta["num_timesteps"])
    weights = state_path.with_name(f"agent_{steps}_steps.safetensors")
    try:
        load_model(model.policy, str(weights), device="cpu")
    except Exception as e:  # cut short, or tensors of other shapes: damaged since it was saved
        raise SpecError(
            f"{weights}: the checkpoint's weights are damaged ({error_line(e)}); {instead}"
        ) from None
    model.policy.optimizer.load_state_dict(state["optimizer"])
    venv = _mask_vec_env(model.get_env())
    assert venv is not None  # resumable() was checked before
    model._last_obs = venv.restore(meta["envs"])
    model._last_episode_starts = np.array(meta["last_episode_starts"], dtype=bool)
    model.num_timesteps = steps
    model._n_updates = int(meta["n_updates"])
    model.ep_info_buffer = deque(meta["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(maxlen=model._stats_window_size)
    # The generators last: building the model and replaying the envs drew from them.
    name, key, pos, gauss, cached = meta["numpy_random"]
    np.random.set_state((name, np.array(key, dtype=np.uint32), pos, gauss, cached))
    version, py_key, py_gauss = meta["python_random"]
    random.setstate((version, tuple(py_key), py_gauss))
    torch.set_rng_state(state["torch_random"])
    return steps


class Checkpointer(BaseCallback):
    """Checkpoint at the first rollout boundary at or after every ``every`` steps, and at the end.

    Args:
        every: Steps between checkpoints (rounded up to whole rollouts).
        card: The agent's card (its ``timesteps`` is set per checkpoint).
        run_dir: The run folder.
        config: The run's configuration, recorded to check a resume.
    """

    def __init__(self, every: int, card: AgentCard, run_dir: Path, config: dict[str, Any]) -> None:
        super().__init__(0)
        self.every = every
        self.card = card
        self.run_dir = run_dir
        self.config = config
        self.saved: list[int] = []
        self._due = 0

    def _on_training_start(self) -> None:
        self._due = (self.num_timesteps // self.every + 1) * self.every

    def _maybe_save(self) -> None:
        if self.num_timesteps >= self._due:
            self.saved.append(save_checkpoint(self.model, self.card, self.run_dir, self.config))
            self._due = (self.num_timesteps // self.every + 1) * self.every

    def _on_rollout_start(self) -> None:
        self._maybe_save()  # after the previous update: a boundary a resume can start from

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self._maybe_save()
