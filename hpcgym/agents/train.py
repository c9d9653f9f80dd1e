"""``hpcgym train``: MaskablePPO (or PPO, A2C, DQN) on a preset, seeded, with checkpoints.

Hyperparameters come from ``hpcgym/agents/hyperparams/<algo>.yml`` (rl-zoo3's layout, keyed by
env id, ``default`` otherwise); the command line overrides the step budget, the number of envs
and any key (``--hp n_steps=256``). A run folder holds the agent (``agent.zip`` and its card
``agent.json``, see :mod:`hpcgym.agents.saved`), ``checkpoints/``, ``episodes.csv`` (one row per
training episode, :class:`~hpcgym.agents.callbacks.EpisodeMetricsCallback`), ``tb/`` when
tensorboard is importable, the resolved ``hyperparams.json`` and ``timing.json`` (time inside
the VecEnv against the learner's, in wall and CPU seconds, and the updates' CPU seconds; see
:class:`~hpcgym.agents.callbacks.TimedVecEnv`).

The envs run in this process in a :class:`~hpcgym.agents.vec.MaskVecEnv` (the action masks
come with the step's info; the same agent as SB3's ``DummyVecEnv``, which ``--vec-env dummy``
selects; ``--vec-env subproc`` runs them in worker processes, much slower here: the steps are
short and every one is a round trip).

CPU only; torch runs on ``threads`` threads (default 1: the networks are small and the envs
share the process, so on 2 cores more intra-op threads only contend).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from hpcgym.agents.saved import ALGORITHMS, AgentCard, algorithm_class, save_agent
from hpcgym.cli_checks import at_least, env_kwargs_arg, known_env_id, writable_folder
from hpcgym.errors import SpecError

HYPERPARAMS = Path(__file__).with_name("hyperparams")
_OURS = ("n_envs", "n_timesteps", "policy", "policy_kwargs", "env_kwargs", "resize_budget")


def load_hyperparams(algo: str, env_id: str, path: str | Path | None = None) -> dict[str, Any]:
    """The hyperparameters of ``algo`` for ``env_id`` (its entry, else ``default``)."""
    try:
        import yaml
    except ImportError as e:  # pragma: no cover - pyyaml ships with the rl extra
        raise SpecError("hpcgym train reads YAML hyperparameters: pip install pyyaml") from e
    file = Path(path) if path else HYPERPARAMS / f"{algo}.yml"
    if not file.is_file():
        raise SpecError(f"no hyperparameter file {file}; algorithms: {', '.join(ALGORITHMS)}")
    table = yaml.safe_load(file.read_text()) or {}
    if env_id not in table and "default" not in table:
        raise SpecError(f"{file} has no entry for {env_id} and no default")
    entry: dict[str, Any] = table[env_id] if env_id in table else table["default"]
    return dict(entry)


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@dataclass(frozen=True)
class TrainConfig:
    """One training run (command-line values; ``None`` keeps the YAML's)."""

    env_id: str = "hpcgym/Rigid-v0"
    algo: str = "maskable_ppo"
    seed: int = 0
    timesteps: int | None = None
    n_envs: int | None = None
    policy: str | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    hyperparams_file: str | None = None
    out: str | None = None
    checkpoint_every: int = 0
    subproc: bool = False
    """Shorthand for ``vec_env="subproc"``."""
    vec_env: str = "mask"
    """``mask`` (:class:`~hpcgym.agents.vec.MaskVecEnv`), ``dummy`` or ``subproc`` (SB3's)."""
    threads: int = 1
    progress: bool = False
    verbose: int = 0
    pretrain: str | None = None
    """Clone this expert first (``hpcgym.agents.imitation.expert_names``); MaskablePPO only."""
    pretrain_episodes: int = 20
    pretrain_epochs: int = 10

    def run_dir(self) -> Path:
        """The run folder (``runs/<algo>_<preset>_s<seed>`` unless ``out`` is given)."""
        if self.out:
            return Path(self.out)
        return Path("runs") / f"{self.algo}_{self.env_id.split('/')[-1]}_s{self.seed}"


@dataclass(frozen=True)
class TrainResult:
    """Where the agent is and how the time went."""

    agent: Path
    run_dir: Path
    timesteps: int
    episodes: int
    seconds: float
    env_seconds: float
    cpu_seconds: float = 0.0
    env_cpu_seconds: float = 0.0
    update_cpu_seconds: float = 0.0

    @property
    def learner_seconds(self) -> float:
        """Wall seconds outside the envs: inference, updates, callbacks."""
        return self.seconds - self.env_seconds


def build(cfg: TrainConfig) -> tuple[Any, Any, dict[str, Any], AgentCard]:
    """The model, its (timed) VecEnv, the resolved hyperparameters and the agent card."""
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from hpcgym.agents.callbacks import TimedVecEnv
    from hpcgym.agents.policies import JobScoringPolicy, menu_blocks
    from hpcgym.agents.vec import make_mask_vec_env

    vec_kind = "subproc" if cfg.subproc else cfg.vec_env
    if vec_kind not in VEC_ENVS:
        raise SpecError(f"unknown VecEnv {vec_kind!r}; choose from {', '.join(VEC_ENVS)}")

    torch.set_num_threads(max(1, cfg.threads))
    hp = load_hyperparams(cfg.algo, cfg.env_id, cfg.hyperparams_file)
    hp.update(cfg.overrides)
    if cfg.timesteps is not None:
        hp["n_timesteps"] = cfg.timesteps
    if cfg.n_envs is not None:
        hp["n_envs"] = cfg.n_envs
    if cfg.policy is not None:
        hp["policy"] = cfg.policy
    env_kwargs = {**dict(hp.get("env_kwargs") or {}), **cfg.env_kwargs}
    hp["env_kwargs"] = env_kwargs
    policy: Any = hp.get("policy", "MultiInputPolicy")
    policy_kwargs = dict(hp.get("policy_kwargs") or {})
    if policy == "JobScoringPolicy":
        if cfg.algo != "maskable_ppo":
            raise SpecError("JobScoringPolicy is a MaskablePPO policy; use --algo maskable_ppo")
        probe = gym.make(cfg.env_id, **env_kwargs)
        fx = dict(policy_kwargs.get("features_extractor_kwargs") or {})
        fx["blocks"] = menu_blocks(probe)
        policy_kwargs["features_extractor_kwargs"] = fx
        probe.close()
        policy = JobScoringPolicy
    budget = hp.get("resize_budget")
    if budget is not None and cfg.algo != "maskable_ppo":
        raise SpecError("resize_budget narrows action masks: only maskable_ppo uses them")
    module = cfg.env_id.split("/")[0]
    n_envs = int(hp.get("n_envs", 1))
    limit = None if budget is None else int(budget)
    if vec_kind == "mask":
        base: Any = make_mask_vec_env(cfg.env_id, n_envs, cfg.seed, env_kwargs, limit)
    else:
        # The env applies the budget (``EnvConfig.resize_budget``), as in the default VecEnv.
        budgeted = env_kwargs if limit is None else {**env_kwargs, "resize_budget": limit}
        base = make_vec_env(
            f"{module}:{cfg.env_id}" if module == "hpcgym" else cfg.env_id,
            n_envs=n_envs,
            seed=cfg.seed,
            env_kwargs=budgeted,
            vec_env_cls=SubprocVecEnv if vec_kind == "subproc" else DummyVecEnv,
        )
    venv = TimedVecEnv(base)
    run_dir = cfg.run_dir()
    tensorboard = importlib.util.find_spec("tensorboard") is not None
    algo_kwargs = {k: v for k, v in hp.items() if k not in _OURS}
    try:
        model = algorithm_class(cfg.algo)(
            policy,
            venv,
            seed=cfg.seed,
            device="cpu",
            verbose=cfg.verbose,
            policy_kwargs=policy_kwargs or None,
            tensorboard_log=str(run_dir / "tb") if tensorboard else None,
            **algo_kwargs,
        )
    except TypeError as e:  # an unknown hyperparameter name
        raise SpecError(f"{cfg.algo} hyperparameters for {cfg.env_id}: {e}") from None
    card = AgentCard(
        cfg.algo,
        cfg.env_id,
        env_kwargs,
        cfg.seed,
        int(hp["n_timesteps"]),
        None if budget is None else int(budget),
    )
    return model, venv, hp, card


VEC_ENVS = ("mask", "dummy", "subproc")
"""VecEnv choices of ``hpcgym train --vec-env``."""

DEMO_SEEDS = 10_000
"""Demonstration episodes use reset seeds from here (away from training and bench seeds)."""


def pretrain(model: Any, cfg: TrainConfig, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Behaviour-clone ``cfg.pretrain`` into ``model``; return what was done (for the record)."""
    from hpcgym.agents.imitation import clone, demonstrate

    if cfg.pretrain is None:
        raise SpecError("pretrain() needs TrainConfig.pretrain (an expert name)")
    if cfg.algo != "maskable_ppo":
        raise SpecError("--pretrain clones into a masked policy: use --algo maskable_ppo")
    t0 = time.perf_counter()
    seeds = list(range(DEMO_SEEDS, DEMO_SEEDS + cfg.pretrain_episodes))
    demos = demonstrate(cfg.pretrain, cfg.env_id, env_kwargs, seeds)
    losses = clone(model, demos, cfg.pretrain_epochs, seed=cfg.seed)
    return {
        "expert": cfg.pretrain,
        "episodes": cfg.pretrain_episodes,
        "samples": len(demos.actions),
        "epochs": cfg.pretrain_epochs,
        "loss_first": round(losses[0], 4),
        "loss_last": round(losses[-1], 4),
        "inexpressible": dict(demos.inexpressible),
        "approximated": demos.approximated,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def train(cfg: TrainConfig) -> TrainResult:
    """Train, checkpoint, log and save; see the module docstring for what lands where."""
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from hpcgym.agents.callbacks import EpisodeMetricsCallback, UpdateTimer

    model, venv, hp, card = build(cfg)
    run_dir = cfg.run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    if cfg.pretrain:
        hp["pretrain"] = pretrain(model, cfg, hp["env_kwargs"])
    (run_dir / "hyperparams.json").write_text(json.dumps(hp, indent=2, sort_keys=True) + "\n")
    metrics = EpisodeMetricsCallback(run_dir / "episodes.csv")
    updates = UpdateTimer()
    callbacks: list[Any] = [metrics, updates]
    if cfg.checkpoint_every > 0:
        every = max(1, cfg.checkpoint_every // venv.num_envs)
        callbacks.append(CheckpointCallback(every, str(run_dir / "checkpoints"), "agent"))
    progress = cfg.progress and all(
        importlib.util.find_spec(m) is not None for m in ("tqdm", "rich")
    )
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        # SB3's bar is tqdm.rich, which warns on every run that it is experimental.
        warnings.filterwarnings("ignore", message="rich is experimental")
        model.learn(int(hp["n_timesteps"]), callback=CallbackList(callbacks), progress_bar=progress)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    agent = save_agent(model, card, run_dir / "agent")
    for ckpt in sorted((run_dir / "checkpoints").glob("*.zip")):
        ckpt.with_suffix(".json").write_text(card.to_json() + "\n")
    venv.close()
    result = TrainResult(
        agent,
        run_dir,
        model.num_timesteps,
        metrics.episodes,
        seconds,
        venv.env_seconds,
        cpu,
        venv.env_cpu_seconds,
        updates.cpu_seconds,
    )
    timing = {
        "timesteps": result.timesteps,
        "episodes": result.episodes,
        "vec_env": "subproc" if cfg.subproc else cfg.vec_env,
        "seconds": round(seconds, 3),
        "env_seconds": round(result.env_seconds, 3),
        "learner_seconds": round(result.learner_seconds, 3),
        "env_fraction": round(result.env_seconds / seconds, 4) if seconds > 0 else 0.0,
        "first_reset_seconds": round(venv.first_reset_seconds or 0.0, 3),
        "cpu_seconds": round(cpu, 3),
        "env_cpu_seconds": round(result.env_cpu_seconds, 3),
        "update_cpu_seconds": round(result.update_cpu_seconds, 3),
        "env_cpu_fraction": round(result.env_cpu_seconds / cpu, 4) if cpu > 0 else 0.0,
        "threads": cfg.threads,
    }
    (run_dir / "timing.json").write_text(json.dumps(timing, indent=2) + "\n")
    return result


def run(args: argparse.Namespace) -> int:
    """The ``train`` command."""
    known_env_id(args.env)
    at_least("--timesteps", args.timesteps, 1)
    at_least("--n-envs", args.n_envs, 1)
    env_kwargs = env_kwargs_arg(args.env_kwargs)
    overrides = {}
    for item in args.hp or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError(f"--hp takes key=value, got {item!r}")
        overrides[key] = _parse_value(value)
    cfg = TrainConfig(
        env_id=args.env,
        algo=args.algo,
        seed=args.seed,
        timesteps=args.timesteps,
        n_envs=args.n_envs,
        policy=args.policy,
        env_kwargs=env_kwargs,
        overrides=overrides,
        hyperparams_file=args.hyperparams,
        out=args.out,
        checkpoint_every=args.checkpoint_every,
        subproc=args.subproc,
        vec_env=args.vec_env,
        threads=args.threads,
        progress=not args.no_progress,
        verbose=args.verbose,
        pretrain=args.pretrain,
        pretrain_episodes=args.pretrain_episodes,
        pretrain_epochs=args.pretrain_epochs,
    )
    writable_folder(cfg.run_dir())
    r = train(cfg)
    print(
        f"{cfg.algo} on {cfg.env_id} (seed {cfg.seed}): {r.timesteps} steps, {r.episodes} "
        f"episodes in {r.seconds:.1f} s (env {r.env_seconds:.1f} s, learner "
        f"{r.learner_seconds:.1f} s; CPU {r.cpu_seconds:.1f} s, env "
        f"{r.env_cpu_seconds / max(r.cpu_seconds, 1e-9):.0%})"
    )
    print(f"agent: {r.agent}  (evaluate: hpcgym evaluate --env {cfg.env_id} --policy {r.agent})")
    print(f"run folder: {r.run_dir.resolve()}")
    return 0


def expert_name(text: str) -> str:
    """``--pretrain``'s value: a name of :func:`hpcgym.agents.imitation.expert_names`."""
    from hpcgym.agents.imitation import expert_names

    names = expert_names()
    if text not in names:
        raise argparse.ArgumentTypeError(f"unknown expert {text!r}; choose from {', '.join(names)}")
    return text


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "train",
        help="train MaskablePPO (or PPO, A2C, DQN) on a preset",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--env", default="hpcgym/Rigid-v0", help="registered env id")
    p.add_argument("--algo", choices=ALGORITHMS, default="maskable_ppo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timesteps", type=int, default=None, help="override n_timesteps")
    p.add_argument("--n-envs", type=int, default=None, help="override n_envs")
    p.add_argument("--policy", default=None, help="JobScoringPolicy, MultiInputPolicy, MlpPolicy")
    p.add_argument("--env-kwargs", default=None, help="JSON object of preset overrides")
    p.add_argument("--hp", action="append", help="hyperparameter override key=value (JSON value)")
    p.add_argument("--hyperparams", default=None, help="YAML file instead of the shipped one")
    p.add_argument("--out", default=None, help="run folder (default runs/<algo>_<preset>_s<seed>)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints")
    p.add_argument(
        "--vec-env",
        choices=VEC_ENVS,
        default="mask",
        help="mask: in-process, masks from the step info (default); dummy, subproc: SB3's",
    )
    p.add_argument("--subproc", action="store_true", help="same as --vec-env subproc")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose", type=int, default=0)
    p.add_argument(
        "--pretrain",
        type=expert_name,
        default=None,
        metavar="EXPERT",
        help="behaviour-clone this expert's env actions before MaskablePPO: a menu policy "
        "(fcfs, first-fit) or any baseline name (easy, mebf, ...; through the env adapter)",
    )
    p.add_argument("--pretrain-episodes", type=int, default=20, help="demonstration episodes")
    p.add_argument("--pretrain-epochs", type=int, default=10, help="cloning epochs")
    p.set_defaults(func=run)
