"""The engine agents' cards by file name, and the reader of an engine agent's folder.

*Engine agents* (score, planner, distilled, order) play on the bare engine as a baseline does;
their folder holds one card named after its kind (:data:`ENGINE_CARDS`), and
:func:`load_engine_card` reads whichever it is. The registry of every kind of card, SB3 agents'
included, is :mod:`hpcgym.agents.cards`.
"""

from __future__ import annotations

from pathlib import Path

from hpcgym.agents.engine.distill import DistilledCard
from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.agents.engine.order import OrderCard
from hpcgym.agents.engine.score import ScoreCard
from hpcgym.cli_checks import read_text_file
from hpcgym.errors import SpecError

EngineCard = ScoreCard | PlannerCard | DistilledCard | OrderCard
"""A card of an agent that plays on the bare engine (each has ``scheduler_for``)."""

ENGINE_CARDS: dict[str, type[EngineCard]] = {
    card.file_name: card for card in (PlannerCard, DistilledCard, OrderCard, ScoreCard)
}
"""The engine agents' cards by file name, in the order a folder is searched."""


def engine_card_path(path: str | Path) -> Path:
    """The card of an engine agent given as its folder or its card file (existing or not)."""
    p = Path(path)
    if not p.is_dir():
        return p
    for name in ENGINE_CARDS:
        if (p / name).is_file():
            return p / name
    return p / ScoreCard.file_name


def is_engine_agent(path: str | Path) -> bool:
    """Whether ``path`` (a folder or a card file) holds an engine agent's card."""
    p = engine_card_path(path)
    return p.name in ENGINE_CARDS and p.is_file()


def load_engine_card(path: str | Path) -> EngineCard:
    """The score, planner, distilled or order agent at ``path`` (its folder or card file).

    Raises:
        SpecError: No card there, or not a valid one (the message names the file).
    """
    p = engine_card_path(path)
    if not p.is_file():
        raise SpecError(
            f"no score agent at {path} (no {ScoreCard.file_name}); train one with "
            "hpcgym search-score"
        )
    kind = ENGINE_CARDS.get(p.name, ScoreCard)
    return kind.from_json(read_text_file(p, "an agent card"), str(p))
