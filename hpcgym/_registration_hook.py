"""Register hpcgym's env ids with Gymnasium without importing Gymnasium ourselves.

Gymnasium 1.x has no plugin entry points: ids exist only once something calls ``register``.
``import hpcgym`` must make ``gym.make("hpcgym/Rigid-v0")`` work, yet ``hpcgym.sim`` (and every
tool that only simulates) must not pay for Gymnasium. So: when Gymnasium is already imported,
the ids are registered at once; otherwise a one-shot finder waits on ``sys.meta_path`` for the
``gymnasium`` package and registers the ids right after its ``__init__`` has run, before the
importer gets the module back.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any


def register_when_gymnasium_loads() -> None:
    """Register the ids now if Gymnasium is loaded, else as soon as it is."""
    if "gymnasium" in sys.modules:
        _register()
    elif not any(isinstance(finder, _GymnasiumWatcher) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumWatcher())


def _register() -> None:
    # ``hpcgym.envs`` registers the presets when it is first imported (and only then).
    importlib.import_module("hpcgym.envs")


class _GymnasiumWatcher(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` with the other finders and wraps its loader to register after it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        if self in sys.meta_path:  # one shot
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, plus the registration once its module is executed."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register()

    def __getattr__(self, name: str) -> Any:  # resource readers, get_source, ...
        return getattr(self._loader, name)
