from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.rl.saved import load_agent
from hpcgym.agents.rl.train import TrainConfig, load_hyperparams, train
from hpcgym.bench.evaluate import evaluate
from hpcgym.cli import main

TINY_HP = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}


def rollout(model: object, env_id: str, kwargs: dict[str, object], steps: int) -> list[int]:
    from hpcgym.agents.rl.guard import ResizeBudget

    env = ResizeBudget(gym.make(env_id, **kwargs), budget=2)
    obs, _ = env.reset(seed=7)
    actions = []
    for _ in range(steps):
        a, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)  # type: ignore[attr-defined]
        actions.append(int(a))
        obs, _, term, trunc, _ = env.step(int(a))
        if term or trunc:
            obs, _ = env.reset()
    return actions


def test_shipped_hyperparams_have_every_preset() -> None:
    for env_id in gym.registry:
        if env_id.startswith("hpcgym/"):
            hp = load_hyperparams("maskable_ppo", env_id)
            assert hp["policy"] == "JobScoringPolicy"


def test_training_is_deterministic_and_saved_agents_reload_and_evaluate_identically(
    tmp_path: Path,
) -> None:
    env_id, kwargs = "hpcgym/Malleable-v0", {"n_jobs": 16}
    runs = []
    for name in ("a", "b"):
        cfg = TrainConfig(
            env_id=env_id,
            seed=3,
            timesteps=256,
            env_kwargs=kwargs,
            overrides=TINY_HP,
            out=str(tmp_path / name),
            checkpoint_every=128,
        )
        runs.append(train(cfg))
    models = [load_agent(r.agent)[0] for r in runs]
    first, second = (rollout(m, env_id, kwargs, 300) for m in models)
    assert first == second
    assert len(set(first)) > 1
    a = dict(models[0].policy.state_dict())
    b = dict(models[1].policy.state_dict())
    assert all((a[k] == b[k]).all() for k in a)
    assert sorted(p.name for p in (tmp_path / "a" / "checkpoints").iterdir()) == [
        "agent_128_steps.json",
        "agent_128_steps.safetensors",
        "agent_256_steps.json",
        "agent_256_steps.safetensors",
        "state_128_steps.pt",
        "state_256_steps.pt",
    ]
    timing = json.loads((tmp_path / "a" / "timing.json").read_text())
    assert timing["timesteps"] == 256 and 0 < timing["env_seconds"] < timing["seconds"]
    episodes = pd.read_csv(tmp_path / "a" / "episodes.csv")
    assert list(episodes.columns)[:3] == ["timesteps", "env", "return"]
    # Reloaded, and evaluated twice through the CLI's code path: the same table.
    agent = str(runs[0].agent)
    one = evaluate([agent], env_id, [1000, 1001], kwargs)
    two = evaluate([agent], env_id, [1000, 1001], kwargs)
    pd.testing.assert_frame_equal(one, two)
    assert (one["invalid_actions"] == 0).all()
    assert list(one["policy"]) == ["a", "a"]


def test_train_cli_ppo_on_the_flat_observation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ppo"
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--algo", "ppo", "--timesteps", "128"]
    argv += ["--env-kwargs", '{"n_jobs": 16}', "--hp", "n_steps=64", "--hp", "batch_size=64"]
    argv += ["--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "agent:" in capsys.readouterr().out
    card = json.loads((out / "agent.json").read_text())
    assert card["env_kwargs"]["observation"] == "flat" and card["algo"] == "ppo"
    table = evaluate([str(out)], "hpcgym/Rigid-v0", [5], {"n_jobs": 16})  # a run folder
    assert table["jobs"].iloc[0] == 16 and table["invalid_actions"].iloc[0] == 0
    assert np.isfinite(table["mean_bsld"].iloc[0])


@pytest.mark.parametrize("env_id", ["hpcgym/Malleable-v0", "hpcgym/Rigid-v0"])
def test_mask_vec_env_trains_the_same_agent_as_dummy_vec_env(env_id: str, tmp_path: Path) -> None:
    # Masks read from the step infos, no copies, no Monitor: the same weights, episodes and
    # timing fields as SB3's DummyVecEnv + Monitor + env_method("action_masks").
    runs = {}
    for vec in ("dummy", "mask"):
        cfg = TrainConfig(
            env_id=env_id,
            seed=5,
            timesteps=512,
            env_kwargs={"n_jobs": 16},
            overrides=TINY_HP,
            out=str(tmp_path / vec),
            vec_env=vec,
        )
        runs[vec] = train(cfg)
    a, b = (dict(load_agent(r.agent)[0].policy.state_dict()) for r in runs.values())
    assert all((a[k] == b[k]).all() for k in a)
    one, two = (pd.read_csv(tmp_path / v / "episodes.csv") for v in ("dummy", "mask"))
    assert len(one) > 4
    pd.testing.assert_frame_equal(one, two)
    timing = json.loads((tmp_path / "mask" / "timing.json").read_text())
    assert timing["vec_env"] == "mask"
    assert 0 < timing["env_cpu_seconds"] < timing["cpu_seconds"]
    assert 0 < timing["update_cpu_seconds"] < timing["cpu_seconds"] - timing["env_cpu_seconds"]


def test_mask_vec_env_returns_the_masks_of_the_step_and_fresh_observations() -> None:
    from hpcgym.agents.rl.vec import make_mask_vec_env

    venv = make_mask_vec_env("hpcgym/Malleable-v0", 2, 0, {"n_jobs": 8})
    obs = venv.reset()
    for _ in range(200):
        masks = venv.env_method("action_masks")
        direct = [e.unwrapped.action_masks() for e in venv.envs]  # type: ignore[attr-defined]
        assert all((m == d).all() for m, d in zip(masks, direct, strict=True))
        actions = np.array([np.flatnonzero(m)[-1] for m in masks])
        new, _, dones, infos = venv.step(actions)
        assert new["queue"] is not obs["queue"]
        for done, info in zip(dones, infos, strict=True):
            if done:
                assert {"episode", "terminal_observation", "metrics"} <= set(info)
        obs = new
    venv.close()


def test_train_cli_pretrains_from_any_baseline_and_names_the_experts_on_a_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bc-easy"
    argv = ["train", "--env", "hpcgym/Rigid-v0", "--timesteps", "64", "--pretrain", "easy"]
    argv += ["--pretrain-episodes", "1", "--pretrain-epochs", "2", "--env-kwargs"]
    argv += ['{"n_jobs": 16}', "--hp", "n_steps=32", "--hp", "batch_size=32", "--hp"]
    argv += ["n_epochs=1", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    record = json.loads((out / "hyperparams.json").read_text())["pretrain"]
    assert record["expert"] == "easy" and record["samples"] > 0 and record["epochs"] == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--pretrain", "eazy", "--out", str(tmp_path / "x")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown expert 'eazy'" in err
    assert all(name in err for name in ("fcfs", "first-fit", "easy", "mebf", "sjf"))
    assert not (tmp_path / "x").exists()


def test_env_timer_counts_the_mask_fetch_and_passes_the_vec_env_through() -> None:
    from hpcgym.agents.rl.callbacks import TimedVecEnv
    from hpcgym.agents.rl.vec import make_mask_vec_env

    venv = TimedVecEnv(make_mask_vec_env("hpcgym/Rigid-v0", 2, 0, {"n_jobs": 8}))
    venv.reset()
    after_reset = venv.env_seconds
    assert venv.first_reset_seconds is not None and after_reset > 0
    masks = venv.env_method("action_masks")
    assert venv.env_seconds > after_reset and len(masks) == 2
    before = venv.env_seconds
    _, _, dones, _ = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    assert venv.env_seconds > before and dones.shape == (2,)
    assert venv.has_attr("action_masks") and venv.get_attr("render_mode") == [None, None]
    venv.close()


def test_malleable_training_kills_at_walltime_and_charges_the_lost_work() -> None:
    import gymnasium as gym

    from hpcgym.agents.rl.train import TrainConfig, resolve_hyperparams

    hp = resolve_hyperparams(TrainConfig(env_id="hpcgym/Malleable-v0"))
    kw = hp["env_kwargs"]
    assert kw["kill_on_walltime"] is True and kw["split"] == "train"
    assert kw["reward"] == {"bsld": 1.0, "killed": 100.0}
    # The training env's reward charges every kill: play first-fit (start the first queued job
    # that fits, else advance) until an episode has kills, and check its return.
    from hpcgym.agents.rl.imitation import make_expert
    from hpcgym.policies.layout import menu_blocks

    env = gym.make("hpcgym/Malleable-v0", **kw)
    act = make_expert("first-fit", menu_blocks(env))
    for seed in range(20):
        _, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            _, r, term, trunc, info = env.step(int(act(info["action_mask"])))
            total += float(r)
            done = term or trunc
        summary = env.unwrapped.sim.result().summary
        if summary["normalized_lost_work"] > 0:
            break
    assert summary["normalized_lost_work"] > 0, "no episode with a walltime kill"
    expected = summary["mean_bsld"] + 100.0 * summary["normalized_lost_work"]
    assert total == pytest.approx(-expected, rel=1e-9)


@pytest.mark.parametrize("verbose", [0, 1])
def test_training_leaves_no_folder_in_the_temporary_directory(
    verbose: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # SB3's own logger set-up makes an empty SB3-<time> folder there at every learn().
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        seed=1,
        timesteps=128,
        env_kwargs={"n_jobs": 16},
        overrides={**TINY_HP, "n_steps": 64, "batch_size": 64},
        out=str(tmp_path / "run"),
        verbose=verbose,
        tensorboard="",  # none, as when tensorboard is not installed
    )
    assert train(cfg).timesteps == 128
    # (torch keeps one ``torchinductor_<user>`` cache there, shared by every run)
    assert [p.name for p in scratch.iterdir() if p.name.startswith("SB3-")] == []
    printed = capsys.readouterr().out
    assert ("total_timesteps" in printed) == bool(verbose)  # SB3's table, as asked
