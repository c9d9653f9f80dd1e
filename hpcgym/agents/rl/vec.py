"""A lean in-process VecEnv for masked training: masks from the step's info, no copies.

SB3's ``DummyVecEnv`` (with a ``Monitor`` per env) is general, and pays for it on every step:
it deep-copies the whole info list and the observation buffers, and sb3-contrib's MaskablePPO
then asks every env for ``action_masks()`` through ``env_method`` (a wrapper-chain lookup per
env). :class:`MaskVecEnv` does the same work without those costs:

* the masks come with the step: each env's ``info["action_mask"]`` (with the env's own
  ``resize_budget`` applied, when training sets one) is kept, and
  ``env_method("action_masks")`` returns the kept masks without calling into the envs;
* observations are stacked into fresh arrays (the rollout buffer keeps the previous step's
  observation while the next one is produced, so a shared buffer would be overwritten), and the
  info dicts, which the env builds anew at every step, are passed on without a copy;
* episode returns and lengths are counted as ``Monitor`` counts them (``info["episode"]`` with
  ``r``, ``l``, ``t``), so SB3's logger and the metrics callback see the same values.

Seeding is ``DummyVecEnv``'s: env ``i`` is reset with ``seed + i`` at the first reset (and its
action space seeded with ``seed + i``), then continues its own generator; so training through
either VecEnv gives the same agent (tested).
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import SubprocVecEnv
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from hpcgym.errors import WorkerError

MASK_METHOD = "action_masks"


class MaskVecEnv(VecEnv):
    """Envs stepped in turn in this process; masks read from their step infos.

    Args:
        env_fns: One constructor per env (as for ``DummyVecEnv``); each env must put its legal
            entries in ``info["action_mask"]`` at ``reset`` and ``step`` (hpcgym's envs do).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env[Any, Any]]]) -> None:
        self.envs = [fn() for fn in env_fns]
        env = self.envs[0]
        super().__init__(len(self.envs), env.observation_space, env.action_space)
        space = env.observation_space
        subspaces: dict[str | None, spaces.Space[Any]] = {None: space}
        self._keys: list[str] | None = None
        if isinstance(space, spaces.Dict):
            subspaces = {str(k): sp for k, sp in space.spaces.items()}
            self._keys = [str(k) for k in space.spaces]
        self._shapes = {k: (self.num_envs, *(sp.shape or ())) for k, sp in subspaces.items()}
        self._dtypes = {k: sp.dtype for k, sp in subspaces.items()}
        self._masks: list[np.ndarray | None] = [None] * self.num_envs
        self._rewards: list[list[float]] = [[] for _ in self.envs]
        self._t_start = time.time()
        self._actions: np.ndarray = np.zeros(self.num_envs, dtype=np.int64)
        self.metadata = env.metadata

    # ------------------------------------------------------------------ stepping
    def reset(self) -> VecEnvObs:
        """Reset every env (with the seeds and options set since the last reset)."""
        obs = []
        for i, env in enumerate(self.envs):
            options = {"options": self._options[i]} if self._options[i] else {}
            o, info = env.reset(seed=self._seeds[i], **options)
            self.reset_infos[i] = info
            self._masks[i] = info.get("action_mask")
            self._rewards[i] = []
            obs.append(o)
        self._reset_seeds()
        self._reset_options()
        return self._stack(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step every env; reset the finished ones (their last observation in the info)."""
        n = self.num_envs
        obs = []
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict[str, Any]] = []
        for i, env in enumerate(self.envs):
            o, r, terminated, truncated, info = env.step(self._actions[i])
            rewards[i] = r
            ep = self._rewards[i]
            ep.append(float(r))
            done = terminated or truncated
            info["TimeLimit.truncated"] = truncated and not terminated
            if done:
                info["episode"] = {
                    "r": round(sum(ep), 6),
                    "l": len(ep),
                    "t": round(time.time() - self._t_start, 6),
                }
                info["terminal_observation"] = o
                o, self.reset_infos[i] = env.reset()
                self._masks[i] = self.reset_infos[i].get("action_mask")
                self._rewards[i] = []
            else:
                self._masks[i] = info.get("action_mask")
            dones[i] = done
            obs.append(o)
            infos.append(info)
        return self._stack(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The current masks, one row per env."""
        return np.stack(self.env_method(MASK_METHOD))

    def _stack(self, obs: list[Any]) -> VecEnvObs:
        """Fresh arrays, one row per env (rows assigned: cheaper than ``np.stack``)."""
        if self._keys is None:
            flat = np.empty(self._shapes[None], dtype=self._dtypes[None])
            for i, o in enumerate(obs):
                flat[i] = o
            return flat
        out = {}
        for k in self._keys:
            a = np.empty(self._shapes[k], dtype=self._dtypes[k])
            for i, o in enumerate(obs):
                a[i] = o[k]
            out[k] = a
        return out

    # ------------------------------------------------------------------ checkpoints
    def positions(self) -> list[dict[str, Any]]:
        """Where each env is, as JSON values, for :meth:`restore`.

        Its episode (workload seed, first job, number of jobs), the actions taken in it, the
        rewards they earned, and the states of its episode generator and its action space's.
        The engine is deterministic, so these rebuild the env exactly.
        """
        out = []
        for i, env in enumerate(self.envs):
            state = _cluster_env(env).__getstate__()
            ep = state["episode"]
            out.append(
                {
                    "episode": None if ep is None else [int(v) for v in ep],
                    "actions": [int(a) for a in state["actions"]],
                    "rewards": list(self._rewards[i]),
                    "np_random": generator_state(state["np_random"]),
                    "np_random_seed": state["np_random_seed"],
                    "action_space_random": generator_state(env.action_space.np_random),
                }
            )
        return out

    def restore(self, positions: Sequence[dict[str, Any]]) -> VecEnvObs:
        """Put every env where :meth:`positions` found it; return the current observations.

        Each episode is reset with its recorded choice and its actions are replayed; a reward
        that differs from the recorded one means the env has changed since (refused).

        Raises:
            SpecError: Another number of envs, or a replay that does not match.
        """
        from hpcgym.errors import SpecError

        if len(positions) != self.num_envs:
            raise SpecError(f"checkpoint has {len(positions)} envs, this run {self.num_envs}")
        obs = []
        for i, (env, pos) in enumerate(zip(self.envs, positions, strict=True)):
            base = _cluster_env(env)
            if pos["episode"] is None:
                raise SpecError(f"checkpoint: env {i} had not started an episode")
            seed, start, n = pos["episode"]
            o, info = env.reset(options={"workload_seed": seed, "start": start, "n_jobs": n})
            rewards = []
            for a in pos["actions"]:
                o, r, _, _, info = env.step(a)
                rewards.append(float(r))
            if rewards != list(pos["rewards"]):
                raise SpecError(
                    f"checkpoint: replaying env {i}'s episode (workload seed {seed}, first job "
                    f"{start}) earned other rewards than recorded: the env or hpcgym changed"
                )
            base._np_random = make_generator(pos["np_random"])
            base._np_random_seed = pos["np_random_seed"]
            env.action_space.np_random.bit_generator.state = pos["action_space_random"]
            self._masks[i] = info.get("action_mask")
            self._rewards[i] = rewards
            obs.append(o)
        return self._stack(obs)

    # ------------------------------------------------------------------ VecEnv plumbing
    def close(self) -> None:
        """Close every env."""
        for env in self.envs:
            env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's ``render()`` (``rgb_array`` mode)."""
        return [env.render() for env in self.envs]  # type: ignore[misc]

    def _targets(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each env (looked up through its wrappers)."""
        return [self.envs[i].get_wrapper_attr(attr_name) for i in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each env (on its outermost wrapper)."""
        for i in self._targets(indices):
            setattr(self.envs[i], attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each env; ``action_masks`` returns the masks of the last step."""
        targets = self._targets(indices)
        if method_name == MASK_METHOD and not method_args and not method_kwargs:
            masks = [self._masks[i] for i in targets]
            if all(m is not None for m in masks):
                return masks
        return [
            self.envs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs)
            for i in targets
        ]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Whether each env is wrapped by ``wrapper_class``."""
        from stable_baselines3.common.env_util import is_wrapped

        return [is_wrapped(self.envs[i], wrapper_class) for i in self._targets(indices)]


class GuardedSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` (``--vec-env subproc``) whose worker processes cannot hang it.

    SB3's ``close`` sends each worker ``close`` and joins it without a timeout: after a worker
    died it raised ``BrokenPipeError`` and left the other workers running, and a worker that
    does not answer (stopped, stuck) made it wait forever. Here ``close`` waits at most
    ``close_timeout`` seconds for the workers to end, then terminates, and at last kills, the
    ones still there; it never raises. A worker that died while the envs were stepped, reset
    or asked for something (the action masks) is a :class:`~hpcgym.errors.WorkerError`
    naming it, not a bare ``EOFError`` from the pipe.
    """

    close_timeout: float = 5.0
    """Seconds ``close`` waits for the workers' answers and ends before it terminates them."""

    @contextlib.contextmanager
    def _answering(self) -> Iterator[None]:
        try:
            yield
        except (EOFError, ConnectionError):  # ConnectionError: broken pipe, reset by peer
            raise WorkerError(
                f"an env worker process of --vec-env subproc ended ({self._ended()}); its error, "
                "if any, is printed above. Run again; the default --vec-env mask runs the envs "
                "in this process"
            ) from None

    def _ended(self) -> str:
        """Which workers ended, and how."""
        deadline = time.monotonic() + 1.0  # a worker that just died is reaped in a moment
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
        out = []
        for i, process in enumerate(self.processes):
            code = process.exitcode
            if code is not None:
                how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
                out.append(f"env {i}, pid {process.pid}: {how}")
        return "; ".join(out) or "it closed its pipe"

    def step_async(self, actions: np.ndarray) -> None:
        """Send the actions to the workers."""
        with self._answering():
            super().step_async(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """The workers' steps."""
        with self._answering():
            return super().step_wait()

    def reset(self) -> VecEnvObs:
        """Reset every env."""
        with self._answering():
            return super().reset()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each env."""
        with self._answering():
            return super().get_attr(attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each env."""
        with self._answering():
            super().set_attr(attr_name, value, indices)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each env (the action masks, for MaskablePPO)."""
        with self._answering():
            return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Whether each env is wrapped by ``wrapper_class``."""
        with self._answering():
            return super().env_is_wrapped(wrapper_class, indices)

    def close(self) -> None:
        """Ask the workers to end; end those that do not within ``close_timeout`` seconds."""
        if self.closed:
            return
        deadline = time.monotonic() + self.close_timeout
        if self.waiting:  # a step was sent: its answers come first
            for remote in self.remotes:
                with contextlib.suppress(EOFError, OSError):
                    if remote.poll(max(0.0, deadline - time.monotonic())):
                        remote.recv()
            self.waiting = False
        for remote in self.remotes:
            with contextlib.suppress(OSError):  # a dead worker's pipe is broken
                remote.send(("close", None))
        end_processes(self.processes, deadline)
        for remote in self.remotes:
            remote.close()
        self.closed = True


def end_processes(processes: Sequence[Any], deadline: float, grace: float = 2.0) -> None:
    """Wait for ``processes`` until ``deadline`` (``time.monotonic``); then end them.

    Those still running are terminated (SIGTERM) and given ``grace`` seconds, then killed
    (SIGKILL, which a stopped process cannot ignore either) and reaped.
    """
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for signal_them in ("terminate", "kill"):
        alive = [p for p in processes if p.is_alive()]
        for process in alive:
            getattr(process, signal_them)()
        for process in alive:
            process.join(grace)


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """A NumPy generator's state as JSON values."""
    return dict(rng.bit_generator.state)


def make_generator(state: dict[str, Any]) -> np.random.Generator:
    """A NumPy generator in ``state`` (of :func:`generator_state`)."""
    name = state["bit_generator"]
    if name not in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
        raise ValueError(f"unknown bit generator {name!r}")
    bits = getattr(np.random, name)()
    bits.state = state
    return np.random.Generator(bits)


def _cluster_env(env: gym.Env[Any, Any]) -> Any:
    """The hpcgym env itself.

    Wrappers with a state of their own cannot be checkpointed, unless that state follows from
    the episode and the actions (``replayable = True``, as
    :class:`hpcgym.agents.rl.reference.RelativeReward`): :meth:`MaskVecEnv.restore` replays them.
    """
    from hpcgym.errors import SpecError

    layer = env
    while layer is not layer.unwrapped:
        if not getattr(type(layer), "replayable", False):
            raise SpecError(f"checkpoints need bare hpcgym envs in the VecEnv, got {env}")
        layer = layer.env  # type: ignore[attr-defined]
    return env.unwrapped


def make_mask_vec_env(
    env_id: str,
    n_envs: int,
    seed: int,
    env_kwargs: dict[str, Any],
    resize_budget: int | None = None,
    wrapper_class: Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]] | None = None,
) -> MaskVecEnv:
    """``make_vec_env``'s seeding on a :class:`MaskVecEnv` (no ``Monitor``).

    No wrapper but ``wrapper_class`` (as ``make_vec_env``'s), e.g.
    :class:`~hpcgym.agents.rl.reference.RelativeReward`.

    ``gym.make`` adds two wrappers that only act before the first step: the passive checker
    (checks the first reset and step; the env's own tests check its API) and order
    enforcement (``ClusterEnv.step`` itself refuses to run before a reset). Both are left out,
    so each step calls the env directly.
    """
    spec = dataclasses.replace(gym.spec(env_id), order_enforce=False)
    # The budget is applied by the env where it computes the resize targets: the same masks
    # as the guard's (``tests/agents``), without a second pass over every mask.
    kwargs = dict(env_kwargs)
    if resize_budget is not None:
        kwargs["resize_budget"] = resize_budget

    def make(rank: int) -> Callable[[], gym.Env[Any, Any]]:
        def build() -> gym.Env[Any, Any]:
            env = gym.make(spec, disable_env_checker=True, **kwargs)
            env.action_space.seed(seed + rank)
            return env if wrapper_class is None else wrapper_class(env)

        return build

    venv = MaskVecEnv([make(i) for i in range(n_envs)])
    venv.seed(seed)
    return venv
