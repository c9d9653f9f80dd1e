"""Saved agents: the policy's weights (safetensors) and a JSON card; nothing is unpickled.

``hpcgym train`` writes ``<name>.safetensors`` (the policy's tensors) and ``<name>.json``, the
agent's card: the algorithm, the policy class by name and its ``policy_kwargs`` (JSON values),
the env id and arguments, the observation and action spaces, the resize budget, the hpcgym
version and the training configuration. :func:`load_agent` rebuilds the policy from the card
(policy classes are looked up by name among hpcgym's and the algorithm's own, never imported
from a path the file names) and reads the tensors, so a shared agent cannot run code.

SB3's own ``model.save`` zip stores parts of the model with pickle: loading it runs whatever
the file says. :func:`load_agent` refuses such a zip unless ``trust_pickle=True``
(``hpcgym evaluate --trust-pickle``); :func:`save_agent` turns a trusted one into the safe form.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hpcgym import atomic
from hpcgym._version import __version__
from hpcgym.agents.card import Card
from hpcgym.agents.files import (  # the files' names (re-exported: their older home)
    WEIGHTS_SUFFIX as WEIGHTS_SUFFIX,
)
from hpcgym.agents.files import (
    is_saved_agent as is_saved_agent,
)
from hpcgym.agents.files import (
    model_paths as model_paths,
)
from hpcgym.agents.files import (
    pickled_path as pickled_path,
)
from hpcgym.agents.rl.decode import check_decode
from hpcgym.cli_checks import read_text_file, whole
from hpcgym.errors import SpecError

ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")
"""Algorithm names of ``hpcgym train`` (file names of ``hpcgym/agents/hyperparams/*.yml``)."""

CARD_FORMAT = "hpcgym-agent/1"
"""The ``format`` field of cards written by :func:`save_agent`."""


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


HPCGYM_POLICIES = ("JobScoringPolicy", "JobAttentionPolicy")
"""hpcgym's own policy classes (``hpcgym.agents.rl.networks``), MaskablePPO only."""


def policy_class(algo: str, name: str) -> Any:
    """The policy class ``name`` of ``algo``: hpcgym's (:data:`HPCGYM_POLICIES`) or an alias.

    Raises:
        SpecError: ``name`` is neither (a card naming any other class is refused, not imported).
    """
    if name in HPCGYM_POLICIES:
        from hpcgym.agents.rl import networks

        return getattr(networks, name)
    aliases: dict[str, Any] = dict(algorithm_class(algo).policy_aliases)
    if name not in aliases:
        known = ", ".join([*HPCGYM_POLICIES, *aliases])
        raise SpecError(f"unknown policy class {name!r} for {algo}; known: {known}")
    return aliases[name]


def policy_name(algo: str, policy: Any) -> str:
    """The card's name of ``policy`` (a class or a name), one :func:`policy_class` loads back.

    Raises:
        SpecError: The class is neither hpcgym's nor one of the algorithm's.
    """
    if isinstance(policy, str):
        policy_class(algo, policy)
        return policy
    from hpcgym.agents.rl import networks

    for name in HPCGYM_POLICIES:
        if policy is getattr(networks, name):
            return name
    for name, cls in algorithm_class(algo).policy_aliases.items():
        if cls is policy:
            return str(name)
    raise SpecError(
        f"policy class {policy!r} is neither hpcgym's nor one of {algo}'s: its agent cannot be "
        "saved as weights plus a card (SB3's model.save can, with pickle)"
    )


# ---------------------------------------------------------------------------- JSON of kwargs
_TORCH_MODULES = ("nn", "optim")
"""Classes in ``policy_kwargs`` (``activation_fn=nn.ReLU``) are written by name from these."""


def _encode(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _encode(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, type):
        import torch

        name = value.__name__
        for mod in _TORCH_MODULES:
            if getattr(getattr(torch, mod), name, None) is value:
                return {"torch": f"{mod}.{name}"}
    raise SpecError(
        f"policy_kwargs {where}={value!r} cannot be written to the agent's card (JSON values "
        "and torch.nn / torch.optim classes only); save such a model with SB3's model.save"
    )


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"torch"}:
            import torch

            mod, _, name = str(value["torch"]).partition(".")
            cls = getattr(getattr(torch, mod), name, None) if mod in _TORCH_MODULES else None
            if not isinstance(cls, type):
                raise SpecError(f"agent card names {value['torch']!r}: not a torch.nn/optim class")
            return cls
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def describe_space(space: Any) -> dict[str, Any]:
    """A JSON description of a Gymnasium space: its type, shapes, dtypes and sizes."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {str(k): describe_space(v) for k, v in space.items()}}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": [int(n) for n in space.nvec.ravel()]}
    return {"type": type(space).__name__, "shape": list(space.shape), "dtype": str(space.dtype)}


# ---------------------------------------------------------------------------- the card
@dataclass(frozen=True)
class AgentCard(Card):
    """What a saved agent needs to be rebuilt and what produced it.

    Its file is ``<stem>.json`` beside ``<stem>.safetensors`` (``agent.json`` in a run folder);
    the ``format`` tag is written but not required, so cards of older ``agent.zip`` files read.
    """

    kind = "agent"
    file_name = "agent.json"
    label = "an agent card"

    algo: str
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    timesteps: int = 0
    resize_budget: int | None = None
    """Resizes per job allowed by the guard it was trained with (``hpcgym.agents.rl.guard``)."""
    policy: str = ""
    """Policy class name (``JobScoringPolicy``, ``JobAttentionPolicy``, ``MultiInputPolicy``,
    ``MlpPolicy``)."""
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    observation_space: dict[str, Any] = field(default_factory=dict)
    action_space: dict[str, Any] = field(default_factory=dict)
    hpcgym_version: str = ""
    training: dict[str, Any] = field(default_factory=dict)
    """The training run's configuration (resolved hyperparameters, seed, budget)."""
    decode: str = "greedy"
    """How the agent's distribution becomes one action (``hpcgym.agents.rl.decode``): ``greedy``
    (the most likely entry), ``kind`` (the most likely kind, then its best entry) or ``sample``
    (drawn, from a generator seeded with the episode's seed)."""

    def to_json(self) -> str:
        """The card as JSON text (with its ``format``)."""
        return json.dumps({"format": CARD_FORMAT, **asdict(self)}, indent=2, sort_keys=True)

    @classmethod
    def fields(cls, raw: dict[str, Any], where: str) -> dict[str, Any]:
        """The algorithm, network, spaces, budget and decoding (older ``agent.zip`` cards too)."""
        return {
            "algo": str(raw["algo"]),
            "timesteps": whole(raw.get("timesteps", 0), "timesteps", 0, 2**63 - 1),
            "resize_budget": raw.get("resize_budget"),
            "policy": str(raw.get("policy", "")),
            "policy_kwargs": dict(raw.get("policy_kwargs") or {}),
            "observation_space": dict(raw.get("observation_space") or {}),
            "action_space": dict(raw.get("action_space") or {}),
            "decode": check_decode(raw.get("decode", "greedy")),
        }


def card_for(
    model: Any,
    algo: str,
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    resize_budget: int | None = None,
    training: Mapping[str, Any] | None = None,
    decode: str = "greedy",
) -> AgentCard:
    """The card of an SB3 ``model`` of ``algo`` trained on ``env_id`` (spaces read from it)."""
    kwargs = dict(model.policy_kwargs or {})
    if getattr(model, "use_sde", False):
        kwargs["use_sde"] = True
    return AgentCard(
        algo=algo,
        env_id=env_id,
        env_kwargs=_encode(dict(env_kwargs or {}), "env_kwargs"),
        seed=seed,
        timesteps=int(model.num_timesteps),
        resize_budget=resize_budget,
        policy=policy_name(algo, type(model.policy)),
        policy_kwargs=_encode(kwargs, "policy_kwargs"),
        observation_space=describe_space(model.observation_space),
        action_space=describe_space(model.action_space),
        hpcgym_version=__version__,
        training=_encode(dict(training or {}), "training"),
        decode=check_decode(decode),
    )


# ---------------------------------------------------------------------------- files
def unique_tensors(module: Any) -> dict[str, Any]:
    """The module's state, each tensor once, under its first name in sorted order.

    SB3 policies that share their feature extractor hold the same tensors under several names
    (``features_extractor.*``, ``pi_features_extractor.*``, ...); safetensors stores each once,
    and ``safetensors.torch.load_model`` finds the other names again from the module.
    """
    state = module.state_dict()
    seen: set[tuple[Any, ...]] = set()
    out = {}
    for name in sorted(state):
        t = state[name]
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), t.shape, t.stride(), t.dtype)
        if key not in seen:
            seen.add(key)
            out[name] = t.contiguous()
    return out


def save_agent(model: Any, card: AgentCard, path: str | Path) -> Path:
    """Write the policy's weights and ``card`` (each atomically); return the weights' path.

    The weights file's bytes depend only on the weights: one metadata entry (safetensors keeps
    metadata in a hash map whose order changes from run to run, so several entries would not),
    tensors in name order. A retrained agent can then be compared with ``cmp``.

    Raises:
        OutputError: The disk is full (nothing half-written is left).
    """
    from safetensors.torch import save

    weights, card_path = model_paths(path)
    tag = json.dumps({"algo": card.algo, "format": CARD_FORMAT}, sort_keys=True)
    # Serialised in memory (the networks are small), then written as every output is: a full
    # disk is then an OutputError naming the file, not safetensors' own error type.
    atomic.write_bytes(weights, save(unique_tensors(model.policy), metadata={"hpcgym": tag}))
    atomic.write_text(card_path, card.to_json() + "\n")
    return weights


def _check_space(kind: str, recorded: dict[str, Any], actual: Any, card: AgentCard) -> None:
    if recorded and recorded != describe_space(actual):
        raise SpecError(
            f"the agent's {kind} space ({json.dumps(recorded)}) is not the one of "
            f"{card.env_id} with its card's arguments now ({json.dumps(describe_space(actual))}); "
            f"it was saved by hpcgym {card.hpcgym_version or '?'}, this is {__version__}"
        )


def build_policy(card: AgentCard, env: Any) -> Any:
    """The card's policy, freshly initialised, for ``env``'s spaces (checked against the card)."""
    _check_space("observation", card.observation_space, env.observation_space, card)
    _check_space("action", card.action_space, env.action_space, card)
    cls = policy_class(card.algo, card.policy)
    kwargs = _decode(card.policy_kwargs)
    return cls(env.observation_space, env.action_space, lambda _: 0.0, **kwargs)


def load_agent(
    path: str | Path, *, trust_pickle: bool = False, threads: int | None = 1
) -> tuple[Any, AgentCard]:
    """Load a saved agent on the CPU, for prediction (``model.predict``, ``model.policy``).

    Args:
        path: A run folder, or an agent's weights or card (with or without the suffix).
        trust_pickle: Also load an SB3 ``model.save`` zip, which unpickles (runs) its contents.
        threads: torch's intra-op threads (1: a small network, see ``docs/train-by-hand.md``);
            ``None`` leaves torch's setting.

    The model is the algorithm's class with the trained policy and no env; to train further,
    build one with :func:`hpcgym.agents.make_agent` and load ``model.policy.state_dict()``.

    Raises:
        SpecError: Nothing is saved there, the card is not one, names an unknown policy class or
            other spaces than its env has now, its ``policy_kwargs`` describe another network
            than the weights hold (checked before the network is built,
            :mod:`hpcgym.agents.rl.weights_check`), or the agent is a pickled zip and
            ``trust_pickle`` is false.
    """
    import gymnasium as gym
    import torch

    if threads is not None:
        torch.set_num_threads(max(1, threads))
    weights, card_path = model_paths(path)
    zip_path = pickled_path(path)
    if not weights.is_file():
        if zip_path.is_file():
            return _load_pickled(zip_path, card_path, trust_pickle)
        raise SpecError(f"no saved agent at {weights}; train one with `hpcgym train`")
    if not card_path.is_file():
        raise SpecError(f"{weights} has no card {card_path.name} (written by `hpcgym train`)")
    card = AgentCard.from_json(read_text_file(card_path, "an agent card"), str(card_path))
    if not card.policy:
        raise SpecError(f"{card_path} names no policy class: not a card of {weights.name}")
    from safetensors.torch import load_model

    from hpcgym.agents.rl.weights_check import check_card_fits

    env = gym.make(card.env_id, **card.env_kwargs)
    # before any memory goes to the network
    check_card_fits(card, card_path, weights, lambda: build_policy(card, env))
    policy = build_policy(card, env)
    env.close()
    try:
        load_model(policy, str(weights), device="cpu")
    except Exception as e:  # checked above; changed since, or a tensor torch cannot copy in
        message = " ".join(str(e).split())
        raise SpecError(
            f"{weights}: its tensors do not load into the network {card_path.name} describes "
            f"({message[:300]}); copy the agent (both files) again, or train it again"
        ) from None
    policy.set_training_mode(False)
    cls = algorithm_class(card.algo)
    model = cls(policy=type(policy), env=None, device="cpu", _init_setup_model=False)
    model.observation_space, model.action_space = policy.observation_space, policy.action_space
    model.policy = policy
    model.num_timesteps = card.timesteps
    if card.algo == "dqn":  # predict() reads these; exploration is off at deterministic=True
        model.q_net, model.q_net_target, model.exploration_rate = policy.q_net, None, 0.0
    return model, card


def _load_pickled(zip_path: Path, card_path: Path, trust_pickle: bool) -> tuple[Any, AgentCard]:
    if not trust_pickle:
        raise SpecError(
            f"{zip_path} is an SB3 zip saved with pickle: loading it runs any code it contains. "
            "Load it only if you trust its source, with --trust-pickle (trust_pickle=True in "
            "Python); hpcgym train now saves agents as .safetensors weights plus a JSON card"
        )
    if not card_path.is_file():
        raise SpecError(f"{zip_path} has no card {card_path.name} (written by `hpcgym train`)")
    card = AgentCard.from_json(read_text_file(card_path, "an agent card"), str(card_path))
    model = algorithm_class(card.algo).load(zip_path, device="cpu")
    # Complete the older card, so that save_agent(model, card, ...) writes a safe copy; a policy
    # the card cannot describe leaves it as it is (the model still predicts).
    with contextlib.suppress(SpecError):
        card = card_for(
            model,
            card.algo,
            card.env_id,
            card.env_kwargs,
            seed=card.seed,
            resize_budget=card.resize_budget,
            training=card.training,
        )
    return model, card
