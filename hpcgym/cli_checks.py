"""Checks the commands run on their arguments before any work starts.

A bad argument ends the command with a one-line error (``hpcgym: error: ...``, status 2), not a
traceback, and never after minutes of work whose results could not be saved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hpcgym.errors import HpcGymError, OutputError, SpecError


def env_kwargs_arg(text: str | None, option: str = "--env-kwargs") -> dict[str, Any]:
    """The JSON object given to ``option`` (``{}`` when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(
            f"{option} {text!r} is not valid JSON ({e.msg} at column {e.colno}); give a JSON "
            """object such as '{"n_jobs": 64}'"""
        ) from None
    if not isinstance(value, dict):
        raise SpecError(
            f"{option} must be a JSON object of keyword arguments, got "
            f"{type(value).__name__} {text!r}"
        )
    return value


def known_env_id(env_id: str) -> str:
    """``env_id`` if it is one of hpcgym's registered ids; else a ``SpecError`` listing them.

    Other Gymnasium ids (``CartPole-v1``) are refused too: hpcgym's commands pass hpcgym's
    arguments (splits, windows) to the env.
    """
    import gymnasium as gym

    import hpcgym  # noqa: F401  (registers the ids)

    if not env_id.startswith("hpcgym/") or env_id not in gym.registry:
        ours = sorted(k for k in gym.registry if k.startswith("hpcgym/"))
        raise SpecError(f"unknown env id {env_id!r}; registered hpcgym ids: {', '.join(ours)}")
    return env_id


_POSITIVE_INTS = ("n_steps", "batch_size", "n_epochs", "train_freq", "gradient_steps")
_UNIT_FLOATS = ("gamma", "gae_lambda", "tau")
_POSITIVE_FLOATS = ("learning_rate", "clip_range", "max_grad_norm")
_NON_NEGATIVE_FLOATS = ("ent_coef", "vf_coef")


def hyperparameter(key: str, value: object) -> object:
    """``value`` if it suits the SB3 hyperparameter ``key``; else a one-line ``SpecError``.

    Counts (``n_steps``, ``batch_size``, ``n_epochs``, ...) are integers >= 1; ``gamma``,
    ``gae_lambda`` and ``tau`` finite numbers in [0, 1]; ``learning_rate``, ``clip_range`` and
    ``max_grad_norm`` finite and > 0; ``ent_coef`` and ``vf_coef`` finite and >= 0. Other keys
    pass unchecked (SB3 checks them, or they are policy arguments).
    """
    import math

    def number() -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(f"--hp {key} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise SpecError(f"--hp {key} must be finite, got {value!r}")
        return float(value)

    if key in _POSITIVE_INTS:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpecError(f"--hp {key} must be an integer >= 1, got {value!r}")
    elif key in _UNIT_FLOATS and not 0.0 <= number() <= 1.0:
        raise SpecError(f"--hp {key} must be in [0, 1], got {value!r}")
    elif key in _POSITIVE_FLOATS and not number() > 0.0:
        raise SpecError(f"--hp {key} must be > 0, got {value!r}")
    elif key in _NON_NEGATIVE_FLOATS and not number() >= 0.0:
        raise SpecError(f"--hp {key} must be >= 0, got {value!r}")
    return value


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of the file ``path`` (a card, a run.json: ``what`` names it).

    Raises:
        SpecError: It cannot be read, or is not UTF-8 text (a damaged file), naming ``path``.
    """
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: not {what} (not UTF-8 text, at byte {e.start})") from None
    except FileNotFoundError:
        raise
    except OSError as e:
        raise SpecError(f"{path}: cannot be read ({e.strerror or e})") from None


MAX_SEED = 2**32 - 1
"""The largest seed a card or ``run.json`` may name (seeds are unsigned 32-bit integers)."""


def whole(value: object, key: str, least: int = 0, most: int = MAX_SEED) -> int:
    """``value`` read from a file (a card, ``run.json``) as an integer in ``[least, most]``.

    Raises:
        ValueError: It is not an integer (booleans and ``1.0`` are not) or is out of range; the
            message names ``key``. Card readers turn it into a ``SpecError`` naming the file.
    """
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
        raise ValueError(f"{key} must be an integer from {least} to {most}, not {value!r}")
    return value


def at_least(option: str, value: int | None, least: int) -> None:
    """Refuse ``value < least`` for a numeric option (``None``: not given, fine)."""
    if value is not None and value < least:
        raise SpecError(f"{option} must be >= {least}, got {value}")


def writable_folder(folder: str | os.PathLike[str]) -> Path:
    """Check that ``folder`` can be created (with its parents) and written in.

    Folders the check had to create are removed again while they are empty, so a command
    refused later, for another reason, leaves nothing behind; the command creates them when it
    writes. A folder that another process filled meanwhile (a training racing this one into the
    same new run folder) is left as it is: the check never deletes what it did not write.

    Raises:
        OutputError: The folder cannot be created, or nothing can be written in it.
    """
    p = Path(folder)
    created = None  # the outermost folder this check creates
    for parent in (p, *p.parents):
        if parent.exists():
            break
        created = parent
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".hpcgym-write-check-"):
            pass
        if created is not None:
            _remove_empty(p, created)
    except OSError as e:
        raise OutputError(
            f"cannot write to the output folder {p}: {e.strerror or e}. Choose another folder "
            "(--out) or fix its permissions; nothing was run."
        ) from None
    return p


def _remove_empty(deepest: Path, outermost: Path) -> None:
    """Remove ``deepest`` and its parents up to ``outermost`` while each is empty.

    A folder another process holds locked (``hpcgym.folder_lock``: a training or bench run
    that created it and has not written in it yet) is in use, not empty of purpose: kept.
    """
    from hpcgym.folder_lock import is_locked

    for folder in (deepest, *deepest.parents):
        if is_locked(folder):
            return
        try:
            folder.rmdir()
        except OSError:  # not empty (another process writes there), or gone
            return
        if folder == outermost:
            return


def writable_file(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` can be written (its folder is created if needed)."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"cannot write {p}: it is a folder; give a file name")
    writable_folder(p.parent)
    return p


def parse_seeds(text: str) -> list[int]:
    """Seeds from ``"0-4"``, ``"0,3,7"`` or ``"0-2,10"`` (in the order given, no repeats).

    Raises:
        SpecError: Not a list of non-negative integers and ranges, or a repeated seed.
    """
    seeds: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        try:
            first = int(lo)
            last = int(hi) if dash else first
        except ValueError:
            raise SpecError(f"--seeds takes seeds and ranges like 0-4,7; got {text!r}") from None
        if first < 0 or last < first:
            raise SpecError(f"--seeds: {part.strip()!r} is not a range of seeds >= 0")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise SpecError(f"--seeds {text!r} names a seed twice")
    return seeds


def run_alias(
    register: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None],
    argv: Sequence[str],
) -> int:
    """Run an old ``python -m`` command line as the ``hpcgym`` command it became.

    ``register`` adds that command (and only it) to a parser named ``hpcgym``; ``argv`` is
    the command's name and arguments. Errors are the ``hpcgym`` command's: ``hpcgym: error:
    ...``, exit status 2 (argparse's own for a bad argument).
    """
    parser = argparse.ArgumentParser(prog="hpcgym")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    try:
        return int(args.func(args))
    except HpcGymError as e:
        print(f"hpcgym: error: {e}", file=sys.stderr)
        return 2
