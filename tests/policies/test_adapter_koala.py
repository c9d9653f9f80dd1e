"""KOALA through the env with its own levels (``policy.env_overrides``: ``koala_levels``).

Worst-Fit placement needs per-cluster start levels (``req@*``, ``fit@*``), the malleability
manager's FPSMA and EGS grows and shrinks end at any size (``n*``), and PWA's starts next to
processors held for a waiting job need every size in every cluster (``n*@*``). With them every
command KOALA makes is an entry; without them it is reported, never silently different.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_adapter import _through_env, assert_same_schedule

import hpcgym  # noqa: F401
from hpcgym.baselines import make
from hpcgym.policies.adapted import NO_LEVEL, PLACEMENT, NotExpressible, koala_levels

MULTI = "hpcgym/MultiCluster-v0"
MALLEABLE = "hpcgym/Malleable-v0"
WIDE: dict[str, Any] = {"queue_slots": 128, "running_slots": 128}
MANAGED = ["koala-pra-fpsma", "koala-pwa-fpsma", "koala-pra-egs", "koala-pwa-egs"]


@pytest.mark.parametrize("name", MANAGED)
def test_koala_matches_on_the_multicluster(name: str) -> None:
    policy = assert_same_schedule(name, MULTI, 0, **WIDE)
    assert policy.stats.commands >= 300
    assert policy.scheduler.grows > 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", MANAGED)
def test_koala_manager_matches_on_a_loaded_cluster(name: str) -> None:
    # lublin_256 with malleable jobs: PWA shrinks for waiting jobs, both policies grow.
    policy = assert_same_schedule(name, MALLEABLE, 0, n_jobs=300, **WIDE)
    koala = policy.scheduler
    assert koala.grows > 0  # type: ignore[attr-defined]
    if "pwa" in name:
        assert koala.shrinks > 0  # type: ignore[attr-defined]


def test_levels_follow_the_approach() -> None:
    assert koala_levels(make("koala-static")) == {"start_levels": ("req@*", "fit@*")}
    assert koala_levels(make("koala-pra-egs"))["expand_levels"] == ("n*",)
    pwa = koala_levels(make("koala-pwa-fpsma"))
    assert pwa["start_levels"] == ("n*@*",) and pwa["shrink_levels"] == ("n*",)


def test_a_cluster_without_its_level_is_still_reported() -> None:
    levels = ["req", "fit", "req@0", "fit@0"]
    with pytest.raises(NotExpressible, match=PLACEMENT):
        _through_env("koala-pwa-fpsma", MULTI, 0, start_levels=levels, **WIDE)


def test_an_egs_grow_without_exact_sizes_is_reported() -> None:
    with pytest.raises(NotExpressible) as err:
        _through_env("koala-pra-egs", MALLEABLE, 0, n_jobs=100, expand_levels=("one", "fit"))
    assert err.value.reason == f"{NO_LEVEL} (expand)"
