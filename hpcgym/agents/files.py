"""Where a saved SB3 agent's files are: its weights and card, or an SB3 zip.

``hpcgym train`` saves an agent as ``<stem>.safetensors`` (its weights) beside ``<stem>.json``
(its card); a run folder's agent is ``agent``, its validation-chosen one ``best``. SB3's own
``model.save`` writes ``<stem>.zip``. These are the names only: reading and writing the files
needs torch (:mod:`hpcgym.agents.rl.saved`); finding them does not, so seed sweeps
(:mod:`hpcgym.agents.members`) and the benchmark use this module.
"""

from __future__ import annotations

from pathlib import Path

WEIGHTS_SUFFIX = ".safetensors"
"""The suffix of a saved agent's weights file."""


def model_paths(path: str | Path) -> tuple[Path, Path]:
    """``(weights, card)`` for ``path``: a run folder, or a file with or without its suffix."""
    p = Path(path)
    if p.is_dir():
        p = p / "agent"
    stem = p.with_suffix("") if p.suffix in (WEIGHTS_SUFFIX, ".json", ".zip") else p
    return stem.with_name(stem.name + WEIGHTS_SUFFIX), stem.with_name(stem.name + ".json")


def pickled_path(path: str | Path) -> Path:
    """The SB3 zip that ``path`` names (``model.save``'s format), existing or not."""
    weights, _ = model_paths(path)
    return weights.with_suffix(".zip")


def is_saved_agent(path: str | Path) -> bool:
    """Whether ``path`` names an agent: its card with weights, or a pickled SB3 zip."""
    weights, card = model_paths(path)
    return (weights.is_file() and card.is_file()) or pickled_path(path).is_file()
