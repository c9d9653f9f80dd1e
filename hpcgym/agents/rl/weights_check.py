"""Does a card describe the network its weights fit? Checked before any memory is spent.

A card's ``policy_kwargs`` size the network (``hidden``, ``embed``, ``net_arch``, ...): a 1 KB
card asking for widths of 1e8 would make torch allocate tens of GB before the weights were
even read. :func:`check_card_fits` builds the card's network on torch's ``meta`` device (shapes
only, no storage) and compares every tensor with the shapes in the weights file's header
(read without loading a tensor); only a network the weights fill exactly is then built.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hpcgym.errors import SpecError, first_line


def weight_shapes(weights: Path) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape, from a safetensors file's header (no tensor is loaded).

    Raises:
        SpecError: The file is not a safetensors file, or is cut short (its header says how
            long its tensors are).
    """
    from safetensors import safe_open

    try:
        with safe_open(str(weights), framework="pt") as f:
            return {name: tuple(f.get_slice(name).get_shape()) for name in f.keys()}  # noqa: SIM118
    except Exception as e:  # safetensors raises its own error types
        raise SpecError(
            f"{weights}: not a safetensors weights file, or one cut short ({e}); copy the "
            "agent (its .safetensors and .json) again from where it came, or train it again"
        ) from None


@contextlib.contextmanager
def shapes_only() -> Iterator[None]:
    """Build modules on torch's ``meta`` device: shapes without storage.

    SB3 moves some submodules ``.to(device)`` as it builds them, which a meta tensor cannot do;
    in the block ``Module.to`` leaves a module where it is (and the block is not thread-safe).
    """
    import torch

    real = torch.nn.Module.to
    torch.nn.Module.to = lambda self, *args, **kwargs: self  # type: ignore[method-assign]
    try:
        with torch.device("meta"):
            yield
    finally:
        torch.nn.Module.to = real  # type: ignore[method-assign]


def check_card_fits(card: Any, card_path: Path, weights: Path, build: Callable[[], Any]) -> None:
    """Refuse a card whose network is not the one stored in ``weights``.

    Args:
        card: The agent's card (``hpcgym.agents.rl.saved.AgentCard``).
        card_path: Where it was read (for messages).
        weights: The safetensors file.
        build: Builds the card's policy for its env (``hpcgym.agents.rl.saved.build_policy``,
            which owns reading a card); called here on the ``meta`` device only.

    Raises:
        SpecError: The card's ``policy_kwargs`` do not build its policy class, or build a
            network with a tensor the weights lack, lack a tensor the weights hold, or give a
            tensor another shape than the weights': naming the card, the tensor and both shapes.
    """
    shapes = weight_shapes(weights)
    fix = (
        f"The card does not belong to the weights {weights.name}: restore the card written "
        "with them, or train the agent again"
    )
    try:
        with shapes_only():
            policy = build()
    except SpecError:
        raise
    except Exception as e:
        raise SpecError(
            f"{card_path}: its policy_kwargs do not build a {card.policy} "
            f"({type(e).__name__}: {first_line(e)}). {fix}"
        ) from None
    state = set(policy.state_dict())
    named = [
        *policy.named_parameters(remove_duplicate=False),
        *policy.named_buffers(remove_duplicate=False),
    ]
    groups: dict[int, tuple[Any, list[str]]] = {}  # one tensor, all its names (shared ones)
    for name, tensor in named:
        if name in state:
            groups.setdefault(id(tensor), (tensor, []))[1].append(name)
    for tensor, names in groups.values():
        asked = tuple(tensor.shape)
        stored = [n for n in names if n in shapes]
        if not stored:
            raise SpecError(
                f"{card_path}: the network its policy_kwargs describe has a tensor {names[0]} "
                f"{list(asked)} that {weights.name} does not hold. {fix}"
            )
        for n in stored:
            if shapes[n] != asked:
                raise SpecError(
                    f"{card_path}: its policy_kwargs give tensor {n} the shape {list(asked)}, "
                    f"but {weights.name} holds {list(shapes[n])}. {fix}"
                )
    extra = sorted(set(shapes) - state)
    if extra:
        raise SpecError(
            f"{card_path}: {weights.name} holds tensor {extra[0]} {list(shapes[extra[0]])}, "
            f"which the network its policy_kwargs describe does not have. {fix}"
        )
