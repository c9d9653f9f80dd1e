"""A saved SB3 agent as an env policy (:class:`AgentPolicy`), under the one policy contract.

The agent is loaded without unpickling (:func:`hpcgym.agents.rl.saved.load_agent`) unless the
caller trusts its pickled zip, and plays under its card's decoding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.agents.rl.decode import agent_action, sample_rng
from hpcgym.errors import SpecError
from hpcgym.policies.contract import EPISODE_KEYS, EnvPolicy
from hpcgym.policies.layout import Blocks, menu_blocks


class AgentPolicy(EnvPolicy):
    """A saved SB3 agent, acting with the mask applied when it can take one.

    It plays under its card's decoding (``card.decode``, :mod:`hpcgym.agents.rl.decode`); sampled
    decoding draws from a generator seeded with the episode's seed, so every decoding is
    reproducible.

    The env gets the card's encoding arguments (observation, windows, levels, ...), never its
    episode arguments (:data:`EPISODE_KEYS`), so the agent schedules the evaluation's jobs. A
    MaskablePPO agent trained with a resize budget runs in an env with the same budget
    (``resize_budget``), as in training.
    """

    def __init__(self, path: str | Path, trust_pickle: bool = False) -> None:
        from hpcgym.agents.rl.saved import load_agent

        self.model, self.card = load_agent(path, trust_pickle=trust_pickle)
        kw = self.card.env_kwargs
        self.env_overrides = {k: v for k, v in kw.items() if k not in EPISODE_KEYS}
        if self.card.resize_budget is not None:
            self.env_overrides["resize_budget"] = self.card.resize_budget
        self._masked = self.card.algo == "maskable_ppo"
        if not self._masked and self.card.decode != "greedy":
            raise SpecError(
                f"{path}: the card says decode={self.card.decode}, which reads the masked "
                f"distribution; a {self.card.algo} agent plays greedy only (set it in the card)"
            )
        self._blocks: Blocks | None = None
        self._rng = sample_rng(0)

    def bind(self, env: Any) -> None:
        """Check the env is the agent's preset, with the agent's resize budget.

        Another version of the same preset is accepted when its spaces are the ones the agent
        was trained with (``hpcgym/Malleable-v1`` has ``Malleable-v0``'s menu and observations
        and another objective): the agent then plays that version's episodes.
        """
        env_id = env.spec.id if env.spec is not None else None
        if env_id != self.card.env_id and not self._same_interface(env, env_id):
            raise SpecError(f"agent trained on {self.card.env_id}, asked to run on {env_id}")
        budget = self.card.resize_budget
        if budget is not None and env.unwrapped.config.resize_budget != budget:
            raise SpecError(
                f"agent trained with resize_budget={budget}: make the env with "
                f"resize_budget={budget} (policy.env_overrides has it)"
            )
        self._blocks = menu_blocks(env)

    def _same_interface(self, env: Any, env_id: str | None) -> bool:
        from hpcgym.agents.rl.saved import describe_space

        family = self.card.env_id.rsplit("-v", 1)[0]
        return (
            env_id is not None
            and env_id.rsplit("-v", 1)[0] == family
            and describe_space(env.observation_space) == self.card.observation_space
            and describe_space(env.action_space) == self.card.action_space
        )

    def reset(self, seed: int) -> None:
        """A new episode: sampled decoding draws from a generator seeded with ``seed``."""
        self._rng = sample_rng(seed)

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The model's action under the card's decoding.

        An unmasked model's illegal choice becomes advance.
        """
        if self._masked:
            return agent_action(self.model, obs, mask, self.card.decode, self._blocks, self._rng)
        a = agent_action(self.model, obs, None, "greedy", None)
        return a if mask[a] else 0
