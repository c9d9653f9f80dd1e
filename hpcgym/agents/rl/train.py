"""``hpcgym train``: MaskablePPO (or PPO, A2C, DQN) on a preset, seeded, with checkpoints.

Hyperparameters come from ``hpcgym/agents/hyperparams/<algo>.yml`` (rl-zoo3's layout, keyed by
env id, ``default`` otherwise); the command line overrides the step budget, the number of envs
and any key (``--hp n_steps=256``). A run folder holds the agent (``agent.safetensors``, its
weights, and ``agent.json``, its card; see :mod:`hpcgym.agents.rl.saved`), ``checkpoints/``
(``--checkpoint-every``; see :mod:`hpcgym.agents.rl.checkpoint`), ``episodes.csv`` (one row per
training episode, :class:`~hpcgym.agents.rl.callbacks.EpisodeMetricsCallback`), ``tb/``
(TensorBoard, ``--tensorboard`` elsewhere), the resolved ``hyperparams.json`` and
``timing.json`` (time inside the VecEnv against the learner's, in wall and CPU seconds, the
updates' CPU seconds and the class that learned; see
:class:`~hpcgym.agents.rl.callbacks.TimedVecEnv`) and ``run.json`` (what produced the run, one
segment per invocation; :mod:`hpcgym.agents.runrecord`). Files are written under a temporary
name and renamed. A folder that already holds a run is refused unless
``--resume`` (continue from its last checkpoint, to the same agent as an uninterrupted run) or
``--overwrite`` is given. A training holds its folder's lock
(:func:`~hpcgym.agents.runrecord.lock_run_folder`): a second one into the same folder is
refused, and a ``run.json`` segment still ``running`` when the lock is free is one whose process
was killed; ``--resume`` continues it (marked ``crashed``), after the temporary files it left
are removed.

SB3 runs whole rollouts, so the steps run are the budget rounded up to whole rollouts; the
command says so before it starts, and the progress bar counts to that number.

The envs run in this process in a :class:`~hpcgym.agents.rl.vec.MaskVecEnv` (the action masks
come with the step's info; the same agent as SB3's ``DummyVecEnv``, which ``--vec-env dummy``
selects; ``--vec-env subproc`` runs them in worker processes, much slower here: the steps are
short and every one is a round trip; :class:`~hpcgym.agents.rl.vec.GuardedSubprocVecEnv`, whose
dead workers are one-line errors and whose ``close`` ends every worker within seconds).

CPU only; torch runs on ``threads`` threads (default 1: the networks are small and the envs
share the process, so on 2 cores more intra-op threads only contend).

MaskablePPO runs as :class:`~hpcgym.agents.rl.lean_ppo.LeanMaskablePPO` (no distribution
objects; with the job-scoring policy, numpy rollouts and updates that skip empty slots: the same
algorithm, the same agent in distribution); ``--learner exact`` runs
:class:`~hpcgym.agents.rl.lean_ppo.ExactMaskablePPO` (sb3-contrib's agent bit for bit) and
``--learner sb3`` sb3-contrib's own class, for comparison (``benchmarks/train_throughput.py``).
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from hpcgym import atomic
from hpcgym.agents.rl.decode import check_decode
from hpcgym.agents.rl.saved import ALGORITHMS, AgentCard, card_for, save_agent
from hpcgym.agents.runrecord import RUN_JSON, RunRecord, last_segment, lock_run_folder
from hpcgym.errors import SpecError
from hpcgym.provenance import git_commit

HYPERPARAMS = Path(__file__).parent.parent / "hyperparams"
"""The shipped hyperparameter files (``hpcgym/agents/hyperparams/<algo>.yml``)."""
LEARNERS = ("lean", "exact", "sb3")
"""MaskablePPO implementations of ``hpcgym train --learner``: the same algorithm (``exact`` and
``sb3`` the same agent bit for bit, ``lean`` in distribution)."""
_OURS = (
    "n_envs",
    "n_timesteps",
    "policy",
    "policy_kwargs",
    "env_kwargs",
    "resize_budget",
    "decode",
    "reward_reference",
)


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
    """One training run (command-line values; ``None`` keeps the YAML's).

    Raises:
        SpecError: A step budget, number of envs or checkpoint interval that is not positive.
    """

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
    """Steps between checkpoints (0: none), rounded up to whole rollouts."""
    resume: bool = False
    """Continue the run in ``out`` from its last checkpoint (from the start if it has none)."""
    overwrite: bool = False
    """Replace a run already in ``out`` (its agent, checkpoints, logs)."""
    subproc: bool = False
    """Shorthand for ``vec_env="subproc"``."""
    vec_env: str = "mask"
    """``mask`` (:class:`~hpcgym.agents.rl.vec.MaskVecEnv`), ``dummy`` or ``subproc`` (SB3's)."""
    threads: int = 1
    learner: str = "lean"
    """MaskablePPO's implementation: ``lean`` (:class:`~hpcgym.agents.rl.lean_ppo.LeanMaskablePPO`,
    the fastest, the same agent in distribution), ``exact``
    (:class:`~hpcgym.agents.rl.lean_ppo.ExactMaskablePPO`, sb3-contrib's agent bit for bit) or
    ``sb3`` (sb3-contrib's own, for comparison)."""
    progress: bool = False
    """Show a progress bar (only when stdout is a terminal)."""
    tensorboard: str | None = None
    """TensorBoard folder (default ``<run>/tb``; ``""``: no TensorBoard logs)."""
    verbose: int = 0
    pretrain: str | None = None
    """Clone this expert first (``hpcgym.agents.rl.imitation.expert_names``); MaskablePPO only."""
    pretrain_episodes: int = 20
    pretrain_epochs: int = 10
    eval_every: int = 0
    """Steps between validation runs on the validation split (0: none); see ``validation``."""
    eval_episodes: int = 8
    """Episodes per validation run (``eval_windows="random"``)."""
    eval_windows: str = "random"
    """``random``: ``eval_episodes`` windows drawn by seed; ``disjoint``: every disjoint window of
    the validation split (``hpcgym.agents.rl.validation``)."""
    command: tuple[str, ...] = ()
    """The command line that asked for the run (recorded in ``run.json`` and the card)."""

    def __post_init__(self) -> None:
        if self.timesteps is not None and self.timesteps <= 0:
            raise SpecError(f"timesteps must be positive, got {self.timesteps}")
        if self.n_envs is not None and self.n_envs <= 0:
            raise SpecError(f"n_envs must be positive, got {self.n_envs}")
        if self.checkpoint_every < 0:
            raise SpecError(
                f"checkpoint_every must be 0 (none) or positive, not {self.checkpoint_every}"
            )
        if self.eval_every < 0 or self.eval_episodes < 1:
            raise SpecError(
                f"eval_every must be >= 0 and eval_episodes >= 1, got {self.eval_every} and "
                f"{self.eval_episodes}"
            )
        if self.eval_windows not in ("random", "disjoint"):
            raise SpecError(
                f"unknown eval_windows {self.eval_windows!r}; choose from random, disjoint"
            )
        if self.resume and self.overwrite:
            raise SpecError("resume continues a run and overwrite replaces it: choose one")
        if self.learner not in LEARNERS:
            raise SpecError(f"unknown learner {self.learner!r}; choose from {', '.join(LEARNERS)}")

    def run_dir(self) -> Path:
        """The run folder (``runs/<algo>_<preset>_s<seed>`` unless ``out`` is given)."""
        if self.out:
            return Path(self.out)
        return Path("runs") / f"{self.algo}_{self.env_id.split('/')[-1]}_s{self.seed}"

    def tensorboard_dir(self) -> Path | None:
        """Where TensorBoard logs go (``None``: nowhere, or tensorboard is not installed)."""
        if self.tensorboard == "" or importlib.util.find_spec("tensorboard") is None:
            return None
        return Path(self.tensorboard) if self.tensorboard else self.run_dir() / "tb"


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
    resumed_from: int | None = None
    """The checkpoint's step the run resumed from (``None``: it started afresh)."""
    checkpoints: tuple[int, ...] = ()
    """Steps of the checkpoints this call wrote."""

    @property
    def learner_seconds(self) -> float:
        """Wall seconds outside the envs: inference, updates, callbacks."""
        return self.seconds - self.env_seconds


def resolve_hyperparams(cfg: TrainConfig) -> dict[str, Any]:
    """The YAML's hyperparameters with the command line's overrides (checked)."""
    hp = load_hyperparams(cfg.algo, cfg.env_id, cfg.hyperparams_file)
    hp.update(cfg.overrides)
    if cfg.timesteps is not None:
        hp["n_timesteps"] = cfg.timesteps
    if cfg.n_envs is not None:
        hp["n_envs"] = cfg.n_envs
    if cfg.policy is not None:
        hp["policy"] = cfg.policy
    # Training sees only the train split of the preset's workload unless told otherwise.
    hp["env_kwargs"] = {"split": "train", **dict(hp.get("env_kwargs") or {}), **cfg.env_kwargs}
    if int(hp.get("n_timesteps", 0)) <= 0:
        raise SpecError(f"n_timesteps must be positive, got {hp.get('n_timesteps')}")
    if int(hp.get("n_envs", 1)) <= 0:
        raise SpecError(f"n_envs must be positive, got {hp.get('n_envs')}")
    if hp.get("resize_budget") is not None and cfg.algo != "maskable_ppo":
        raise SpecError("resize_budget narrows action masks: only maskable_ppo uses them")
    try:
        decode = check_decode(hp.get("decode", "greedy"))
    except ValueError as e:
        raise SpecError(f"hyperparameter {e}") from None
    if decode != "greedy" and cfg.algo != "maskable_ppo":
        raise SpecError(f"decode={decode} reads the masked distribution: only maskable_ppo has it")
    if hp.get("reward_reference") is not None:
        import gymnasium as gym

        from hpcgym.agents.rl.reference import check_reference
        from hpcgym.envs.config import EnvConfig

        spec_kwargs = gym.spec(cfg.env_id).kwargs
        env_cfg = EnvConfig.from_kwargs({**spec_kwargs, **hp["env_kwargs"]})
        check_reference(hp["reward_reference"], env_cfg.weights)
    return hp


def build(cfg: TrainConfig) -> tuple[Any, Any, dict[str, Any], AgentCard]:
    """The model, its (timed) VecEnv, the resolved hyperparameters and the agent card."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    from hpcgym.agents.rl.callbacks import TimedVecEnv
    from hpcgym.agents.rl.make import make_agent
    from hpcgym.agents.rl.reference import RelativeReward
    from hpcgym.agents.rl.vec import GuardedSubprocVecEnv, make_mask_vec_env

    vec_kind = "subproc" if cfg.subproc else cfg.vec_env
    if vec_kind not in VEC_ENVS:
        raise SpecError(f"unknown VecEnv {vec_kind!r}; choose from {', '.join(VEC_ENVS)}")
    hp = resolve_hyperparams(cfg)
    env_kwargs = hp["env_kwargs"]
    budget = hp.get("resize_budget")
    module = cfg.env_id.split("/")[0]
    n_envs = int(hp.get("n_envs", 1))
    limit = None if budget is None else int(budget)
    reference = hp.get("reward_reference")
    wrap = None if reference is None else partial(RelativeReward, reference=reference)
    if vec_kind == "mask":
        base: Any = make_mask_vec_env(cfg.env_id, n_envs, cfg.seed, env_kwargs, limit, wrap)
    else:
        # The env applies the budget (``EnvConfig.resize_budget``), as in the default VecEnv.
        budgeted = env_kwargs if limit is None else {**env_kwargs, "resize_budget": limit}
        if vec_kind == "subproc":
            _probe_env(cfg.env_id, budgeted, cfg.seed)
        base = make_vec_env(
            f"{module}:{cfg.env_id}" if module == "hpcgym" else cfg.env_id,
            n_envs=n_envs,
            seed=cfg.seed,
            env_kwargs=budgeted,
            vec_env_cls=GuardedSubprocVecEnv if vec_kind == "subproc" else DummyVecEnv,
            wrapper_class=wrap,
        )
    venv = TimedVecEnv(base)
    tb = cfg.tensorboard_dir()
    algo_kwargs = {k: v for k, v in hp.items() if k not in _OURS}
    try:
        model = make_agent(
            venv,
            cfg.algo,
            policy=hp.get("policy"),
            policy_kwargs=dict(hp.get("policy_kwargs") or {}),
            threads=cfg.threads,
            lean=cfg.learner != "sb3",
            exact=cfg.learner == "exact",
            seed=cfg.seed,
            verbose=cfg.verbose,
            tensorboard_log=None if tb is None else str(tb),
            **algo_kwargs,
        )
    except TypeError as e:  # an unknown hyperparameter name
        raise SpecError(f"{cfg.algo} hyperparameters for {cfg.env_id}: {e}") from None
    training = {
        "seed": cfg.seed,
        "hyperparams": hp,
        "vec_env": vec_kind,
        "threads": cfg.threads,
        "pretrain": cfg.pretrain,
    }
    card = card_for(
        model,
        cfg.algo,
        cfg.env_id,
        env_kwargs,
        seed=cfg.seed,
        resize_budget=limit,
        training=training,
        decode=str(hp.get("decode", "greedy")),
    )
    return model, venv, hp, card


def _probe_env(env_id: str, env_kwargs: dict[str, Any], seed: int) -> None:
    """Make and reset one env in this process before the worker processes start.

    A bad setting (a workload with no job, say) is then a one-line error, not a worker dying
    with a bare ``EOFError`` in SB3's pipe.
    """
    import gymnasium as gym

    env = gym.make(env_id, **env_kwargs)
    try:
        env.reset(seed=seed)
    finally:
        env.close()


VEC_ENVS = ("mask", "dummy", "subproc")
"""VecEnv choices of ``hpcgym train --vec-env``."""

DEMO_SEEDS = 10_000
"""Demonstration episodes use reset seeds from here (away from training and bench seeds)."""


def pretrain(model: Any, cfg: TrainConfig, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Behaviour-clone ``cfg.pretrain`` into ``model``; return what was done (for the record)."""
    from hpcgym.agents.rl.imitation import clone, demonstrate

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


RUN_FILES = (
    "agent.safetensors",
    "agent.json",
    "agent.zip",
    "episodes.csv",
    "hyperparams.json",
    "timing.json",
    "validation.csv",
    "learning_curve.png",
    "best.safetensors",
    "best.json",
    RUN_JSON,
)
"""Files of a run folder that ``overwrite`` replaces (with ``checkpoints/`` and ``tb/``)."""


_TEMPORARY = re.compile(r"\.(?P<target>.+)\.[^.]+\.tmp")
"""A temporary file of :mod:`hpcgym.atomic` (``.<target>.<random>.tmp``)."""
_CHECKPOINT_FILE = re.compile(r"agent_\d+_steps\.(safetensors|json)|state_\d+_steps\.pt")


def remove_stale_temporaries(run_dir: Path) -> list[Path]:
    """Remove the temporary files a training killed mid-write left in ``run_dir``.

    Only those of a run file (:data:`RUN_FILES`, a checkpoint's); called with the folder's lock
    held, so no training is writing them.
    """
    from hpcgym.agents.rl.checkpoint import checkpoint_dir

    def ours(folder: Path, name: str) -> bool:
        return name in RUN_FILES if folder == run_dir else bool(_CHECKPOINT_FILE.fullmatch(name))

    removed = []
    for folder in (run_dir, checkpoint_dir(run_dir)):
        for path in folder.iterdir() if folder.is_dir() else []:
            m = _TEMPORARY.fullmatch(path.name)
            if m and ours(folder, m.group("target")) and path.is_file():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def finished_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a finished training: its agent, and a record that says so.

    An agent beside a last segment that did not finish (killed after saving the agent, before
    closing the record) is not trusted: ``--resume`` trains it again from the last checkpoint.
    """
    from hpcgym.agents.files import is_saved_agent

    last = last_segment(run_dir)
    return is_saved_agent(run_dir) and (last is None or last.get("status") == "finished")


def _held_message(run_dir: Path, held: list[str]) -> str:
    """Why a run into ``run_dir`` (neither resuming nor overwriting) is refused."""
    from hpcgym.agents.rl.checkpoint import latest_checkpoint

    last = last_segment(run_dir) or {}
    status = last.get("status", "finished")  # no record: a run of an older hpcgym
    what = "--resume continues it from its last checkpoint"
    if status != "finished":
        state = latest_checkpoint(run_dir)
        step = None if state is None else int(state.name.split("_")[1])
        what = "--resume continues it " + (
            f"from its last checkpoint (step {step:,})"
            if step
            else "from the start (no checkpoint)"
        )
    if status == "running":
        who = f"process {last['pid']} on {last.get('host', '?')}, " if "pid" in last else ""
        return (
            f"{run_dir} holds a training run that ended without finishing: its last invocation "
            f"({who}started {last.get('started', '?')}) was killed or crashed; {what}, "
            "--overwrite replaces it, or choose another --out"
        )
    if status != "finished":
        error = f": {last['error']}" if last.get("error") else ""
        return (
            f"{run_dir} holds a training run that stopped ({status}{error}); {what}, "
            "--overwrite replaces it, or choose another --out"
        )
    return (
        f"{run_dir} already holds a training run ({', '.join(held[:6])}); {what}, --overwrite "
        "replaces it, or choose another --out"
    )


_LOCK_TRIES = 5
"""Times ``train`` makes and locks its run folder when something removes it in between."""


def _prepare_run_dir(cfg: TrainConfig) -> Path | None:
    """Check what ``cfg``'s run folder holds; return the checkpoint to resume from, if any.

    Called with the folder's lock held: stale temporary files of a killed training are
    removed first, and hidden files (another command's write check) do not count as a run.
    """
    from hpcgym.agents.rl.checkpoint import checkpoint_dir, latest_checkpoint

    run_dir = cfg.run_dir()
    remove_stale_temporaries(run_dir)
    held = sorted(p.name for p in run_dir.iterdir() if not p.name.startswith("."))
    if not held:
        return None
    if cfg.overwrite:
        for name in RUN_FILES:
            (run_dir / name).unlink(missing_ok=True)
        for folder in (checkpoint_dir(run_dir), run_dir / "tb"):
            if folder.is_dir():
                shutil.rmtree(folder)
        return None
    if not cfg.resume:
        raise SpecError(_held_message(run_dir, held))
    if finished_run(run_dir):
        raise SpecError(
            f"{run_dir} holds a finished agent: nothing to resume; --overwrite trains it again"
        )
    return latest_checkpoint(run_dir)


def train(cfg: TrainConfig, announce: Callable[[str], None] | None = None) -> TrainResult:
    """Train, checkpoint, log and save; see the module docstring for what lands where.

    Args:
        cfg: The run.
        announce: Called with a line saying how many steps will run (rounded up to whole
            rollouts) and from which checkpoint, before training starts.

    Raises:
        SpecError: The run folder holds a run and neither ``resume`` nor ``overwrite`` is set,
            ``resume`` cannot be exact for this run, or its checkpoint is of another run.
    """
    from hpcgym.agents.rl.checkpoint import resumable

    model, venv, hp, card = build(cfg)  # first: a configuration error changes no file
    try:
        why_not = resumable(model, cfg.algo)
        if cfg.resume and why_not:
            raise SpecError(f"--resume cannot give the same agent for this run: {why_not}")
        if cfg.eval_every > 0 and cfg.eval_windows == "disjoint":  # refused before any file
            from hpcgym.envs.episodes import disjoint_starts

            disjoint_starts(cfg.env_id, {**hp["env_kwargs"], "split": "validation"})
        run_dir = cfg.run_dir()
        for _ in range(_LOCK_TRIES):
            run_dir.mkdir(parents=True, exist_ok=True)
            with contextlib.ExitStack() as held:
                # Another command's output check may remove the new, empty folder between the
                # mkdir and the lock (it keeps a locked one): then it is made again.
                try:
                    held.enter_context(lock_run_folder(run_dir))  # one training per folder
                except FileNotFoundError:
                    continue
                if run_dir.is_dir():
                    return _train_built(cfg, model, venv, hp, card, announce)
        raise SpecError(f"{run_dir} keeps disappearing: another process removes it; nothing run")
    finally:
        venv.close()


def _train_built(
    cfg: TrainConfig,
    model: Any,
    venv: Any,
    hp: dict[str, Any],
    card: AgentCard,
    announce: Callable[[str], None] | None,
) -> TrainResult:
    """:func:`train` once the model and its envs are built (the caller closes the envs)."""
    from hpcgym.agents.rl.checkpoint import resume
    from hpcgym.envs.episodes import dropped_record

    produced_by = {"git_commit": git_commit(), "command": list(cfg.command)}
    card = replace(card, training={**card.training, "produced_by": produced_by})
    state = _prepare_run_dir(cfg)
    run_dir = cfg.run_dir()
    config = {
        "env_id": cfg.env_id,
        "algo": cfg.algo,
        "seed": cfg.seed,
        "hyperparams": dict(hp),
        "vec_env": card.training["vec_env"],
        "threads": cfg.threads,
        "pretrain": [cfg.pretrain, cfg.pretrain_episodes, cfg.pretrain_epochs],
    }
    resumed_from = None
    if state is not None:
        resumed_from = resume(model, state, config)
    else:
        if cfg.pretrain:
            hp["pretrain"] = pretrain(model, cfg, hp["env_kwargs"])
        text = json.dumps(hp, indent=2, sort_keys=True) + "\n"
        atomic.write_text(run_dir / "hyperparams.json", text)
    dropped = dropped_record(cfg.env_id, hp["env_kwargs"])
    facts = None if dropped is None else {"dropped_jobs": dropped}
    record = RunRecord.open(run_dir, cfg.command, resumed_from, cfg.resume, facts)
    try:
        result = _learn(cfg, model, venv, hp, card, config, resumed_from, announce)
        record.close("finished", result.timesteps)
    except BaseException as e:
        record.fail(e)  # interrupted (Ctrl-C) or failed, with the error's line
        raise
    return result


def folderless_logger(verbose: int) -> Any:
    """An SB3 logger that writes nowhere but, with ``verbose``, the terminal.

    Without TensorBoard (``--tensorboard ""``, or tensorboard not installed), SB3's own set-up
    at every ``learn`` makes an empty ``SB3-<time>`` folder in the temporary directory
    (``$SB3_LOGDIR`` else ``tempfile.gettempdir()``), one more per run, never removed. The
    run's records go to its own folder (``episodes.csv``, ``timing.json``); this logger keeps
    SB3's records in memory for the callbacks, as before.
    """
    from stable_baselines3.common.logger import HumanOutputFormat, Logger

    return Logger(None, [HumanOutputFormat(sys.stdout)] if verbose >= 1 else [])


def _learn(
    cfg: TrainConfig,
    model: Any,
    venv: Any,
    hp: dict[str, Any],
    card: AgentCard,
    config: dict[str, Any],
    resumed_from: int | None,
    announce: Callable[[str], None] | None,
) -> TrainResult:
    """Train to the step budget with the run's callbacks; save the agent and the timings."""
    from stable_baselines3.common.callbacks import CallbackList

    from hpcgym.agents.rl.callbacks import EpisodeMetricsCallback, UpdateTimer
    from hpcgym.agents.rl.checkpoint import Checkpointer
    from hpcgym.agents.rl.progress import ProgressBar, planned_timesteps

    run_dir = cfg.run_dir()
    total = int(hp["n_timesteps"])
    planned = planned_timesteps(model, total)
    if announce is not None:
        start = f"from the checkpoint at {resumed_from:,}" if resumed_from else "from 0"
        rounding = f" ({total:,} asked, rounded up to whole rollouts)" if planned != total else ""
        announce(f"training {cfg.algo} on {cfg.env_id} to {planned:,} steps{rounding}, {start}")
    metrics = EpisodeMetricsCallback(run_dir / "episodes.csv", resume_at=resumed_from)
    updates = UpdateTimer()
    callbacks: list[Any] = [metrics, updates]
    checkpoints = None
    if cfg.checkpoint_every > 0:
        checkpoints = Checkpointer(cfg.checkpoint_every, card, run_dir, config)
        callbacks.append(checkpoints)
    if cfg.eval_every > 0:
        from hpcgym.agents.rl.validation import ValidationCallback

        callbacks.append(
            ValidationCallback(
                cfg.env_id,
                # Validation plays under the training rules, resize budget included: without
                # it a deterministic agent may resize one job forever and every episode truncates.
                hp["env_kwargs"]
                if hp.get("resize_budget") is None
                else {**hp["env_kwargs"], "resize_budget": int(hp["resize_budget"])},
                cfg.eval_every,
                cfg.eval_episodes,
                run_dir,
                card,
                resume_at=resumed_from,
                windows=cfg.eval_windows,
            )
        )
    bar = None
    if cfg.progress and sys.stdout.isatty():
        bar = ProgressBar(planned, f"{cfg.algo} {cfg.env_id}")
        callbacks.append(bar)
    if cfg.tensorboard_dir() is None:
        model.set_logger(folderless_logger(model.verbose))
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        model.learn(
            total - model.num_timesteps,
            callback=CallbackList(callbacks),
            reset_num_timesteps=resumed_from is None,
        )
    except BaseException:
        with contextlib.suppress(OSError):  # a full disk: the error in flight says so
            metrics.close()
        raise
    finally:
        if bar is not None:
            bar._on_training_end()  # also after Ctrl-C: give the terminal back
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    agent = save_agent(model, replace(card, timesteps=model.num_timesteps), run_dir / "agent")
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
        resumed_from,
        tuple(checkpoints.saved) if checkpoints else (),
    )
    timing = {
        "timesteps": result.timesteps,
        "episodes": result.episodes,
        "resumed_from": resumed_from,
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
        "learner": type(model).__name__,
    }
    atomic.write_text(run_dir / "timing.json", json.dumps(timing, indent=2) + "\n")
    return result


def finish_lines(cfg: TrainConfig, r: TrainResult) -> list[str]:
    """What a finished training prints after its timing line.

    The agent with the complete command that evaluates it (the training's ``--env-kwargs``
    too, so the copy plays the same workload), the validation score when the run validated
    (last and best mean objective, and where the best agent is), and the run folder.
    """
    evaluate = ["hpcgym", "evaluate", "--env", cfg.env_id]
    if cfg.env_kwargs:
        evaluate += ["--env-kwargs", json.dumps(cfg.env_kwargs, sort_keys=True)]
    evaluate += ["--policy", str(r.run_dir)]
    lines = [f"agent: {r.agent}  (evaluate: {shlex.join(evaluate)})"]
    table = r.run_dir / "validation.csv"
    if table.is_file():
        with table.open(newline="") as f:
            rows = list(csv.DictReader(f))
        if rows:
            last = rows[-1]
            best = [row for row in rows if row.get("best") == "1"]
            line = (
                f"validation (mean objective over {last['episodes']} episodes of the "
                f"validation split, lower is better): {float(last['mean_objective']):.4g} at "
                f"step {last['timesteps']}"
            )
            if best:
                line += (
                    f"; best {float(best[-1]['mean_objective']):.4g} at step "
                    f"{best[-1]['timesteps']} ({r.run_dir / 'best'}.safetensors)"
                )
            lines.append(line)
    lines.append(f"run folder: {r.run_dir.resolve()}")
    return lines
