from __future__ import annotations

import base64
import contextlib
import json
import pickle
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from agent_helpers import ENV_ID, KWARGS, greedy_actions

import hpcgym
from hpcgym.agents import load_agent, make_agent, save_agent
from hpcgym.agents.rl.saved import AgentCard, card_for
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.policy_names import make_env_policy, policy_kind
from hpcgym.cli import main
from hpcgym.errors import SpecError


@pytest.fixture(scope="module")
def trained() -> object:
    env = gym.make(ENV_ID, **KWARGS)
    model = make_agent(env, seed=1, n_steps=64, batch_size=64, n_epochs=1)
    model.learn(128)
    return model


class Payload:
    """Unpickling this creates the file ``marker``: what a crafted agent could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def crafted_zip(folder: Path, marker: Path) -> Path:
    """An SB3-style zip whose ``data`` holds a pickled payload, with an hpcgym card beside it."""
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": blob}}
    path = folder / "agent.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.9.2")
    (folder / "agent.json").write_text(json.dumps({"algo": "maskable_ppo", "env_id": ENV_ID}))
    return path


def test_a_crafted_pickle_is_not_run_by_the_default_loaders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    path = crafted_zip(tmp_path, marker)
    with pytest.raises(SpecError, match=r"saved with pickle.*--trust-pickle"):
        load_agent(path)
    assert policy_kind(str(tmp_path)) == "agent"
    with pytest.raises(SpecError, match="--trust-pickle"):
        make_env_policy(str(tmp_path))
    with pytest.raises(SpecError, match="--trust-pickle"):
        evaluate([str(path)], ENV_ID, [0], KWARGS)
    assert main(["evaluate", "--env", ENV_ID, "--policy", str(path), "--episodes", "1"]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
    assert not marker.exists()
    # The payload is live: trusting the file runs it (which is why it needs the flag).
    with contextlib.suppress(Exception):
        load_agent(path, trust_pickle=True)
    assert marker.exists()


def test_a_saved_agent_is_weights_and_a_card_and_loads_without_unpickling(
    trained: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = card_for(trained, "maskable_ppo", ENV_ID, KWARGS, seed=1, training={"note": "t"})
    path = save_agent(trained, card, tmp_path / "agent")
    assert path.name == "agent.safetensors" and path.read_bytes()[8:9] == b"{"
    raw = json.loads((tmp_path / "agent.json").read_text())
    assert raw["format"] == "hpcgym-agent/1" and raw["policy"] == "JobScoringPolicy"
    assert raw["hpcgym_version"] == hpcgym.__version__ and raw["timesteps"] == 128
    assert raw["action_space"] == {"type": "Discrete", "n": int(gym.make(ENV_ID).action_space.n)}  # type: ignore[attr-defined]
    queue = gym.make(ENV_ID, **KWARGS).observation_space["queue"]  # type: ignore[index]
    assert raw["observation_space"]["spaces"]["queue"] == {
        "type": "Box",
        "shape": list(queue.shape),
        "dtype": "float32",
    }
    assert set(raw["policy_kwargs"]["features_extractor_kwargs"]["blocks"]) >= {"start"}
    assert raw["training"] == {"note": "t"}

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the safe loader unpickled something")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    monkeypatch.setattr(torch, "load", refuse)
    model, loaded = load_agent(tmp_path)
    assert loaded == AgentCard.from_json((tmp_path / "agent.json").read_text())
    assert greedy_actions(model) == greedy_actions(trained)


def test_the_weights_file_depends_only_on_the_weights(trained: object, tmp_path: Path) -> None:
    # Saved twice (the second time after a reload): the same bytes, so a retrained agent can
    # be compared with cmp. Each shared tensor is stored once, and reloads into every name.
    card = card_for(trained, "maskable_ppo", ENV_ID, KWARGS, seed=1)
    one = save_agent(trained, card, tmp_path / "one" / "agent")
    model, _ = load_agent(one)
    two = save_agent(model, card, tmp_path / "two" / "agent")
    assert one.read_bytes() == two.read_bytes()
    header = json.loads(one.read_bytes()[8 : 8 + int.from_bytes(one.read_bytes()[:8], "little")])
    assert json.loads(header.pop("__metadata__")["hpcgym"]) == {
        "algo": "maskable_ppo",
        "format": "hpcgym-agent/1",
    }
    state = trained.policy.state_dict()  # type: ignore[attr-defined]
    assert len(header) < len(state)  # the shared extractor is stored under one name
    loaded = model.policy.state_dict()  # type: ignore[attr-defined]
    assert loaded.keys() == state.keys()
    assert all(torch.equal(loaded[k], state[k]) for k in state)


def test_a_card_cannot_name_a_class_to_import(trained: object, tmp_path: Path) -> None:
    card = card_for(trained, "maskable_ppo", ENV_ID, KWARGS)
    save_agent(trained, card, tmp_path / "agent")
    raw = json.loads((tmp_path / "agent.json").read_text())
    (tmp_path / "agent.json").write_text(json.dumps({**raw, "policy": "os.system"}))
    with pytest.raises(SpecError, match=r"unknown policy class 'os\.system'"):
        load_agent(tmp_path)
    raw["policy_kwargs"]["activation_fn"] = {"torch": "os.system"}
    (tmp_path / "agent.json").write_text(json.dumps(raw))
    with pytest.raises(SpecError, match=r"not a torch\.nn/optim class"):
        load_agent(tmp_path)


def test_a_card_whose_spaces_no_longer_match_is_refused(trained: object, tmp_path: Path) -> None:
    card = card_for(trained, "maskable_ppo", ENV_ID, KWARGS)
    save_agent(trained, card, tmp_path / "agent")
    raw = json.loads((tmp_path / "agent.json").read_text())
    raw["action_space"]["n"] += 1
    (tmp_path / "agent.json").write_text(json.dumps(raw))
    with pytest.raises(SpecError, match=r"agent's action space .* is not the one of"):
        load_agent(tmp_path)


def test_a_trusted_pickled_agent_loads_and_converts_to_the_safe_form(
    trained: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    trained.save(old / "agent.zip")  # type: ignore[attr-defined]
    legacy = {"algo": "maskable_ppo", "env_id": ENV_ID, "env_kwargs": KWARGS, "seed": 1}
    (old / "agent.json").write_text(json.dumps(legacy))
    with pytest.raises(SpecError, match="--trust-pickle"):
        load_agent(old)
    model, card = load_agent(old / "agent.zip", trust_pickle=True)
    assert card.policy == "JobScoringPolicy" and card.observation_space
    save_agent(model, card, tmp_path / "new" / "agent")
    safe, _ = load_agent(tmp_path / "new")
    assert greedy_actions(safe) == greedy_actions(trained)
    argv = ["evaluate", "--env", ENV_ID, "--env-kwargs", json.dumps(KWARGS), "--episodes", "1"]
    assert main([*argv, "--policy", str(old), "--trust-pickle"]) == 0
    assert "old" in capsys.readouterr().out


def test_make_agent_builds_the_job_scoring_policy_and_direct_construction_says_how() -> None:
    from sb3_contrib import MaskablePPO

    from hpcgym.agents.rl.networks import JobScoringPolicy

    env = gym.make(ENV_ID, **KWARGS)
    torch.set_num_threads(2)
    model = make_agent(env, n_steps=64, batch_size=64)
    assert isinstance(model.policy, JobScoringPolicy)
    assert torch.get_num_threads() == 1
    with pytest.raises(SpecError, match=r"make_agent\(env, algo='maskable_ppo'\)"):
        MaskablePPO(JobScoringPolicy, env)
    flat = gym.make("hpcgym/Rigid-v0", n_jobs=16, observation="flat")
    ppo = make_agent(flat, "ppo", n_steps=64, batch_size=64)
    assert type(ppo.policy).__name__ == "ActorCriticPolicy"
    with pytest.raises(SpecError, match="MaskablePPO policy"):
        make_agent(env, "ppo", policy="JobScoringPolicy")
    obs, _ = flat.reset(seed=0)
    assert np.isfinite(ppo.policy.predict_values(ppo.policy.obs_to_tensor(obs)[0]).item())
