"""``hpcgym train``: its options, and the dispatch to one training run or a seed sweep.

The training itself is :mod:`hpcgym.agents.rl.train` (``TrainConfig``, ``train``); a ``--seeds``
sweep is :mod:`hpcgym.agents.rl.sweep`, which runs ``train`` once per seed. This module is above
both, so neither imports the other's caller.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.agents.rl import train as training
from hpcgym.agents.rl.saved import ALGORITHMS
from hpcgym.atomic import NO_ROOM
from hpcgym.cli_checks import (
    at_least,
    env_kwargs_arg,
    hyperparameter,
    known_env_id,
    parse_seeds,
    writable_folder,
)
from hpcgym.errors import OutputError, SpecError


def eval_episodes(args: argparse.Namespace) -> int:
    """``--eval-episodes`` (8 unless given), refused beside ``--eval-windows disjoint``."""
    if args.eval_windows == "disjoint" and args.eval_episodes is not None:
        raise SpecError(
            "--eval-windows disjoint plays every disjoint window of the validation split: "
            "leave out --eval-episodes"
        )
    return 8 if args.eval_episodes is None else int(args.eval_episodes)


def run(args: argparse.Namespace) -> int:
    """The ``train`` command."""
    known_env_id(args.env)
    at_least("--n-envs", args.n_envs, 1)
    at_least("--seed", args.seed, 0)
    env_kwargs = env_kwargs_arg(args.env_kwargs)
    overrides = {}
    for item in args.hp or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SpecError(f"--hp takes key=value, got {item!r}")
        overrides[key] = hyperparameter(key, training._parse_value(value))
    cfg = training.TrainConfig(
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
        resume=args.resume,
        overwrite=args.overwrite,
        subproc=args.subproc,
        vec_env=args.vec_env,
        threads=args.threads,
        learner=args.learner,
        progress=not args.no_progress,
        tensorboard=args.tensorboard,
        verbose=args.verbose,
        pretrain=args.pretrain,
        pretrain_episodes=args.pretrain_episodes,
        pretrain_epochs=args.pretrain_epochs,
        eval_every=args.eval_every,
        eval_episodes=eval_episodes(args),
        eval_windows=args.eval_windows,
        command=("hpcgym", *(args.argv if args.argv is not None else sys.argv[1:])),
    )
    if args.seeds is not None:
        if args.out:
            writable_folder(args.out)
        return _run_sweep(cfg, args)
    writable_folder(cfg.run_dir())
    try:
        r = training.train(cfg, announce=print)
    except OSError as e:  # a full disk: OutputError naming the file, or an append's own
        if e.errno not in NO_ROOM:
            raise
        what = str(e) if isinstance(e, OutputError) else f"writing in {cfg.run_dir()}: {e}"
        raise OutputError(
            f"training stopped: {what}. Then the same command with --resume continues the "
            f"run in {cfg.run_dir()}"
        ) from None
    except KeyboardInterrupt:
        saved = "no checkpoint yet" if cfg.checkpoint_every <= 0 else "checkpoints are kept"
        print(
            f"hpcgym: interrupted ({saved}); the same command with --resume continues the run "
            f"in {cfg.run_dir()}",
            file=sys.stderr,
        )
        return 130
    print(
        f"{cfg.algo} on {cfg.env_id} (seed {cfg.seed}): {r.timesteps} steps, {r.episodes} "
        f"episodes in {r.seconds:.1f} s (env {r.env_seconds:.1f} s, learner "
        f"{r.learner_seconds:.1f} s; CPU {r.cpu_seconds:.1f} s, env "
        f"{r.env_cpu_seconds / max(r.cpu_seconds, 1e-9):.0%})"
    )
    for line in training.finish_lines(cfg, r):
        print(line)
    return 0


def _run_sweep(cfg: training.TrainConfig, args: argparse.Namespace) -> int:
    from hpcgym.agents.rl.sweep import sweep, sweep_curves

    seeds = parse_seeds(args.seeds)
    where = args.executor + (f" at {args.ray_address}" if args.ray_address else "")
    print(
        f"training {cfg.algo} on {cfg.env_id} for seeds {seeds} ({where}, {args.workers} workers)"
    )
    try:
        runs = sweep(cfg, seeds, args.executor, args.workers, args.ray_address)
    except KeyboardInterrupt:
        print("hpcgym: interrupted; the same command with --resume continues", file=sys.stderr)
        return 130
    for r in runs:
        print(
            f"seed {r.seed}: {r.timesteps} steps, {r.episodes} episodes, {r.seconds:.1f} s  "
            f"{r.run_dir}"
        )
    if cfg.out is not None:
        written = sweep_curves(Path(cfg.out), cfg.env_id)
        if written:
            print("validation curves of every seed: " + ", ".join(map(str, written)))
        print(f"benchmark every seed as one policy: hpcgym bench --policy {cfg.out} ...")
    return 0


def expert_name(text: str) -> str:
    """``--pretrain``'s value: a name of :func:`hpcgym.agents.rl.imitation.expert_names`."""
    from hpcgym.agents.rl.imitation import expert_names

    names = expert_names()
    if text not in names:
        raise argparse.ArgumentTypeError(f"unknown expert {text!r}; choose from {', '.join(names)}")
    return text


CLI_DESCRIPTION = """\
Train an agent on a preset, seeded, and save it with its card in a run folder
(agent.safetensors, agent.json, best.*, validation.csv, learning_curve.png, checkpoints/,
episodes.csv, hyperparams.json, timing.json, run.json: the command, commit, versions and
machine of every invocation). Training uses the train split of the workload;
validation runs on the validation split.
Hyperparameters come from hpcgym/agents/hyperparams/<algo>.yml; --hp overrides one.
--hp decode=kind validates and plays the agent kind-first (the most likely kind of command,
then its best entry) instead of greedily, --hp decode=sample with actions drawn from its
distribution, seeded by the episode (RLScheduler's rule); the card keeps it (docs/bench.md,
"Decoding"). --hp reward_reference=NAME trains on the reward relative to baseline NAME's
schedule of the same episode (bsld and wait rewards; docs/bench.md, "Relative rewards").

examples:
  hpcgym train --env hpcgym/Malleable-v0 --timesteps 100000 --checkpoint-every 25000
  hpcgym train --env hpcgym/Rigid-v0 --algo ppo --timesteps 50000
  hpcgym train --env hpcgym/Malleable-v0 --pretrain first-fit --hp n_steps=256
  hpcgym train --env hpcgym/Rigid-v0 --hp decode=kind --eval-every 10000"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` to the ``hpcgym`` command line."""
    p = subparsers.add_parser(
        "train",
        help="train MaskablePPO (or PPO, A2C, DQN) on a preset "
        "(e.g. hpcgym train --env hpcgym/Malleable-v0)",
        description=CLI_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--env",
        default="hpcgym/Rigid-v0",
        help="registered env id (default hpcgym/Rigid-v0; hpcgym list presets shows them all)",
    )
    p.add_argument(
        "--algo",
        choices=ALGORITHMS,
        default="maskable_ppo",
        help="the algorithm (default maskable_ppo; e.g. --algo ppo)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the agent and its envs (default 0)")
    p.add_argument(
        "--seeds",
        default=None,
        metavar="LIST",
        help="train one agent per seed, e.g. --seeds 0-4 (folders <out>/s<seed>)",
    )
    p.add_argument(
        "--executor",
        choices=("serial", "process", "ray"),
        default="process",
        help="where a --seeds sweep runs: here one by one, local processes, or Ray",
    )
    p.add_argument("--workers", type=int, default=2, help="parallel runs of a --seeds sweep")
    p.add_argument(
        "--ray-address",
        default=None,
        help="attach a --seeds sweep to this running Ray cluster (else $RAY_ADDRESS)",
    )
    p.add_argument("--timesteps", type=int, default=None, help="override n_timesteps")
    p.add_argument("--n-envs", type=int, default=None, help="override n_envs")
    p.add_argument(
        "--policy",
        default=None,
        help="JobScoringPolicy (default), JobAttentionPolicy, MultiInputPolicy, MlpPolicy",
    )
    p.add_argument("--env-kwargs", default=None, help="JSON object of preset overrides")
    p.add_argument("--hp", action="append", help="hyperparameter override key=value (JSON value)")
    p.add_argument("--hyperparams", default=None, help="YAML file instead of the shipped one")
    p.add_argument("--out", default=None, help="run folder (default runs/<algo>_<preset>_s<seed>)")
    p.add_argument(
        "--checkpoint-every",
        type=int,
        default=0,
        metavar="STEPS",
        help="save a checkpoint every STEPS steps, at the next rollout's start (e.g. 10000)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out from its last checkpoint, to the same agent as an "
        "uninterrupted run",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the run already in --out")
    p.add_argument(
        "--vec-env",
        choices=training.VEC_ENVS,
        default="mask",
        help="mask: in-process, masks from the step info (default); dummy, subproc: SB3's",
    )
    p.add_argument("--subproc", action="store_true", help="same as --vec-env subproc")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument(
        "--learner",
        choices=training.LEARNERS,
        default="lean",
        help="MaskablePPO's implementation: lean (default; no distribution objects, numpy "
        "rollouts and sparse updates for the job-scoring policy: the same agent in "
        "distribution), exact (lean, but sb3-contrib's agent bit for bit) or sb3 "
        "(sb3-contrib's own)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is none either when output is not a terminal)",
    )
    p.add_argument(
        "--tensorboard",
        default=None,
        metavar="DIR",
        help="write TensorBoard logs to DIR (default: <run folder>/tb; '' for none)",
    )
    p.add_argument(
        "--verbose", type=int, default=0, help="SB3's log level: 0 quiet, 1 info (default 0)"
    )
    p.add_argument(
        "--pretrain",
        type=expert_name,
        default=None,
        metavar="EXPERT",
        help="behaviour-clone this expert's env actions before MaskablePPO: a menu policy "
        "(fcfs, first-fit), in reserve mode a ranker (rank-sjf, rank-f1, ...), or any baseline "
        "name (easy, mebf, ...; through the env adapter)",
    )
    p.add_argument("--pretrain-episodes", type=int, default=20, help="demonstration episodes")
    p.add_argument("--pretrain-epochs", type=int, default=10, help="cloning epochs")
    p.add_argument(
        "--eval-every",
        type=int,
        default=10_000,
        metavar="STEPS",
        help="evaluate on the validation split every STEPS steps, keeping the best agent as "
        "best.* and the curve in validation.csv / learning_curve.png (0: never)",
    )
    p.add_argument(
        "--eval-episodes",
        type=int,
        default=None,
        help="validation episodes per evaluation (default 8)",
    )
    p.add_argument(
        "--eval-windows",
        choices=("random", "disjoint"),
        default="random",
        help="random: --eval-episodes windows drawn by seed; disjoint: every disjoint window "
        "of the validation split once, as a judged scenario's validation run plays them "
        "(trace presets; --eval-episodes is not used)",
    )
    p.set_defaults(func=run)
