"""Decodings (greedy, kind-first, sampled): the unit rules, the model's probabilities, the card."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.rl.decode import agent_action, kind_first, policy_probs, sample_rng, sampled
from hpcgym.agents.rl.saved import AgentCard, load_agent
from hpcgym.agents.rl.train import TrainConfig, train
from hpcgym.bench.evaluate import evaluate
from hpcgym.errors import SpecError
from hpcgym.policies.layout import menu_blocks

BLOCKS = {"advance": (0, 1, 1), "start": (1, 8, 1), "shrink": (9, 2, 2)}
"""A menu: advance, 8 start slots, 2 running slots x 2 shrink levels (13 entries)."""


def test_the_kind_with_the_most_probability_wins_then_its_best_entry() -> None:
    # Advance 0.37, eight starts at 0.0787 each (0.63 in all): greedy advances, kind starts.
    probs = np.zeros(13)
    probs[0] = 0.37
    probs[1:9] = 0.63 / 8
    probs[5] += 1e-3
    mask = np.ones(13, dtype=bool)
    assert int(np.argmax(probs)) == 0
    assert kind_first(probs, mask, BLOCKS) == 5
    # Illegal entries carry no mass: with only two starts legal, advance's 0.37 wins.
    mask[1:9] = False
    mask[[2, 3]] = True
    assert kind_first(probs, mask, BLOCKS) == 0


def test_ties_go_to_the_earlier_block_and_entry() -> None:
    probs = np.zeros(13)
    probs[0] = 0.5
    probs[[3, 4]] = 0.25
    assert kind_first(probs, np.ones(13, dtype=bool), BLOCKS) == 0
    probs[0] = 0.0
    assert kind_first(probs, np.ones(13, dtype=bool), BLOCKS) == 3


def test_one_legal_block_is_greedy_and_no_legal_entry_is_refused() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        probs = rng.dirichlet(np.ones(13))
        mask = np.zeros(13, dtype=bool)
        mask[9:] = rng.random(4) < 0.7
        if not mask.any():
            continue
        assert kind_first(probs, mask, BLOCKS) == int(np.argmax(np.where(mask, probs, -1)))
    with pytest.raises(ValueError, match="no legal entry"):
        kind_first(np.ones(13) / 13, np.zeros(13, dtype=bool), BLOCKS)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("decode") / "kind"
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        seed=1,
        timesteps=128,
        env_kwargs={"n_jobs": 24},
        overrides={"n_steps": 64, "batch_size": 64, "n_epochs": 1, "decode": "kind"},
        out=str(out),
        eval_every=64,
        eval_episodes=1,
    )
    train(cfg)
    return out


def test_policy_probs_are_the_masked_distribution_greedy_plays(agent: Path) -> None:
    model, card = load_agent(agent)
    assert card.decode == "kind"
    env = gym.make(card.env_id, **card.env_kwargs)
    blocks = menu_blocks(env)
    obs, info = env.reset(seed=3)
    for _ in range(60):
        mask = info["action_mask"]
        p = policy_probs(model, obs, mask)
        assert p.shape == mask.shape and p.sum() == pytest.approx(1.0, abs=1e-5)
        assert (p[~mask.astype(bool)] < 1e-6).all()
        greedy = agent_action(model, obs, mask, "greedy", blocks)
        assert greedy == int(np.argmax(p))
        kind = agent_action(model, obs, mask, "kind", blocks)
        assert kind == kind_first(p, mask, blocks)
        obs, _, term, trunc, info = env.step(kind)
        if term or trunc:
            obs, info = env.reset()
    with pytest.raises(ValueError, match="decode must be"):
        agent_action(model, obs, info["action_mask"], "beam", blocks)
    with pytest.raises(ValueError, match="needs a generator"):
        agent_action(model, obs, info["action_mask"], "sample", blocks)


def test_the_card_carries_the_decoding_to_validation_and_the_bench(agent: Path) -> None:
    card = json.loads((agent / "agent.json").read_text())
    assert card["decode"] == "kind"
    assert json.loads((agent / "best.json").read_text())["decode"] == "kind"
    # The bench plays the agent as the card says: the same episode as playing kind by hand.
    model, saved = load_agent(agent)
    kwargs = {"n_jobs": 24}
    env = gym.make(saved.env_id, **{**saved.env_kwargs, **kwargs, "split": "test"})
    blocks = menu_blocks(env)
    obs, info = env.reset(seed=1000)
    done = False
    while not done:
        a = agent_action(model, obs, info["action_mask"], "kind", blocks)
        obs, _, term, trunc, info = env.step(a)
        done = term or trunc
    table = evaluate([str(agent)], saved.env_id, [1000], {**kwargs, "split": "test"})
    assert table["mean_bsld"].iloc[0] == pytest.approx(info["metrics"]["mean_bsld"], rel=1e-12)


def test_a_bad_decoding_is_refused_in_training_and_in_a_card(tmp_path: Path) -> None:
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0", timesteps=64, overrides={"decode": "beam"}, out=str(tmp_path)
    )
    with pytest.raises(SpecError, match="decode must be one of greedy, kind"):
        train(cfg)
    ppo = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        algo="ppo",
        timesteps=64,
        overrides={"decode": "kind"},
        out=str(tmp_path / "ppo"),
    )
    with pytest.raises(SpecError, match="only maskable_ppo"):
        train(ppo)
    text = AgentCard("maskable_ppo", "hpcgym/Rigid-v0", decode="kind").to_json()
    assert AgentCard.from_json(text).decode == "kind"
    with pytest.raises(SpecError, match="not an agent card"):
        AgentCard.from_json(text.replace('"kind"', '"beam"'))
    # A card written before decoding existed is greedy.
    old = json.loads(text)
    del old["decode"]
    assert AgentCard.from_json(json.dumps(old)).decode == "greedy"


def test_the_bench_player_decodes_as_its_card_says(
    agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hpcgym.agents.rl.decode as decode
    from hpcgym.agents.rl.env_policy import AgentPolicy

    def spread(model: object, obs: object, mask: np.ndarray) -> np.ndarray:
        # Advance is the single most likely entry, the starts together more likely still, the
        # last legal start the most likely of them: kind picks it, greedy would not.
        p = np.asarray(mask, dtype=float) * 0.01
        starts = np.flatnonzero(mask[1:]) + 1
        p[starts[-1] if len(starts) else 0] += 0.02
        p[0] = 0.9 * p[1:].sum() if mask[0] else 0.0
        return p / p.sum()

    monkeypatch.setattr(decode, "policy_probs", spread)
    player = AgentPolicy(agent)
    env = gym.make(player.card.env_id, **{**player.env_overrides, "n_jobs": 24})
    player.bind(env)
    blocks = menu_blocks(env)
    obs, info = env.reset(seed=2)
    choices = 0
    for _ in range(60):
        mask = info["action_mask"]
        a = player.act(obs, mask)
        assert a == kind_first(spread(None, obs, mask), mask, blocks)
        choices += int(mask[1:].sum() >= 2)
        # Advance while it is legal, so that a queue builds up and there is a choice to make.
        obs, _, term, trunc, info = env.step(0 if mask[0] else a)
        if term or trunc:
            break
    assert choices >= 10


def test_validation_plays_under_the_runs_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hpcgym.agents.rl.validation as validation

    used: list[str] = []
    real = validation.agent_action

    def recording(
        model: object, obs: object, mask: object, decode: str, blocks: object, rng: object
    ) -> int:
        used.append(decode)
        return real(model, obs, mask, decode, blocks, rng)  # type: ignore[arg-type]

    monkeypatch.setattr(validation, "agent_action", recording)
    for decode in ("kind", "greedy", "sample"):
        used.clear()
        cfg = TrainConfig(
            env_id="hpcgym/Rigid-v0",
            timesteps=64,
            env_kwargs={"n_jobs": 8},
            overrides={"n_steps": 32, "batch_size": 64, "n_epochs": 1, "decode": decode},
            out=str(tmp_path / decode),
            eval_every=64,
            eval_episodes=1,
        )
        train(cfg)
        assert used and set(used) == {decode}


def test_sampling_draws_legal_entries_in_proportion_and_is_seeded() -> None:
    probs = np.array([0.5, 0.2, 0.2, 0.1])
    mask = np.array([True, True, False, True])  # 0.5 / 0.2 / 0.1 renormalised over 0.8
    rng = np.random.default_rng(7)
    draws = np.array([sampled(probs, mask, rng) for _ in range(20_000)])
    assert not (draws == 2).any()
    freq = np.bincount(draws, minlength=4) / len(draws)
    assert freq == pytest.approx([0.625, 0.25, 0.0, 0.125], abs=0.015)
    # The same episode seed gives the same draws; another seed others; not the env's stream.
    one, two = sample_rng(5), sample_rng(5)
    first = [sampled(probs, mask, one) for _ in range(50)]
    assert first == [sampled(probs, mask, two) for _ in range(50)]
    other = sample_rng(6)
    assert first != [sampled(probs, mask, other) for _ in range(50)]
    assert sample_rng(5).random(4).tolist() != np.random.default_rng(5).random(4).tolist()
    with pytest.raises(ValueError, match="no legal entry"):
        sampled(np.array([0.5, 0.5, 0.0, 0.0]), np.array([False, False, True, True]), rng)


def test_an_agent_whose_card_says_sample_plays_seeded_draws(agent: Path, tmp_path: Path) -> None:
    # The documented way to play a trained agent another way: copy it, change the card.
    sample = tmp_path / "sample"
    sample.mkdir()
    for f in agent.glob("agent.*"):
        (sample / f.name).write_bytes(f.read_bytes())
    card = json.loads((sample / "agent.json").read_text())
    card["decode"] = "sample"
    (sample / "agent.json").write_text(json.dumps(card))
    model, saved = load_agent(sample)
    assert saved.decode == "sample"
    kwargs = {"n_jobs": 24, "split": "test"}

    def by_hand(seed: int, draws: int) -> tuple[list[int], float]:
        env = gym.make(saved.env_id, **{**saved.env_kwargs, **kwargs})
        blocks = menu_blocks(env)
        rng = sample_rng(draws)
        obs, info = env.reset(seed=seed)
        actions, done = [], False
        while not done:
            a = agent_action(model, obs, info["action_mask"], "sample", blocks, rng)
            actions.append(a)
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
        return actions, float(info["metrics"]["mean_bsld"])

    actions, score = by_hand(1000, 1000)
    for _ in range(2):  # the bench draws from the episode seed's generator, every time
        table = evaluate([str(sample)], saved.env_id, [1000], kwargs)
        assert table["mean_bsld"].iloc[0] == pytest.approx(score, rel=1e-12)
    # The draws matter: other draws on the same episode are other actions.
    other, _ = by_hand(1000, 1001)
    assert other != actions


def test_an_unmasked_agent_whose_card_asks_for_draws_is_refused(tmp_path: Path) -> None:
    from hpcgym.agents.rl.env_policy import AgentPolicy

    out = tmp_path / "ppo"
    cfg = TrainConfig(
        env_id="hpcgym/Rigid-v0",
        algo="ppo",
        timesteps=64,
        env_kwargs={"n_jobs": 8},
        overrides={"n_steps": 32, "batch_size": 32, "n_epochs": 1},
        out=str(out),
    )
    train(cfg)
    assert AgentPolicy(out).card.decode == "greedy"
    card = json.loads((out / "agent.json").read_text())
    card["decode"] = "sample"
    (out / "agent.json").write_text(json.dumps(card))
    with pytest.raises(SpecError, match="decode=sample, which reads the masked distribution"):
        AgentPolicy(out)
