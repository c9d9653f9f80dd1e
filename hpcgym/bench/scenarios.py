"""Named, versioned benchmark scenarios: a preset, its overrides and the episode seeds.

A scenario never changes once published; a changed one gets a new version (``-v1``). Episode
seeds start at 1000 so that they differ from the seeds ``hpcgym train`` resets its training envs
with (``seed + rank``, small numbers). The scenarios with ``split="test"`` (``malleable-*-v2``,
``rigid-lublin-v1``) draw their episodes from the trace's test split, which training never
sees; in the older ones, windows may hold jobs that training windows held too.

```python
from hpcgym.bench.scenarios import get, names
get("rigid-lublin-v0").seeds
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hpcgym.errors import SpecError

CLASSIC = ("fcfs", "sjf", "easy", "conservative")
ELASTIC = ("fcfs", "easy", "mebf", "mebf-spare", "mebf-intensive")


@dataclass(frozen=True)
class Scenario:
    """One benchmark scenario.

    Attributes:
        name: Versioned name (``rigid-lublin-v0``).
        env_id: Registered preset the episodes come from (its workload set and platform).
        env_kwargs: Overrides of the preset's arguments (``n_jobs``, ``workload``, ...).
        seeds: Reset seeds of the episodes; each fixes an episode's jobs.
        policies: Policies run when none are selected.
        description: One line for listings and leaderboards.
        metric: The episode metric policies are ranked by (lower is better): the objective
            of the preset's reward.
    """

    name: str
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()
    policies: tuple[str, ...] = ()
    description: str = ""
    metric: str = "mean_bsld"


_SCENARIOS: dict[str, Scenario] = {}


def register(scenario: Scenario) -> None:
    """Add ``scenario`` (its name must be new)."""
    if scenario.name in _SCENARIOS:
        raise SpecError(f"scenario {scenario.name!r} is already registered")
    _SCENARIOS[scenario.name] = scenario


def get(name: str) -> Scenario:
    """The scenario called ``name``.

    Raises:
        SpecError: No such scenario (the message lists them).
    """
    try:
        return _SCENARIOS[name]
    except KeyError:
        raise SpecError(f"no scenario named {name!r}; known: {', '.join(names())}") from None


def names() -> list[str]:
    """Registered scenario names, sorted."""
    return sorted(_SCENARIOS)


def _seeds(n: int, first: int = 1000) -> tuple[int, ...]:
    return tuple(range(first, first + n))


register(
    Scenario(
        "tiny-v0",
        "hpcgym/Malleable-v0",
        {"n_jobs": 16},
        _seeds(2),
        ("fcfs", "easy", "mebf", "random"),
        "16-job windows of the MEBF SDSC-SP2 set on 128 nodes (tests and smoke runs)",
    )
)
register(
    Scenario(
        "malleable-small-v0",
        "hpcgym/Malleable-v0",
        {"n_jobs": 64},
        _seeds(8),
        (*ELASTIC, "random", "advance"),
        "64-job windows of the MEBF SDSC-SP2 set (60% malleable) on 128 nodes",
    )
)
register(
    Scenario(
        "malleable-sdsc-v0",
        "hpcgym/Malleable-v0",
        {},
        _seeds(10),
        (*ELASTIC, "random", "advance"),
        "256-job windows of the MEBF SDSC-SP2 set (60% malleable) on 128 nodes",
    )
)
# v1 of the malleable scenarios: no walltime kills, for every policy. MEBF's setting has none
# (a resized job outlives its requested time by design), and with kills a policy that shrinks
# jobs until they are killed looks better on slowdown while throwing work away.
_NO_KILLS = {"kill_on_walltime": False}
register(
    Scenario(
        "malleable-small-v1",
        "hpcgym/Malleable-v0",
        {"n_jobs": 64, **_NO_KILLS},
        _seeds(8),
        (*ELASTIC, "random", "advance"),
        "64-job windows of the MEBF SDSC-SP2 set (60% malleable) on 128 nodes, no walltime kills",
    )
)
register(
    Scenario(
        "malleable-sdsc-v1",
        "hpcgym/Malleable-v0",
        dict(_NO_KILLS),
        _seeds(10),
        (*ELASTIC, "random", "advance"),
        "256-job windows of the MEBF SDSC-SP2 set (60% malleable) on 128 nodes, no walltime kills",
    )
)
register(
    Scenario(
        "rigid-lublin-v0",
        "hpcgym/Rigid-v0",
        {},
        _seeds(10),
        (*CLASSIC, "random", "advance"),
        "256-job windows of lublin_256 (rigid) on 256 nodes, as RLScheduler",
    )
)
register(
    Scenario(
        "shared-dfrs-v0",
        "hpcgym/Shared-v0",
        {},
        _seeds(5),
        (*CLASSIC, "sd-policy", "random"),
        "256-job windows of the DFRS Lublin set (CPU needs, memory) on 128 x 4-core nodes",
    )
)
register(
    Scenario(
        "evolving-klein-v0",
        "hpcgym/Evolving-v0",
        {},
        _seeds(10),
        ("evolving-rigid", "evolving-noX", "evolving-infX", "evolving-2X", "first-fit"),
        "Klein-Perez evolving test cases (16 jobs) on 75 nodes, ranked by makespan",
        metric="makespan",
    )
)
register(
    Scenario(
        "multicluster-koala-v0",
        "hpcgym/MultiCluster-v0",
        {},
        _seeds(5),
        ("koala-static", "koala-pra-fpsma", "koala-pra-egs", "koala-pwa-fpsma", "koala-pwa-egs"),
        "KOALA GADGET-2/FT mixes (300 jobs) on the five DAS-3 clusters, ranked by mean response",
        metric="mean_response",
    )
)

# v2 of the malleable scenarios and v1 of the rigid one: the leak-free protocol. Episodes come
# from the test split of the trace (its last 20% in time, ``hpcgym.workloads.splits``), which
# ``hpcgym train`` never sees (it trains on the first 70%, validates on the next 10%), and there
# are 30 of them, enough for the intervals of ``intervals.md`` to separate policies that differ.
_TEST = {"split": "test"}
register(
    Scenario(
        "malleable-small-v2",
        "hpcgym/Malleable-v0",
        {"n_jobs": 64, **_NO_KILLS, **_TEST},
        _seeds(30),
        (*ELASTIC, "random", "advance"),
        "64-job test-split windows of the MEBF SDSC-SP2 set on 128 nodes, no walltime kills",
    )
)
register(
    Scenario(
        "malleable-sdsc-v2",
        "hpcgym/Malleable-v0",
        {**_NO_KILLS, **_TEST},
        _seeds(30),
        (*ELASTIC, "random", "advance"),
        "256-job test-split windows of the MEBF SDSC-SP2 set on 128 nodes, no walltime kills",
    )
)
register(
    Scenario(
        "rigid-lublin-v1",
        "hpcgym/Rigid-v0",
        dict(_TEST),
        _seeds(30),
        (*CLASSIC, "random", "advance"),
        "256-job test-split windows of lublin_256 (rigid) on 256 nodes",
    )
)

# Cross-trace test of the malleable-small-v2 setting: the same preset, windows and policies, but
# the jobs come from another machine's trace, KTH SP2 (100 nodes), rescaled to the 128 nodes
# (and brought back to its own offered load) and made malleable as the SDSC SP2 set is
# (``hpcgym.workloads.sets``). An agent trained on SDSC SP2's train split has seen none of these
# jobs, nor any job of that machine. Windows come from the KTH trace's test split. The CEA Curie
# sample has a set of the same kind (``elastic/cea-curie-mebf-128-v0``) but no scenario: on 128
# nodes 95% of its jobs become one node, and in 64-job windows no job ever waits (FCFS and EASY
# score a bounded slowdown of 1.00 on all 30 test windows), so it cannot rank policies.
register(
    Scenario(
        "malleable-small-kth-v0",
        "hpcgym/Malleable-v0",
        {"workload": "elastic/kth-sp2-mebf-128-v0", "n_jobs": 64, **_NO_KILLS, **_TEST},
        _seeds(30),
        (*ELASTIC, "random", "advance"),
        "cross-trace: 64-job test-split windows of KTH SP2 rescaled to 128 nodes, MEBF "
        "malleability, no walltime kills",
    )
)

CROSS_TRACE = {"malleable-small-v2": ("malleable-small-kth-v0",)}
"""Each scenario's cross-trace tests: the same setting on other machines' traces."""

MAIN = "malleable-small-v2"
"""The scenario of the main job (``hpcgym bench`` with no arguments)."""
