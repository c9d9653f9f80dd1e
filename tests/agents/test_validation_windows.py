"""``hpcgym train --eval-windows disjoint``: validation on every disjoint window, each once."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.rl.train import TrainConfig, train
from hpcgym.cli import main
from hpcgym.envs.episodes import disjoint_starts
from hpcgym.errors import SpecError

TINY = TrainConfig(
    env_id="hpcgym/Rigid-v0",
    seed=3,
    timesteps=256,
    env_kwargs={"n_jobs": 64},
    overrides={"n_steps": 64, "batch_size": 64, "n_epochs": 2},
    tensorboard="",
    eval_every=256,
    eval_windows="disjoint",
)


def test_disjoint_validation_plays_every_window_of_the_split_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.envs import cluster_env

    starts = disjoint_starts("hpcgym/Rigid-v0", {"n_jobs": 64, "split": "validation"})
    assert 10 < len(starts) < 100 and all(b - a == 64 for a, b in itertools.pairwise(starts))
    played: list[int] = []
    original = cluster_env.choose_episode

    def spy(cfg: Any, rng: Any, options: Any) -> Any:
        episode = original(cfg, rng, options)
        if cfg.split == "validation":
            played.append(episode.start)
        return episode

    monkeypatch.setattr(cluster_env, "choose_episode", spy)
    run = train(dataclasses.replace(TINY, out=str(tmp_path / "run")))
    rows = pd.read_csv(run.run_dir / "validation.csv")
    assert list(rows["timesteps"]) == [256] and list(rows["episodes"]) == [len(starts)]
    assert played == list(starts)  # every window once, in order
    assert rows["truncated"].iloc[0] == 0


def test_disjoint_validation_refuses_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "64", "--out", str(tmp_path / "a")]
    assert main([*argv, "--eval-windows", "disjoint", "--eval-episodes", "4"]) == 2
    assert "leave out --eval-episodes" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    seeded = dataclasses.replace(
        TINY, env_id="hpcgym/Evolving-v0", env_kwargs={}, out=str(tmp_path / "b")
    )
    with pytest.raises(SpecError, match="disjoint windows need window episodes"):
        train(seeded)
    assert not (tmp_path / "b").exists()  # refused before any file was written
