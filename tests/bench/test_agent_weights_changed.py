"""A run repeated or resumed with an agent whose weights changed is refused (issue "Hardening
III", N9): ``bench --from`` and ``--resume`` used to run the new weights without a word, the
SHA-256 in run.json never compared."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import hpcgym  # noqa: F401  (registers the presets)
from hpcgym.agents import make_agent, save_agent
from hpcgym.agents.rl.saved import card_for
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.runinfo import read_record
from hpcgym.cli import main
from hpcgym.errors import SpecError

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}


def _train(path: Path, seed: int) -> None:
    model = make_agent(gym.make(ENV_ID, **KWARGS), seed=seed, n_steps=64, batch_size=64, n_epochs=1)
    model.learn(64)
    save_agent(model, card_for(model, "maskable_ppo", ENV_ID, KWARGS, seed=seed), path)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    agent = tmp_path_factory.mktemp("saved") / "agent-dir"
    _train(agent / "agent", seed=0)
    return agent


@pytest.fixture(scope="module")
def agent_run(saved: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """A finished run of an agent and fcfs; then the agent retrained in place.

    Shared by the two tests below, which are refused before anything runs; each checks that the
    run is still the finished one.
    """
    tmp_path = tmp_path_factory.mktemp("changed")
    agent = tmp_path / "agent-dir"
    shutil.copytree(saved, agent)  # trained with seed 0
    out = tmp_path / "out"
    sc = scenarios.get("tiny-v0")
    assert run_bench([sc], [str(agent), "fcfs"], out=out, executor="serial", progress=False) == 0
    (folder,) = (out / "tiny-v0").iterdir()
    old = read_record(folder)["config"]["agents"][str(agent)]["sha256"]
    _train(agent / "agent", seed=1)
    import hashlib

    new = hashlib.sha256((agent / "agent.safetensors").read_bytes()).hexdigest()
    assert old != new
    return agent, folder, old, new


def test_from_refuses_an_agent_whose_weights_changed(agent_run, tmp_path, capsys):
    agent, folder, old, new = agent_run
    capsys.readouterr()
    argv = ["bench", "--from", str(folder / "run.json"), "--executor", "serial",
            "--no-progress", "--run-dir", str(tmp_path / "again")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1
    assert f"agent {agent}" in err and old in err and new in err
    assert "without --from" in err and "restore" in err
    assert not (tmp_path / "again").exists()
    assert json.loads((folder / "run.json").read_text())["status"] == "complete"


def test_resume_refuses_an_agent_whose_weights_changed(agent_run):
    agent, folder, old, new = agent_run
    sc = scenarios.get("tiny-v0")
    kw = {"executor": "serial", "progress": False, "resume": True}
    for where in ({"run_dir": folder}, {"out": folder.parent.parent}):
        with pytest.raises(SpecError) as info:
            run_bench([sc], [str(agent), "fcfs"], **kw, **where)  # type: ignore[arg-type]
        message = str(info.value)
        assert f"agent {agent}" in message and old in message and new in message
        assert "restore" in message
    assert json.loads((folder / "run.json").read_text())["status"] == "complete"


def test_unchanged_weights_repeat_as_before(saved, tmp_path, capsys):
    agent = tmp_path / "agent-dir"
    shutil.copytree(saved, agent)  # trained with seed 0
    sc = scenarios.get("tiny-v0")
    first = tmp_path / "a"
    assert run_bench([sc], [str(agent)], run_dir=first, executor="serial", progress=False) == 0
    argv = ["bench", "--from", str(first / "run.json"), "--executor", "serial",
            "--no-progress", "--run-dir", str(tmp_path / "b")]  # fmt: skip
    assert main(argv) == 0
    assert (first / "results.csv").read_bytes() == (tmp_path / "b" / "results.csv").read_bytes()


@pytest.mark.parametrize("text", ["true", "not JSON", "[]", '{"algo": 3}', '{"env_id": 1}'])
def test_an_agent_whose_card_is_not_one_is_refused_before_the_run(
    saved, tmp_path, capsys, monkeypatch, text
):
    """Found by tests/fuzz/test_bench_files_fuzz.py: on a preset without walltime kills (where
    nothing read the card before run.json was made), a card that is not JSON or not an object
    ended bench in a JSONDecodeError or AttributeError traceback. Seen failing before the fix."""
    agent = tmp_path / "agent-dir"
    shutil.copytree(saved, agent)
    (agent / "agent.json").write_text(text)
    sc = scenarios.Scenario(
        "nokill-test", "hpcgym/Malleable-v0", {**KWARGS, "kill_on_walltime": False}, (1000,), ()
    )
    monkeypatch.setitem(scenarios._SCENARIOS, sc.name, sc)
    argv = ["bench", "--scenario", sc.name, "--policy", str(agent), "--executor", "serial"]
    assert main([*argv, "--no-progress", "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert str(agent / "agent.json") in err and not (tmp_path / "run").exists()
