"""Seed sweeps on disk: which folder is a sweep, and its members' agent folders.

``hpcgym train --seeds ... --out DIR`` and ``hpcgym search-score --seeds ... --out DIR`` write
one agent per seed under ``DIR/s<seed>``; ``DIR@best`` names each member's validation-chosen
``best`` agent instead.
"""

from __future__ import annotations

import re
from pathlib import Path

_MEMBER = re.compile(r"s(\d+)")
BEST = "@best"
"""Suffix of a sweep folder's name that picks its members' validation-chosen ``best`` agents."""


def sweep_members(name: str | Path) -> list[tuple[int, Path]]:
    """The ``(training seed, agent folder)`` of a sweep folder's members, by seed; else ``[]``.

    A sweep folder is a folder that is not itself a saved agent and whose sub-folders named
    ``s<seed>`` are saved agents (the layout of ``hpcgym train --seeds ... --out DIR``) or
    score agents (``hpcgym search-score --seeds ... --out DIR``).
    """
    from hpcgym.agents.engine.cards import is_engine_agent
    from hpcgym.agents.files import is_saved_agent

    text = str(name)
    best = text.endswith(BEST)
    folder = Path(text.removesuffix(BEST))
    if not folder.is_dir() or is_saved_agent(folder) or is_engine_agent(folder):
        return []
    members = []
    for child in folder.iterdir():
        m = _MEMBER.fullmatch(child.name)
        if not (m and child.is_dir()):
            continue
        if best and is_saved_agent(child / "best"):
            members.append((int(m.group(1)), child / "best"))
        elif not best and (is_saved_agent(child) or is_engine_agent(child)):
            members.append((int(m.group(1)), child))
    return sorted(members)
