"""Baselines by name: ``make("easy")`` builds a fresh scheduler, ``names()`` lists them.

Entries are registered in ``hpcgym/baselines/__init__.py``, all in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from hpcgym.baselines.base import BaseScheduler

_FACTORIES: dict[str, Callable[..., BaseScheduler]] = {}
_SUMMARIES: dict[str, str] = {}


def register(name: str, factory: Callable[..., BaseScheduler], summary: str = "") -> None:
    """Register ``factory`` (a class or function returning a scheduler) under ``name``.

    ``summary`` is the one line ``hpcgym list baselines`` prints for it.

    Raises:
        ValueError: ``name`` is taken.
    """
    if name in _FACTORIES:
        raise ValueError(f"baseline {name!r} is already registered")
    _FACTORIES[name] = factory
    _SUMMARIES[name] = summary


def summary(name: str) -> str:
    """The one line registered with ``name``; else the first line of its class's docstring."""
    made = factory(name)  # a KeyError naming the known ones
    if _SUMMARIES[name]:
        return _SUMMARIES[name]
    while isinstance(made, partial):
        made = made.func
    doc = (made.__doc__ or "").strip().split("\n", 1)[0].rstrip(".")
    return doc or f"{getattr(made, '__name__', type(made).__name__)} (registered without a summary)"


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


def factory(name: str) -> Callable[..., BaseScheduler]:
    """The factory registered as ``name`` (a class, or a ``functools.partial`` of one).

    Raises:
        KeyError: No baseline has that name (the message lists them).
    """
    try:
        return _FACTORIES[name]
    except KeyError:
        raise KeyError(f"no baseline named {name!r}; known: {', '.join(names())}") from None


def names() -> list[str]:
    """Registered baseline names, sorted."""
    return sorted(_FACTORIES)
