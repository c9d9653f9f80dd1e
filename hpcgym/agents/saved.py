"""Saved agents: an SB3 model zip plus a JSON sidecar naming its algorithm and env.

``hpcgym train`` writes ``<name>.zip`` and ``<name>.json``; :func:`load_agent` reads both, so a
saved agent is evaluated on the env it was trained for (for example with ``observation="flat"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcgym.errors import SpecError

ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")
"""Algorithm names of ``hpcgym train`` (file names of ``hpcgym/agents/hyperparams/*.yml``)."""


def algorithm_class(algo: str) -> Any:
    """The SB3 / sb3-contrib class of ``algo`` (imported on demand)."""
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    import stable_baselines3 as sb3

    classes = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}
    if algo not in classes:
        raise SpecError(f"unknown algorithm {algo!r}; choose from {', '.join(ALGORITHMS)}")
    return classes[algo]


@dataclass(frozen=True)
class AgentCard:
    """What a saved agent needs to be rebuilt: its algorithm and the env it was trained on."""

    algo: str
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    timesteps: int = 0
    resize_budget: int | None = None
    """Resizes per job allowed by the guard it was trained with (``hpcgym.agents.guard``)."""

    def to_json(self) -> str:
        """The card as JSON text."""
        return json.dumps(
            {
                "algo": self.algo,
                "env_id": self.env_id,
                "env_kwargs": self.env_kwargs,
                "seed": self.seed,
                "timesteps": self.timesteps,
                "resize_budget": self.resize_budget,
            },
            indent=2,
            sort_keys=True,
        )


def model_paths(path: str | Path) -> tuple[Path, Path]:
    """``(model zip, card json)`` for ``path``: a run folder, or a zip with or without ``.zip``."""
    p = Path(path)
    if p.is_dir():
        p = p / "agent"
    stem = p.with_suffix("") if p.suffix == ".zip" else p
    return stem.with_suffix(".zip"), stem.with_suffix(".json")


def save_agent(model: Any, card: AgentCard, path: str | Path) -> Path:
    """Write ``model`` and its card next to each other; return the zip's path."""
    zip_path, card_path = model_paths(path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    model.save(zip_path)
    card_path.write_text(card.to_json() + "\n")
    return zip_path


def load_agent(path: str | Path) -> tuple[Any, AgentCard]:
    """Load a saved agent on the CPU.

    Raises:
        SpecError: The zip or its card is missing or names an unknown algorithm.
    """
    zip_path, card_path = model_paths(path)
    if not zip_path.is_file():
        raise SpecError(f"no saved agent at {zip_path}; train one with `hpcgym train`")
    if not card_path.is_file():
        raise SpecError(f"{zip_path} has no card {card_path.name} (written by `hpcgym train`)")
    raw = json.loads(card_path.read_text())
    card = AgentCard(
        algo=str(raw["algo"]),
        env_id=str(raw["env_id"]),
        env_kwargs=dict(raw.get("env_kwargs", {})),
        seed=int(raw.get("seed", 0)),
        timesteps=int(raw.get("timesteps", 0)),
        resize_budget=raw.get("resize_budget"),
    )
    model = algorithm_class(card.algo).load(zip_path, device="cpu")
    return model, card
