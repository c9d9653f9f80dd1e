"""Tiny hand-made worlds for the env tests, registered as workload sets ``test/*-v0``.

Every world is small enough to check by hand and to clone (pickle replays the episode).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hpcgym.envs import ClusterEnv
from hpcgym.sim import Amdahl, FixedCost, JobKind, JobSpec, Platform, Simulator, SizeRule
from hpcgym.workloads import Workload, WorkloadSet, names, register


def _rigid() -> tuple[list[JobSpec], Platform]:
    jobs = [
        JobSpec(1, 0.0, work=100.0, nodes=2, walltime=200.0),
        JobSpec(2, 0.0, work=50.0, nodes=3, walltime=60.0),
        JobSpec(3, 10.0, work=20.0, nodes=1, walltime=40.0),
        JobSpec(4, 10.0, work=30.0, nodes=4, walltime=30.0),
        JobSpec(5, 30.0, work=5.0, nodes=1),
    ]
    return jobs, Platform.single(4)


def _malleable() -> tuple[list[JobSpec], Platform]:
    m = JobKind.MALLEABLE
    jobs = [
        JobSpec(
            1,
            0.0,
            work=400.0,
            nodes=4,
            kind=m,
            min_nodes=1,
            max_nodes=8,
            speedup=Amdahl(0.1),
            reconfig=FixedCost(5.0),
        ),
        JobSpec(
            2,
            0.0,
            work=300.0,
            nodes=2,
            kind=m,
            min_nodes=1,
            max_nodes=8,
            size_rule=SizeRule.POWER_OF_TWO,
        ),
        JobSpec(
            3,
            5.0,
            work=200.0,
            nodes=4,
            kind=m,
            min_nodes=2,
            max_nodes=6,
            size_rule=SizeRule.MULTIPLE,
            size_multiple=2,
        ),
        JobSpec(4, 5.0, work=100.0, nodes=3, kind=JobKind.MOLDABLE, min_nodes=1, max_nodes=5),
        JobSpec(5, 20.0, work=50.0, nodes=2),
    ]
    return jobs, Platform.single(8)


def _evolving() -> tuple[list[JobSpec], Platform]:
    e = JobKind.EVOLVING
    jobs = [
        JobSpec(1, 0.0, kind=e, evolution=((100.0, 2), (100.0, 4), (50.0, 1))),
        JobSpec(2, 0.0, kind=e, evolution=((50.0, 3), (100.0, 5))),
        JobSpec(3, 30.0, work=60.0, nodes=1),
    ]
    return jobs, Platform.single(6)


def _shared() -> tuple[list[JobSpec], Platform]:
    jobs = [
        JobSpec(1, 0.0, work=100.0, nodes=2, cpu_need=0.5, mem=0.3),
        JobSpec(2, 0.0, work=80.0, nodes=3, cpu_need=1.0, mem=0.5),
        JobSpec(3, 10.0, work=60.0, nodes=2, cpu_need=0.25, mem=0.6),
        JobSpec(4, 10.0, work=40.0, nodes=4, cpu_need=1.0, mem=0.2),
        JobSpec(5, 20.0, work=30.0, nodes=1, cpu_need=0.5, mem=0.1),
        JobSpec(6, 20.0, work=30.0, nodes=3, cpu_need=0.5, mem=0.2),
    ]
    return jobs, Platform.single(4)


def _multi() -> tuple[list[JobSpec], Platform]:
    m = JobKind.MALLEABLE
    jobs = [
        JobSpec(1, 0.0, work=200.0, nodes=3, kind=m, min_nodes=1, max_nodes=4),
        JobSpec(2, 0.0, work=100.0, nodes=2, kind=m, min_nodes=1, max_nodes=2),
        JobSpec(3, 5.0, work=100.0, nodes=4, kind=m, min_nodes=2, max_nodes=4),
        JobSpec(4, 5.0, work=50.0, nodes=1),
    ]
    return jobs, Platform.multi([4, 2])


def _kills() -> tuple[list[JobSpec], Platform]:
    # Jobs 1 and 3 outlive their walltimes: killed after 40 s on 2 nodes and 10 s on 1 node.
    jobs = [
        JobSpec(1, 0.0, work=100.0, nodes=2, walltime=40.0),
        JobSpec(2, 0.0, work=50.0, nodes=2, walltime=100.0),
        JobSpec(3, 10.0, work=30.0, nodes=1, walltime=10.0),
    ]
    return jobs, Platform.single(4)


WORLDS: dict[str, Callable[[], tuple[list[JobSpec], Platform]]] = {
    "test/rigid-tiny-v0": _rigid,
    "test/malleable-tiny-v0": _malleable,
    "test/evolving-tiny-v0": _evolving,
    "test/shared-tiny-v0": _shared,
    "test/multi-tiny-v0": _multi,
    "test/kill-tiny-v0": _kills,
}

_ELASTIC: dict[str, Any] = {
    "start_levels": ["req", "min", "max", "fit"],
    "shrink_levels": ["one", "half", "min"],
    "expand_levels": ["one", "double", "fit"],
}

SETTINGS: dict[str, dict[str, Any]] = {
    "test/rigid-tiny-v0": {"queue_slots": 4, "running_slots": 4},
    "test/malleable-tiny-v0": {"queue_slots": 4, "running_slots": 4, **_ELASTIC},
    "test/evolving-tiny-v0": {"queue_slots": 3, "running_slots": 3, "grant": True},
    "test/shared-tiny-v0": {
        "queue_slots": 4,
        "running_slots": 4,
        "coschedule_levels": [0.5, 0.25],
        "suspend": True,
        "suspended_slots": 2,
    },
    "test/multi-tiny-v0": {"queue_slots": 3, "running_slots": 3, **_ELASTIC},
    "test/kill-tiny-v0": {"queue_slots": 2, "running_slots": 2},
}
"""Menu settings per tiny world, covering every block and level."""


def _register() -> None:
    for name, world in WORLDS.items():
        if name in names():
            continue

        def build(
            seed: int, opts: Any, world: Callable[..., Any] = world, name: str = name
        ) -> Workload:
            jobs, platform = world()
            return Workload(name, tuple(jobs), platform)

        register(WorkloadSet(name, "env test world", build))


_register()


def tiny_env(world: str, **kwargs: Any) -> ClusterEnv:
    """A ``ClusterEnv`` over a tiny world with its menu settings (``kwargs`` override)."""
    args = {"workload": world, "n_jobs": None, **SETTINGS[world], **kwargs}
    return ClusterEnv(**args)


def masked_random(info: dict[str, Any], rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    legal = np.flatnonzero(info["action_mask"])
    return int(legal[rng.integers(legal.size)])


def clone(env: ClusterEnv) -> ClusterEnv:
    """An independent copy of ``env`` in the same state (pickle replays the episode)."""
    copy: ClusterEnv = pickle.loads(pickle.dumps(env))
    return copy


def engine_copy(env: ClusterEnv) -> Simulator:
    """An independent copy of ``env``'s engine, state for state (no replay: far cheaper)."""
    assert env.sim is not None
    copy: Simulator = pickle.loads(pickle.dumps(env.sim))
    return copy


@pytest.fixture(scope="session")
def worlds() -> SimpleNamespace:
    """``worlds.names``, ``.make(name, **kw)``, ``.policy``, ``.clone`` and ``.engine_copy``."""
    return SimpleNamespace(
        names=list(WORLDS),
        make=tiny_env,
        policy=masked_random,
        clone=clone,
        engine_copy=engine_copy,
    )
