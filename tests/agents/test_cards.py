"""One card base class and one registry: every kind reads through the same checks.

Each published card of each kind round-trips through its own ``to_json``; every kind turns the
same malformations into one ``SpecError`` naming the file; the engine agents' scheduler comes
from the card itself (``scheduler_for``), so the benchmark switches on no card class.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from hpcgym.agents.card import Card
from hpcgym.agents.cards import (
    CARDS,
    ENGINE_CARDS,
    engine_card_path,
    is_engine_agent,
    load_engine_card,
)
from hpcgym.agents.engine import distill, lookahead, order, score
from hpcgym.agents.rl.saved import AgentCard
from hpcgym.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = {
    "agent": ROOT / "agents/evolving-bc-infx-kind/s2/best.json",
    "score": ROOT / "agents/score-synlublin-easy/s2/score.json",
    "planner": ROOT / "agents/planner-nobf/s2/planner.json",
    "distilled": ROOT / "agents/distilled-bf/s2/distilled.json",
    "order": ROOT / "agents/evolving-order/s2/order.json",
}


def test_the_registry_holds_every_kind_once_with_its_own_file_name():
    assert set(CARDS) == set(PUBLISHED)
    assert all(issubclass(cls, Card) and cls.kind == kind for kind, cls in CARDS.items())
    names = [cls.file_name for cls in CARDS.values()]
    assert len(set(names)) == len(names)
    # The module constants that write the engine cards are the registry's names.
    assert set(ENGINE_CARDS) == {score.CARD, lookahead.CARD, distill.CARD, order.CARD}
    assert AgentCard.file_name == "agent.json"


@pytest.mark.parametrize("kind", sorted(PUBLISHED))
def test_every_published_card_round_trips_through_its_kind(kind):
    path = PUBLISHED[kind]
    card = CARDS[kind].from_json(path.read_text(), str(path))
    again = CARDS[kind].from_json(card.to_json(), "again")
    assert again == card
    assert json.loads(card.to_json()) == json.loads(again.to_json())


@pytest.mark.parametrize("kind", sorted(PUBLISHED))
@pytest.mark.parametrize(
    "change",
    [
        lambda raw: [raw],  # not an object
        lambda raw: {k: v for k, v in raw.items() if k != "env_id"},
        lambda raw: {**raw, "env_id": "hpcgym/NoSuch-v0"},
        lambda raw: {**raw, "seed": -1},
        lambda raw: {**raw, "seed": True},
        lambda raw: {**raw, "env_kwargs": 7},
    ],
    ids=["list", "no-env-id", "unknown-env", "negative-seed", "boolean-seed", "kwargs-int"],
)
def test_every_kind_refuses_the_same_malformations_in_one_line(kind, change):
    path = PUBLISHED[kind]
    text = json.dumps(change(json.loads(path.read_text())))
    cls = CARDS[kind]
    with pytest.raises(SpecError) as err:
        cls.from_json(text, "my/card.json")
    message = str(err.value)
    assert message.startswith(f"my/card.json: not {cls.label} (")
    assert "\n" not in message


@pytest.mark.parametrize("kind", sorted(k for k in PUBLISHED if CARDS[k].format is not None))
def test_every_engine_kind_refuses_another_format(kind):
    raw = json.loads(PUBLISHED[kind].read_text())
    with pytest.raises(SpecError, match="format 'other/1'"):
        CARDS[kind].from_json(json.dumps({**raw, "format": "other/1"}), "x.json")


@pytest.mark.parametrize("kind", ["score", "planner", "distilled", "order"])
def test_an_engine_agents_folder_loads_its_kind_and_gives_its_scheduler(kind):
    folder = PUBLISHED[kind].parent
    assert is_engine_agent(folder)
    assert engine_card_path(folder) == PUBLISHED[kind]
    card = load_engine_card(folder)
    assert type(card) is CARDS[kind]
    scheduler = card.scheduler_for(card.env_id, card.env_kwargs, str(folder))
    assert type(scheduler) is type(card.scheduler_for(card.env_id, card.env_kwargs, "x"))


def test_an_engine_agent_refuses_another_mode_by_its_own_rule():
    folder = PUBLISHED["planner"].parent  # reserve mode without backfilling
    card = load_engine_card(folder)
    easy_mode = {k: v for k, v in card.env_kwargs.items() if k != "selection"}
    with pytest.raises(SpecError, match="trained in reserve mode without backfilling"):
        card.scheduler_for("hpcgym/Rigid-v0", easy_mode, str(folder))
    evolving = load_engine_card(PUBLISHED["order"].parent)
    with pytest.raises(SpecError, match="orders evolving jobs"):
        evolving.scheduler_for("hpcgym/Rigid-v0", {}, "order-agent")


def test_an_empty_folder_is_no_engine_agent(tmp_path):
    assert not is_engine_agent(tmp_path)
    with pytest.raises(SpecError, match="no score agent at"):
        load_engine_card(tmp_path)


def test_the_benchmark_switches_on_no_card_class():
    tree = ast.parse((ROOT / "hpcgym/bench/episode.py").read_text())
    checks = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
    ]
    assert not [c for c in checks if "Card" in c]


def test_one_atomic_writer():
    users = [
        p.relative_to(ROOT)
        for p in (ROOT / "hpcgym").rglob("*.py")
        if "def write_atomic" in p.read_text()
    ]
    assert users == []
