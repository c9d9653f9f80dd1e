from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.rl import callbacks
from hpcgym.agents.rl.make import make_agent
from hpcgym.agents.rl.progress import ProgressBar, planned_timesteps
from hpcgym.agents.rl.saved import load_agent
from hpcgym.agents.rl.train import TrainConfig, train
from hpcgym.agents.rl.vec import make_mask_vec_env
from hpcgym.cli import main
from hpcgym.errors import SpecError
from hpcgym.provenance import git_commit

TINY_HP = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}


def tiny(out: Path, **kw: object) -> TrainConfig:
    """2 envs x 64 steps: rollouts of 128 steps; 512 steps are four rollouts and updates."""
    base = TrainConfig(
        env_id="hpcgym/Malleable-v0",
        seed=3,
        timesteps=512,
        env_kwargs={"n_jobs": 16},
        overrides=TINY_HP,
        out=str(out),
        tensorboard="",
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def weights(path: Path) -> dict[str, object]:
    return dict(load_agent(path)[0].policy.state_dict())


def crash_at(monkeypatch: pytest.MonkeyPatch, step: int, error: type[BaseException]) -> None:
    """Make training fail at ``step`` (as Ctrl-C or a crash would), after the step's checkpoint."""
    original = callbacks.EpisodeMetricsCallback._on_step

    def failing(self: callbacks.EpisodeMetricsCallback) -> bool:
        if self.num_timesteps >= step:
            raise error("stopped by the test")
        return original(self)

    monkeypatch.setattr(callbacks.EpisodeMetricsCallback, "_on_step", failing)


@pytest.mark.parametrize(("step", "error"), [(300, KeyboardInterrupt), (130, RuntimeError)])
def test_an_interrupted_training_resumes_to_the_same_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int, error: type[BaseException]
) -> None:
    # The uninterrupted run takes no checkpoint: saving one must not change the run either.
    whole = train(tiny(tmp_path / "whole"))
    cut = tiny(tmp_path / "cut", checkpoint_every=128)
    with monkeypatch.context() as m:
        crash_at(m, step, error)
        with pytest.raises(error):
            train(cut)
    last = 256 if step == 300 else 128
    assert (tmp_path / "cut" / "checkpoints" / f"state_{last}_steps.pt").is_file()
    assert not (tmp_path / "cut" / "agent.safetensors").exists()
    resumed = train(dataclasses.replace(cut, resume=True))
    assert resumed.resumed_from == last and resumed.timesteps == whole.timesteps == 512
    a, b = weights(whole.agent), weights(resumed.agent)
    assert a.keys() == b.keys()
    assert all((a[k] == b[k]).all() for k in a)  # type: ignore[attr-defined]
    # Episodes written after the checkpoint were dropped and written again: the same log.
    one, two = (pd.read_csv(tmp_path / r / "episodes.csv") for r in ("whole", "cut"))
    assert len(one) > 2
    pd.testing.assert_frame_equal(one, two)
    timing = json.loads((tmp_path / "cut" / "timing.json").read_text())
    assert timing["resumed_from"] == last
    # The record keeps both invocations: the one that stopped and the one that finished.
    one, two = json.loads((tmp_path / "cut" / "run.json").read_text())["segments"]
    assert one["status"] == ("interrupted" if error is KeyboardInterrupt else "failed")
    assert "timesteps" not in one and one["resumed_from"] is None
    assert two["status"] == "finished" and two["timesteps"] == 512
    assert two["resumed_from"] == last


def test_resume_without_a_checkpoint_starts_over_and_checkpoints_load_as_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = train(tiny(tmp_path / "whole", timesteps=256))
    cut = tiny(tmp_path / "cut", timesteps=256, checkpoint_every=256)
    with monkeypatch.context() as m:
        crash_at(m, 100, KeyboardInterrupt)
        with pytest.raises(KeyboardInterrupt):
            train(cut)
    resumed = train(dataclasses.replace(cut, resume=True))
    assert resumed.resumed_from is None
    # The record keeps the stopped attempt beside the one that started over.
    segments = json.loads((tmp_path / "cut" / "run.json").read_text())["segments"]
    assert [(s["status"], s["resumed_from"]) for s in segments] == [
        ("interrupted", None),
        ("finished", None),
    ]
    a, b = weights(whole.agent), weights(resumed.agent)
    assert all((a[k] == b[k]).all() for k in a)  # type: ignore[attr-defined]
    snapshot = tmp_path / "cut" / "checkpoints" / "agent_256_steps"  # the end's checkpoint
    model, card = load_agent(snapshot)
    assert card.timesteps == 256
    c = dict(model.policy.state_dict())
    assert all((a[k] == c[k]).all() for k in a)  # type: ignore[attr-defined]


def test_a_run_folder_is_never_replaced_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tiny(tmp_path / "run", timesteps=128)
    first = train(cfg)
    saved = first.agent.read_bytes()
    with pytest.raises(SpecError, match=r"--resume continues it.*--overwrite replaces it"):
        train(dataclasses.replace(cfg, seed=4))
    with pytest.raises(SpecError, match="finished agent: nothing to resume"):
        train(dataclasses.replace(cfg, resume=True))
    assert first.agent.read_bytes() == saved
    again = train(dataclasses.replace(cfg, seed=4, overwrite=True))
    assert again.agent.read_bytes() != saved
    assert load_agent(again.agent)[1].seed == 4
    assert not list((tmp_path / "run").glob(".*tmp*"))  # no temporary file left behind


def test_resume_refuses_a_checkpoint_of_another_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut = tiny(tmp_path / "cut", checkpoint_every=128)
    with monkeypatch.context() as m:
        crash_at(m, 200, KeyboardInterrupt)
        with pytest.raises(KeyboardInterrupt):
            train(cut)
    other = dataclasses.replace(cut, overrides={**TINY_HP, "n_epochs": 3}, resume=True)
    with pytest.raises(SpecError, match=r"another configuration \(hyperparams.n_epochs: 2 then"):
        train(other)


def test_resume_is_refused_where_it_cannot_be_exact(tmp_path: Path) -> None:
    dqn = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        algo="dqn",
        timesteps=64,
        env_kwargs={"n_jobs": 16},
        out=str(tmp_path / "dqn"),
        resume=True,
        tensorboard="",
    )
    with pytest.raises(SpecError, match="replay buffer"):
        train(dqn)
    with pytest.raises(SpecError, match="--vec-env mask"):
        train(tiny(tmp_path / "dummy", vec_env="dummy", resume=True))


@pytest.mark.parametrize("bad", [0, -5])
def test_a_step_budget_that_is_not_positive_is_refused(
    bad: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SpecError, match="timesteps must be positive"):
        TrainConfig(timesteps=bad)
    out = tmp_path / "x"
    assert main(["train", "--timesteps", str(bad), "--out", str(out)]) == 2
    assert "timesteps must be positive" in capsys.readouterr().err
    assert not out.exists()


def test_the_progress_bar_counts_to_the_steps_that_really_run() -> None:
    venv = make_mask_vec_env("hpcgym/Malleable-v0", 2, 0, {"n_jobs": 16})
    model = make_agent(venv, seed=0, n_steps=64, batch_size=64, n_epochs=1)
    total = planned_timesteps(model, 300)
    assert total == 384  # three rollouts of 2 x 64 steps
    bar = ProgressBar(total)
    seen: list[tuple[float, float | None]] = []
    original = bar._on_training_end

    def record() -> None:
        if bar._progress is not None:
            task = bar._progress.tasks[0]
            seen.append((task.completed, task.total))
        original()

    bar._on_training_end = record  # type: ignore[method-assign]
    model.learn(300, callback=bar)
    assert model.num_timesteps == total
    assert seen == [(total, total)]
    venv.close()


def test_no_progress_bar_when_output_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "100", "--out", str(tmp_path)]
    argv += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=64", "--hp", "batch_size=64"]
    argv += ["--tensorboard", ""]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "to 128 steps (100 asked, rounded up to whole rollouts), from 0" in out
    assert "━" not in out and "eta" not in out


def test_tensorboard_logs_are_written_where_asked(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    board = tmp_path / "board"
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "64", "--out", str(tmp_path / "r")]
    argv += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=32", "--hp", "batch_size=32"]
    argv += ["--no-progress", "--tensorboard", str(board)]
    assert main(argv) == 0
    events = list(board.rglob("events.out.tfevents.*"))
    assert events and all(e.stat().st_size > 0 for e in events)
    assert not (tmp_path / "r" / "tb").exists()


def test_ctrl_c_in_the_train_command_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crash_at(monkeypatch, 200, KeyboardInterrupt)
    argv = ["train", "--env", "hpcgym/Malleable-v0", "--timesteps", "512", "--out", str(tmp_path)]
    argv += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=64", "--hp", "batch_size=64"]
    argv += ["--checkpoint-every", "128", "--tensorboard", ""]
    assert main(argv) == 130
    assert "the same command with --resume continues" in capsys.readouterr().err
    monkeypatch.undo()
    assert main([*argv, "--resume"]) == 0
    assert "from the checkpoint at 128" in capsys.readouterr().out
    # What produced the run: each invocation's command and commit, in the folder and the card.
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["format"] == "hpcgym-train-run/1"
    first, second = record["segments"]
    assert first["command"] == ["hpcgym", *argv] and first["status"] == "interrupted"
    assert second["command"] == ["hpcgym", *argv, "--resume"]
    assert (second["status"], second["resumed_from"], second["timesteps"]) == ("finished", 128, 512)
    for seg in (first, second):
        assert seg["git_commit"] == git_commit() and seg["versions"]["torch"]
        assert seg["machine"]["cpus"] and seg["started"] <= seg["finished"]
    card = json.loads((tmp_path / "agent.json").read_text())
    assert card["training"]["produced_by"] == {
        "git_commit": git_commit(),
        "command": ["hpcgym", *argv, "--resume"],
    }
    # --overwrite starts a new record.
    assert main([*argv, "--overwrite"]) == 0
    (only,) = json.loads((tmp_path / "run.json").read_text())["segments"]
    assert only["command"][-1] == "--overwrite" and only["status"] == "finished"


def test_resume_refuses_a_run_record_that_is_not_one(tmp_path: Path) -> None:
    cfg = tiny(tmp_path / "run", checkpoint_every=128)
    train(cfg)
    (tmp_path / "run" / "agent.safetensors").unlink()  # as if stopped after the last checkpoint
    (tmp_path / "run" / "run.json").write_text('{"status": "running"}')
    with pytest.raises(SpecError, match="not a training record"):
        train(dataclasses.replace(cfg, resume=True))


def test_overwrite_with_a_bad_configuration_keeps_the_old_run(tmp_path: Path) -> None:
    cfg = tiny(tmp_path / "run", timesteps=128)
    saved = train(cfg).agent.read_bytes()
    bad = dataclasses.replace(cfg, overrides={**TINY_HP, "no_such_key": 1}, overwrite=True)
    with pytest.raises(SpecError, match="no_such_key"):
        train(bad)
    assert (tmp_path / "run" / "agent.safetensors").read_bytes() == saved


def test_validation_keeps_a_curve_and_the_best_agent_without_changing_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.agents.rl import validation

    rigid = {"env_id": "hpcgym/Rigid-v0"}  # its greedy episodes finish even untrained
    plain = train(tiny(tmp_path / "plain", **rigid))
    checked = train(tiny(tmp_path / "checked", eval_every=128, eval_episodes=2, **rigid))
    # Validation changes nothing in training (same final weights, bit for bit).
    a, b = weights(plain.agent), weights(checked.agent)
    assert all(bool((a[k] == b[k]).all()) for k in a)
    rows = pd.read_csv(checked.run_dir / "validation.csv")
    assert list(rows["timesteps"]) == [128, 256, 384, 512]
    assert (rows["episodes"] == 2).all() and rows["best"].iloc[0] == 1
    best_row = rows[rows["best"] == 1].iloc[-1]
    assert best_row["mean_objective"] == rows["mean_objective"][rows["truncated"] == 0].min()
    _, card = load_agent(checked.run_dir / "best")
    assert card.timesteps == best_row["timesteps"]
    assert (checked.run_dir / "learning_curve.png").stat().st_size > 1000
    # The validation env plays the validation split, training the train split.
    assert card.env_kwargs["split"] == "train"
    seen: list[str] = []
    original = validation.ValidationCallback.objectives

    def spy(self: validation.ValidationCallback) -> object:
        seen.append(self.env_kwargs["split"])
        budgets.append(self.env_kwargs.get("resize_budget"))
        values, truncated = original(self)
        truncations.append(truncated)
        return values, truncated

    budgets: list[object] = []
    truncations: list[int] = []
    monkeypatch.setattr(validation.ValidationCallback, "objectives", spy)
    train(tiny(tmp_path / "spied", eval_every=512, eval_episodes=2))
    assert seen == ["validation"]
    # ... under the training rules: the resize budget of the shipped hyperparameters (without
    # it an untrained malleable agent resizes one job forever and every episode truncates).
    assert budgets == [2] and truncations == [0]


def test_validation_rows_after_a_checkpoint_are_replayed_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kw = {"env_id": "hpcgym/Rigid-v0", "eval_every": 128, "eval_episodes": 2}
    whole = train(tiny(tmp_path / "whole", **kw))
    cut = tiny(tmp_path / "cut", checkpoint_every=256, **kw)
    with monkeypatch.context() as m:
        crash_at(m, 300, KeyboardInterrupt)
        with pytest.raises(KeyboardInterrupt):
            train(cut)
    train(dataclasses.replace(cut, resume=True))
    pd.testing.assert_frame_equal(
        pd.read_csv(whole.run_dir / "validation.csv"),
        pd.read_csv(tmp_path / "cut" / "validation.csv"),
    )
