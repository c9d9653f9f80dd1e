"""``make_agent``: an SB3 agent for an hpcgym env, with the project's policy, built by hand."""

from __future__ import annotations

from typing import Any

from hpcgym.agents.rl.saved import algorithm_class
from hpcgym.errors import SpecError

DEFAULT_THREADS = 1
"""torch threads when hpcgym builds an agent: its networks are small, so more threads only
contend (5,000 steps took 213 s on torch's default threads against 30 s on one)."""


def env_blocks(env: Any) -> dict[str, tuple[int, int, int]]:
    """The menu layout of an hpcgym env or of the first env of an SB3 VecEnv."""
    from stable_baselines3.common.vec_env import VecEnv

    from hpcgym.policies.layout import menu_blocks

    if isinstance(env, VecEnv):
        menu = env.get_attr("menu", indices=[0])[0]
        return {k: (int(a), int(b), int(c)) for k, (a, b, c) in menu.blocks.items()}
    return menu_blocks(env)


def default_policy(algo: str, env: Any) -> str:
    """``JobScoringPolicy`` for MaskablePPO on Dict observations, else SB3's MLP for the space."""
    from gymnasium import spaces

    is_dict = isinstance(env.observation_space, spaces.Dict)
    if algo == "maskable_ppo" and is_dict:
        return "JobScoringPolicy"
    return "MultiInputPolicy" if is_dict else "MlpPolicy"


def make_agent(
    env: Any,
    algo: str = "maskable_ppo",
    *,
    policy: Any = None,
    policy_kwargs: dict[str, Any] | None = None,
    threads: int | None = DEFAULT_THREADS,
    device: str = "cpu",
    lean: bool = False,
    exact: bool = False,
    **kwargs: Any,
) -> Any:
    """An SB3 / sb3-contrib agent for an hpcgym env, ready for ``learn``.

    Args:
        env: An hpcgym env (``gym.make("hpcgym/Rigid-v0")``, wrapped or not) or an SB3 VecEnv
            of them.
        algo: ``maskable_ppo``, ``ppo``, ``a2c`` or ``dqn``.
        policy: A policy class or name; default: ``JobScoringPolicy`` for MaskablePPO on the
            Dict observation, else ``MultiInputPolicy`` / ``MlpPolicy`` for the space.
            ``JobAttentionPolicy`` adds self-attention over the slots (MaskablePPO only).
        policy_kwargs: Extra policy arguments; hpcgym's policies' menu layout
            (``features_extractor_kwargs["blocks"]``) is filled in from ``env``.
        threads: Sets torch's intra-op threads for the whole process (see
            :data:`DEFAULT_THREADS`); ``None`` keeps torch's setting.
        device: torch device (the networks are small: the CPU is faster than a GPU round trip).
        lean: For MaskablePPO, :class:`~hpcgym.agents.rl.lean_ppo.LeanMaskablePPO` (cheaper
            rollouts and updates, the same agent in distribution) instead of sb3-contrib's class.
        exact: With ``lean``, :class:`~hpcgym.agents.rl.lean_ppo.ExactMaskablePPO` instead
            (sb3-contrib's agent bit for bit).
        **kwargs: The algorithm's arguments (``seed``, ``n_steps``, ``learning_rate``, ...).

    Raises:
        SpecError: An unknown algorithm, or one of hpcgym's policies with another algorithm.
    """
    import torch

    from hpcgym.agents.rl import networks
    from hpcgym.agents.rl.saved import HPCGYM_POLICIES

    cls = algorithm_class(algo)
    if lean and algo == "maskable_ppo":
        from hpcgym.agents.rl.lean_ppo import ExactMaskablePPO, LeanMaskablePPO

        cls = ExactMaskablePPO if exact else LeanMaskablePPO
    if threads is not None:
        torch.set_num_threads(max(1, threads))
    chosen = default_policy(algo, env) if policy is None else policy
    pkw = dict(policy_kwargs or {})
    ours = {name: getattr(networks, name) for name in HPCGYM_POLICIES}
    name = next((n for n, c in ours.items() if chosen in (n, c)), None)
    if name is not None:
        if algo != "maskable_ppo":
            raise SpecError(f"{name} is a MaskablePPO policy; use algo='maskable_ppo'")
        chosen = ours[name]
        fx = dict(pkw.get("features_extractor_kwargs") or {})
        fx.setdefault("blocks", env_blocks(env))
        pkw["features_extractor_kwargs"] = fx
    return cls(chosen, env, policy_kwargs=pkw or None, device=device, **kwargs)
