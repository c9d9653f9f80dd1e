"""A resumed run whose seed sweeps gained members: play only the new members' episodes.

A sweep agent (``--policy runs/sweep``, one member per ``s<seed>/`` folder) that gained seeds
since a run changes the run's configuration: each member is an agent of the configuration, by
its weights' SHA-256 (:func:`hpcgym.bench.runinfo.config_hash`). ``--resume`` of such a run used
to be refused, and the whole run had to be played again. A run *extends* its recorded
configuration when the two differ only by agents added: every recorded agent is still there
with the same weights (and decoding), every scenario, seed and policy is the same. Then the
stored cells are this configuration's too, and ``--resume`` plays only the cells they lack.

``run.json`` keeps the history under ``"extends"``: one entry per extension, with the hash of the
configuration it extended, when, and the agents it added. Cells carry the hash of the
configuration that stored them; a cell of a hash in that history is read as this run's
(:func:`accepted_hashes`). A member removed, or whose weights changed, is no extension: the
resume is refused as before (:func:`hpcgym.bench.runinfo.check_agents_unchanged`).
"""

from __future__ import annotations

import re
from typing import Any

from hpcgym.bench.runinfo import config_hash
from hpcgym.errors import SpecError
from hpcgym.provenance import now_utc

EXTENDS = "extends"
_HASH = re.compile(r"[0-9a-f]{8}")


def added_agents(recorded: dict[str, Any], current: dict[str, Any]) -> list[str] | None:
    """The agents ``current`` adds to the ``recorded`` configuration, if it only adds agents.

    Returns:
        The added agents' policy keys, sorted (empty when the two are the same configuration),
        or None when ``current`` differs otherwise (a scenario, a seed, a policy, an agent
        removed or with other weights).
    """
    then = recorded.get("agents")
    now = current.get("agents")
    if not isinstance(then, dict) or not isinstance(now, dict) or not set(then) <= set(now):
        return None
    try:
        same = config_hash({**current, "agents": {k: now[k] for k in then}}) == config_hash(
            recorded
        )
    except (KeyError, TypeError, AttributeError, ValueError):  # a hand-edited run.json
        return None
    return sorted(set(now) - set(then)) if same else None


def extension(earlier_hash: str, added: list[str]) -> dict[str, Any]:
    """The ``run.json`` history entry of one extension."""
    return {"from_hash": earlier_hash, "at": now_utc(), "added_agents": added}


def history(record: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The extensions a ``run.json`` record lists (none when it has no ``"extends"``).

    Raises:
        SpecError: The entry is not a list of extensions with an eight-hex-digit ``from_hash``
            (the file was edited): naming ``where`` and what to do.
    """
    entries = record.get(EXTENDS, [])
    good = isinstance(entries, list) and all(
        isinstance(e, dict)
        and isinstance(e.get("from_hash"), str)
        and _HASH.fullmatch(e["from_hash"])
        for e in entries
    )
    if not good:
        raise SpecError(
            f"{where}: its {EXTENDS!r} entry is not a list of extensions with a 'from_hash' "
            "of eight hex digits (the file was edited); restore it, or start a new run "
            "without --resume"
        )
    return list(entries)


def accepted_hashes(record: dict[str, Any], extends: list[dict[str, Any]]) -> frozenset[str]:
    """The configuration hashes whose stored cells belong to the run ``record`` describes.

    ``extends`` is the record's :func:`history`.
    """
    own = record.get("config_hash")
    return frozenset({*(e["from_hash"] for e in extends), *([own] if isinstance(own, str) else [])})
