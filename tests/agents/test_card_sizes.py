"""A card asking for another network than its weights hold is refused before it is built
(issue "Hardening III", N10): a 1 KB card with hidden sizes of 1e8 made ``load_agent`` allocate
about 19 GB, then fail with a torch traceback."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
import torch

import hpcgym  # noqa: F401  (registers the presets)
import hpcgym.agents.rl.saved as saved
from hpcgym.agents import make_agent, save_agent
from hpcgym.agents.rl.saved import card_for, load_agent
from hpcgym.errors import SpecError

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agent")
    model = make_agent(gym.make(ENV_ID, **KWARGS), seed=0, n_steps=64, batch_size=64, n_epochs=1)
    save_agent(model, card_for(model, "maskable_ppo", ENV_ID, KWARGS), folder / "agent")
    return folder


def _edited(agent: Path, tmp_path: Path, edit) -> Path:
    """A copy of the agent whose card ``edit`` changed."""
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "agent.safetensors").write_bytes((agent / "agent.safetensors").read_bytes())
    card = json.loads((agent / "agent.json").read_text())
    edit(card)
    (copy / "agent.json").write_text(json.dumps(card))
    return copy


def _extractor(card: dict) -> dict:
    assert card["policy"] == "JobScoringPolicy", card["policy"]
    return card["policy_kwargs"].setdefault("features_extractor_kwargs", {})


def test_the_card_as_saved_loads(agent):
    model, card = load_agent(agent)
    assert card.policy == "JobScoringPolicy" and model.policy is not None


def test_a_wider_network_than_the_weights_is_refused_naming_the_tensor(agent, tmp_path):
    copy = _edited(agent, tmp_path, lambda c: _extractor(c).update(hidden=96))
    with pytest.raises(SpecError) as info:
        load_agent(copy)
    message = str(info.value)
    assert str(copy / "agent.json") in message and "policy_kwargs" in message
    assert "[96, " in message and "[64, " in message and "restore the card" in message
    assert "\n" not in message


def test_a_huge_network_is_refused_before_any_memory_goes_to_it(agent, tmp_path, monkeypatch):
    real = saved.build_policy

    def only_on_meta(card, env):
        hidden = card.policy_kwargs.get("features_extractor_kwargs", {}).get("hidden")
        if hidden == 10**8 and torch.empty(0).device.type != "meta":
            raise AssertionError("the card's 1e8-wide network was being built for real")
        return real(card, env)

    monkeypatch.setattr(saved, "build_policy", only_on_meta)
    copy = _edited(agent, tmp_path, lambda c: _extractor(c).update(hidden=10**8))
    with pytest.raises(SpecError, match=r"\[100000000, .*but agent\.safetensors holds"):
        load_agent(copy)


def test_kwargs_the_policy_does_not_take_are_refused(agent, tmp_path):
    copy = _edited(agent, tmp_path, lambda c: _extractor(c).update(widths=7))
    with pytest.raises(SpecError, match="policy_kwargs do not build a JobScoringPolicy"):
        load_agent(copy)


def test_weights_of_another_network_are_refused(agent, tmp_path):
    from safetensors.torch import load_file, save_file

    copy = _edited(agent, tmp_path, lambda c: None)
    tensors = load_file(str(copy / "agent.safetensors"))
    tensors["extra.weight"] = torch.zeros(3)
    save_file(tensors, str(copy / "agent.safetensors"))
    with pytest.raises(SpecError, match=r"holds tensor extra\.weight"):
        load_agent(copy)
    (copy / "agent.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(SpecError, match="not a safetensors weights file"):
        load_agent(copy)


def test_an_sb3_policy_card_with_a_huge_net_arch_is_refused(tmp_path):
    from hpcgym.agents.rl.saved import algorithm_class

    env = gym.make("hpcgym/Rigid-v0", n_jobs=12)
    model = algorithm_class("ppo")("MultiInputPolicy", env, seed=0, device="cpu")
    save_agent(model, card_for(model, "ppo", "hpcgym/Rigid-v0", {"n_jobs": 12}), tmp_path / "a")
    assert load_agent(tmp_path / "a")[1].policy == "MultiInputPolicy"
    card = json.loads((tmp_path / "a.json").read_text())
    card["policy_kwargs"]["net_arch"] = [10**8, 10**8]
    (tmp_path / "a.json").write_text(json.dumps(card))
    with pytest.raises(SpecError, match=r"the shape \[100000000, "):
        load_agent(tmp_path / "a")
