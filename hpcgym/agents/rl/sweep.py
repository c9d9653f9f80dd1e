"""Seed sweeps: ``hpcgym train --seeds 0-4`` trains one agent per seed, serially or in parallel.

Each seed is an ordinary :func:`~hpcgym.agents.rl.train.train` run of the same configuration with
``seed`` replaced, in its own run folder (``<out>/s<seed>`` when ``--out`` is given, else the
default ``runs/<algo>_<preset>_s<seed>``). Training is deterministic per seed and one torch
thread per run, so the executor changes only where the runs happen, never their results:

- ``serial``: one after the other, in this process;
- ``process``: a local pool of ``workers`` processes (spawned, so no state is shared);
- ``ray``: Ray tasks. With ``ray_address`` (or ``$RAY_ADDRESS``) the sweep attaches to that
  running cluster and leaves its resources alone (no ``num_cpus``); without one it starts a
  local Ray with ``workers`` CPUs.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym import atomic
from hpcgym.agents.rl.train import TrainConfig, finished_run, train
from hpcgym.errors import SpecError

SWEEP_EXECUTORS = ("serial", "process", "ray")


@dataclass(frozen=True)
class SeedRun:
    """What one seed's training produced."""

    seed: int
    agent: str
    run_dir: str
    timesteps: int
    episodes: int
    seconds: float


def seed_config(cfg: TrainConfig, seed: int) -> TrainConfig:
    """``cfg`` for one seed of a sweep: its seed, its own run folder, absolute paths.

    Paths are made absolute here, since workers (Ray's above all) may run in other folders.
    """
    one = replace(cfg, seed=seed, progress=False)
    out = Path(cfg.out) / f"s{seed}" if cfg.out else one.run_dir()
    hp_file = str(Path(cfg.hyperparams_file).resolve()) if cfg.hyperparams_file else None
    tb = cfg.tensorboard
    if tb:
        tb = str((Path(tb) / f"s{seed}").resolve())
    return replace(one, out=str(out.resolve()), hyperparams_file=hp_file, tensorboard=tb)


def _train_one(cfg: TrainConfig) -> SeedRun:
    from hpcgym.agents.rl.saved import AgentCard, model_paths

    run_dir = cfg.run_dir()
    if cfg.resume and finished_run(run_dir):
        # A sweep resumed after an interruption: this seed's agent is finished already.
        card_path = model_paths(run_dir)[1]
        card = AgentCard.from_json(card_path.read_text(), str(card_path))
        episodes = max(len((run_dir / "episodes.csv").read_text().splitlines()) - 1, 0)
        return SeedRun(cfg.seed, str(run_dir / "agent"), str(run_dir), card.timesteps, episodes, 0)
    r = train(cfg)
    return SeedRun(cfg.seed, str(r.agent), str(r.run_dir), r.timesteps, r.episodes, r.seconds)


def sweep(
    cfg: TrainConfig,
    seeds: list[int],
    executor: str = "serial",
    workers: int = 2,
    ray_address: str | None = None,
) -> list[SeedRun]:
    """Train ``cfg`` once per seed; the results in the order of ``seeds``.

    Raises:
        SpecError: An unknown executor, or ``ray`` without Ray installed.
    """
    if executor not in SWEEP_EXECUTORS:
        raise SpecError(f"unknown executor {executor!r}; choose from {', '.join(SWEEP_EXECUTORS)}")
    configs = [seed_config(cfg, s) for s in seeds]
    if executor == "serial" or len(configs) == 1:
        return [_train_one(c) for c in configs]
    if executor == "process":
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            return list(pool.map(_train_one, configs))
    return _sweep_ray(configs, workers, ray_address)


def _sweep_ray(configs: list[TrainConfig], workers: int, address: str | None) -> list[SeedRun]:
    try:
        import ray
    except ImportError:
        raise SpecError("executor 'ray' needs Ray: pip install 'ray[default]'") from None
    address = address or os.environ.get("RAY_ADDRESS")
    started = False
    if not ray.is_initialized():
        init: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            ray.init(address=address, **init)  # an existing cluster: its resources, not ours
        else:
            ray.init(num_cpus=workers, **init)
        started = True
    how = "attached to" if address else "started"
    cpus = ray.cluster_resources().get("CPU", 0)
    print(f"ray: {how} the cluster at {ray.get_runtime_context().gcs_address} ({cpus:g} CPUs)")
    try:
        remote = ray.remote(num_cpus=1)(_train_one)
        return list(ray.get([remote.remote(c) for c in configs]))
    finally:
        if started:
            ray.shutdown()


def sweep_curves(folder: Path, title: str) -> list[Path]:
    """Gather the members' validation curves of a sweep folder; return the files written.

    Writes ``<folder>/validation.csv`` (every member's rows, with its ``seed``) and
    ``<folder>/learning_curves.png`` (each seed's mean validation objective against training
    steps, and their mean over seeds where every seed has a point), both atomically. Members
    without a ``validation.csv`` (trained without ``--eval-every``) are left out; with none,
    nothing is written.
    """
    import csv
    import io

    from hpcgym.agents.members import sweep_members
    from hpcgym.agents.rl.validation import COLUMNS, set_objective_scale

    curves: dict[int, list[dict[str, str]]] = {}
    for seed, member in sweep_members(folder):
        path = member / "validation.csv"
        if path.is_file():
            with path.open() as f:
                curves[seed] = list(csv.DictReader(f))
    if not curves:
        return []
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=["seed", *COLUMNS], lineterminator="\n")
    writer.writeheader()
    for seed, rows in curves.items():
        for r in rows:
            writer.writerow({"seed": seed, **{c: r[c] for c in COLUMNS}})
    table = folder / "validation.csv"
    atomic.write_text(table, buf.getvalue())

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    points: dict[int, list[float]] = {}
    for seed, rows in curves.items():
        steps = [int(r["timesteps"]) for r in rows]
        mean = [float(r["mean_objective"]) for r in rows]
        ax.plot(steps, mean, marker=".", alpha=0.5, label=f"seed {seed}")
        for s, m in zip(steps, mean, strict=True):
            points.setdefault(s, []).append(m)
    common = sorted(s for s, v in points.items() if len(v) == len(curves))
    if common:
        avg = [float(np.mean(points[s])) for s in common]
        ax.plot(common, avg, color="k", linewidth=2, label="mean over seeds")
    set_objective_scale(ax, [m for ms in points.values() for m in ms])
    ax.set_xlabel("training steps")
    ax.set_ylabel("validation objective (lower is better)")
    ax.set_title(f"{title}: validation split, {len(curves)} seeds")
    ax.legend(fontsize=7)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=100)
    plt.close(fig)
    plot = folder / "learning_curves.png"
    atomic.write_bytes(plot, png.getvalue())
    return [table, plot]
