"""The registry of agent cards, by kind.

Every card derives from :class:`hpcgym.agents.card.Card`; :data:`CARDS` lists the kinds: an SB3
agent's card (:mod:`hpcgym.agents.rl.saved`, beside its weights) and the engine agents' cards
(score, planner, distilled, order), whose folders :mod:`hpcgym.agents.engine.cards` reads
(:func:`load_engine_card`, :func:`is_engine_agent`; named here too).
"""

from __future__ import annotations

from hpcgym.agents.card import Card
from hpcgym.agents.engine.cards import (
    ENGINE_CARDS,
    EngineCard,
    engine_card_path,
    is_engine_agent,
    load_engine_card,
)
from hpcgym.agents.engine.distill import DistilledCard
from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.agents.engine.order import OrderCard
from hpcgym.agents.engine.score import ScoreCard
from hpcgym.agents.rl.saved import AgentCard

__all__ = [
    "CARDS",
    "ENGINE_CARDS",
    "EngineCard",
    "engine_card_path",
    "is_engine_agent",
    "load_engine_card",
]

CARDS: dict[str, type[Card]] = {
    card.kind: card for card in (AgentCard, ScoreCard, PlannerCard, DistilledCard, OrderCard)
}
"""Every kind of card, by its kind."""
