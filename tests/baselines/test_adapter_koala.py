"""KOALA's placement through the env with per-cluster start levels (``"req@k"``, ``"fit@k"``).

Without them the menu places in the first cluster that fits and KOALA's Worst-Fit placement is
reported (``test_adapter.py``); with them every start it makes is an entry.
"""

from __future__ import annotations

import pytest
from test_adapter import _through_env, assert_same_schedule

import hpcgym  # noqa: F401
from hpcgym.baselines.adapter import PLACEMENT, NotExpressible

MULTI = "hpcgym/MultiCluster-v0"
CLUSTERS = 5
LEVELS = ["req", "fit"] + [f"{size}@{k}" for k in range(CLUSTERS) for size in ("req", "fit")]
WIDE = {"queue_slots": 128, "running_slots": 128}


@pytest.mark.parametrize(
    "name", ["koala-pra-fpsma", "koala-pwa-fpsma", "koala-pra-egs", "koala-pwa-egs"]
)
def test_koala_placement_matches_with_cluster_levels(name: str) -> None:
    policy = assert_same_schedule(name, MULTI, 0, start_levels=LEVELS, **WIDE)
    assert policy.stats.commands >= 300


def test_a_cluster_without_its_level_is_still_reported() -> None:
    levels = ["req", "fit", "req@0", "fit@0"]
    with pytest.raises(NotExpressible, match=PLACEMENT):
        _through_env("koala-pwa-fpsma", MULTI, 0, start_levels=levels, **WIDE)
