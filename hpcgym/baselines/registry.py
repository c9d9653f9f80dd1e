"""Baselines by name: ``make("easy")`` builds a fresh scheduler, ``names()`` lists them.

Entries are registered in ``hpcgym/baselines/__init__.py``, all in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hpcgym.baselines.base import BaseScheduler

_FACTORIES: dict[str, Callable[..., BaseScheduler]] = {}


def register(name: str, factory: Callable[..., BaseScheduler]) -> None:
    """Register ``factory`` (a class or function returning a scheduler) under ``name``.

    Raises:
        ValueError: ``name`` is taken.
    """
    if name in _FACTORIES:
        raise ValueError(f"baseline {name!r} is already registered")
    _FACTORIES[name] = factory


def make(name: str, **kwargs: Any) -> BaseScheduler:
    """A new scheduler registered as ``name``, built with ``kwargs``.

    Raises:
        KeyError: No baseline has that name (the message lists them).
    """
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise KeyError(f"no baseline named {name!r}; known: {', '.join(names())}") from None
    return factory(**kwargs)


def names() -> list[str]:
    """Registered baseline names, sorted."""
    return sorted(_FACTORIES)
