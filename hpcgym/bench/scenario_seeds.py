"""The scenarios' seed data: a versioned file in the package, read and checked once.

``scenario_seeds.json`` beside this module holds what fixes the episodes of the scenarios that
are not plain seed ranges (:mod:`hpcgym.bench.scenarios`):

- ``window_starts``: the first jobs of the ``rlsched-*`` scenarios' 1,024-job sequences, by
  table name;
- ``played``: generator seeds already played by something else (a probe, an earlier scenario)
  that a fresh-trace scenario must not draw again;
- ``fresh``: the reset seeds of the scenarios whose episodes are fresh generated traces, each
  with the rule that drew them (``scenarios.fresh_seeds(len(seeds), n_seeds, first, exclude)``,
  ``exclude`` naming ``played`` sets, or ``fresh`` lists whose draws it excludes).

A published list never changes (a changed one belongs to a new scenario version);
``tests/bench/test_scenario_seeds.py`` draws every list again by its rule and compares.

```python
from hpcgym.bench.scenario_seeds import fresh, starts
starts("rlsched-lublin")[:3], len(fresh("synlublin-large").seeds)
```
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from hpcgym.cli_checks import MAX_SEED
from hpcgym.errors import SpecError

FORMAT = 1
"""The version of ``scenario_seeds.json``'s layout this module reads."""

FILE = "scenario_seeds.json"

_T = TypeVar("_T")


@dataclass(frozen=True)
class FreshSeeds:
    """The reset seeds of fresh-trace scenarios and the rule that drew them.

    Attributes:
        name: The list's name in the file.
        seeds: The reset seeds, in the order the scenarios play them.
        n_seeds: The env's ``n_seeds`` (its generator seeds' range) the seeds were drawn for.
        first: The first reset seed the draw tried.
        exclude: Names of ``played`` sets and of other ``fresh`` lists whose generator seeds
            the draw skipped.
        scenarios: The scenarios that play these seeds.
    """

    name: str
    seeds: tuple[int, ...]
    n_seeds: int
    first: int
    exclude: tuple[str, ...]
    scenarios: tuple[str, ...]


def _ints(value: object, where: str, *, distinct: bool = True) -> tuple[int, ...]:
    """``value`` as a tuple of integers in ``[0, MAX_SEED]`` (distinct unless told)."""
    if not isinstance(value, list) or not value:
        raise SpecError(f"{FILE}: {where} must be a non-empty list of integers")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED:
            raise SpecError(f"{FILE}: {where} holds {v!r}, not an integer from 0 to {MAX_SEED}")
    if distinct and len(set(value)) != len(value):
        raise SpecError(f"{FILE}: {where} names a value twice")
    return tuple(value)


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    table = data.get(key)
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise SpecError(f"{FILE}: '{key}' must map names to objects")
    return table


_Data = tuple[dict[str, tuple[int, ...]], dict[str, frozenset[int]], dict[str, "FreshSeeds"]]


def parse(data: object) -> _Data:
    """Check the file's content and return its window starts, played sets and fresh lists.

    Raises:
        SpecError: The format is not :data:`FORMAT`, a list is empty, holds a value that is not
            a seed or a value twice, a seed lies before its list's ``first``, or ``exclude``
            names nothing in the file.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else data
        raise SpecError(f"{FILE}: format {got!r}, this hpcgym reads format {FORMAT}")
    window_starts = {
        name: _ints(entry.get("starts"), f"window_starts.{name}.starts")
        for name, entry in _table(data, "window_starts").items()
    }
    played = {
        name: frozenset(_ints(entry.get("generator_seeds"), f"played.{name}.generator_seeds"))
        for name, entry in _table(data, "played").items()
    }
    fresh: dict[str, FreshSeeds] = {}
    for name, entry in _table(data, "fresh").items():
        where = f"fresh.{name}"
        seeds = _ints(entry.get("seeds"), f"{where}.seeds")
        (n_seeds,) = _ints([entry.get("n_seeds")], f"{where}.n_seeds")
        (first,) = _ints([entry.get("first")], f"{where}.first")
        if min(seeds) < first:
            raise SpecError(f"{FILE}: {where}.seeds holds {min(seeds)}, before 'first' ({first})")
        exclude = entry.get("exclude")
        scenarios = entry.get("scenarios")
        for key, value in (("exclude", exclude), ("scenarios", scenarios)):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SpecError(f"{FILE}: {where}.{key} must be a list of names")
        assert isinstance(exclude, list) and isinstance(scenarios, list)
        for other in exclude:
            if other not in played and other not in fresh:
                raise SpecError(
                    f"{FILE}: {where}.exclude names {other!r}, neither a 'played' set nor a "
                    "'fresh' list before it"
                )
        fresh[name] = FreshSeeds(name, seeds, n_seeds, first, tuple(exclude), tuple(scenarios))
    return window_starts, played, fresh


@cache
def _load() -> _Data:
    text = resources.files("hpcgym.bench").joinpath(FILE).read_text(encoding="utf-8")
    return parse(json.loads(text))


def _named(table: dict[str, _T], kind: str, name: str) -> _T:
    try:
        return table[name]
    except KeyError:
        raise SpecError(f"no {kind} {name!r} in {FILE}; known: {', '.join(table)}") from None


def starts(name: str) -> tuple[int, ...]:
    """The window starts of table ``name`` (for example ``"rlsched-lublin"``)."""
    return _named(_load()[0], "window starts", name)


def played(name: str) -> frozenset[int]:
    """The generator seeds of played set ``name``."""
    return _named(_load()[1], "played set", name)


def fresh(name: str) -> FreshSeeds:
    """The fresh-trace seed list ``name`` and its rule."""
    return _named(_load()[2], "fresh seed list", name)


def fresh_names() -> list[str]:
    """Every fresh seed list in the file, in its order."""
    return list(_load()[2])
