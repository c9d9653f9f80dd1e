"""What every agent card shares: its kind, file name, format, common fields and one JSON reader.

An agent is a card (a JSON file saying what the agent is and how it was made) plus, for SB3
agents, weights. The five kinds (``agent``: an SB3 network; ``score``, ``planner``,
``distilled``, ``order``: engine agents) are frozen dataclasses deriving from :class:`Card`,
which reads the JSON, checks the format tag, reads the fields every card has (``env_id``,
``env_kwargs``, ``seed``, ``training``, ``hpcgym_version``) and turns every malformation into
one :class:`~hpcgym.errors.SpecError` naming the file. A kind only says how to read its own
fields (:meth:`Card.fields`). The registry of kinds is :mod:`hpcgym.agents.cards`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Self

from hpcgym.cli_checks import whole
from hpcgym.envs.registration import check_env_id
from hpcgym.errors import SpecError

_MALFORMED = (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError, SpecError)
"""What reading a card may raise on a malformed file (all become one ``SpecError``)."""


class Card:
    """The base of every agent card (a mixin of frozen dataclasses; see the module doc)."""

    kind: ClassVar[str] = ""
    """The registry key: ``agent``, ``score``, ``planner``, ``distilled`` or ``order``."""
    file_name: ClassVar[str] = ""
    """The card's file name in an agent folder (an SB3 agent's is ``<stem>.json``)."""
    format: ClassVar[str | None] = None
    """The ``format`` tag the card's JSON carries (``None``: not checked, older files)."""
    label: ClassVar[str] = "an agent card"
    """What the card is called in messages (``<file>: not <label> (...)``)."""
    features: ClassVar[tuple[str, ...] | None] = None
    """The feature names the card's JSON must list under ``features`` (``None``: none)."""

    @classmethod
    def fields(cls, raw: dict[str, Any], where: str) -> dict[str, Any]:
        """The keyword arguments of this kind's own fields, read from the JSON object ``raw``."""
        raise NotImplementedError

    @classmethod
    def from_json(cls, text: str, where: str | None = None) -> Self:
        """Read a card of this kind from its JSON text.

        Raises:
            SpecError: Not JSON, not an object, another format or feature set, a missing or
                ill-typed field, or a value the kind refuses; the message names ``where``.
        """
        where = where or f"{cls.kind} card"
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError(f"a JSON {type(raw).__name__}, not an object")
            if cls.format is not None and raw.get("format") != cls.format:
                raise ValueError(f"format {raw.get('format')!r}, not {cls.format!r}")
            if cls.features is not None and list(raw["features"]) != list(cls.features):
                raise ValueError("its features are not this hpcgym's")
            # A kind's own reading of a common field (a range on ``seed``) wins.
            return cls(**{**common_fields(raw, where), **cls.fields(raw, where)})
        except _MALFORMED as e:
            raise SpecError(f"{where}: not {cls.label} ({e})") from None


def common_fields(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The fields every card has, checked: the preset, its arguments, seed and provenance."""
    return {
        "env_id": check_env_id(raw["env_id"], where),
        "env_kwargs": dict(raw.get("env_kwargs") or {}),
        "seed": whole(raw.get("seed", 0), "seed"),
        "training": dict(raw.get("training") or {}),
        "hpcgym_version": str(raw.get("hpcgym_version", "")),
    }
