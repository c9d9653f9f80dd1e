"""The learned-score probe's policies: its F1 point is F1, and other weights change the schedule.

``studies/probes/learned_score.py`` searches linear job scores through the hooks
``PriorityReserve.choose`` and ``EasyPriority.ranked``; its claims rest on the point
``learned_score.F1`` giving exactly ``f1-reserve(-bf)`` and ``easy-f1``. These tests play that
point and a different one on a few of the probe's own episodes (built by its episode groups).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

PROBES = Path(__file__).resolve().parents[2] / "studies" / "probes"
sys.path.insert(0, str(PROBES))

import learned_score as ls  # noqa: E402

from hpcgym.workloads import Workload  # noqa: E402
from hpcgym.workloads.splits import time_splits  # noqa: E402

SJF_LIKE = np.array([0, 1.0, 0, 0, 0, 0, 0, 0])
"""Weights ranking by request time alone (SJF)."""


def _play(x: np.ndarray, group: str, index: int, backfill: bool) -> float:
    return ls.play((tuple(map(float, x)), group, index, backfill))


@pytest.mark.parametrize(
    ("group", "backfill"),
    [
        ("reserve:rlsched-lublin-test-v0", False),
        ("reserve:rlsched-lublin-bf-test-v0", True),
        ("easy:rigid-lublin-v1", False),
        ("easy:rigid-kth-v0", False),
    ],
)
def test_the_f1_point_is_f1_and_other_weights_differ(group: str, backfill: bool) -> None:
    reference = ls.reference(group, backfill)
    n = len(ls.episodes(group))
    assert n == 30 and len(reference) == n
    for i in (0, 1, 2):
        assert _play(ls.F1, group, i, backfill) == reference[i]
    assert any(_play(SJF_LIKE, group, i, backfill) != reference[i] for i in (0, 1, 2))


def test_the_reserve_training_sequences_lie_in_the_train_split() -> None:
    trace = ls._lublin()
    stop = time_splits(Workload("lublin", trace.jobs, trace.platform))["train"].stop
    ls._TRAIN[0] = 8
    ls.episodes.cache_clear()
    try:
        sequences = ls.episodes("reserve:train")
        assert len(sequences) == 8 == len(ls.episodes("easy:train"))
        for _, jobs, _ in sequences:
            assert len(jobs) == ls.LENGTH
            assert trace.jobs.index(jobs[-1]) < stop  # the last job is a train-split job
    finally:
        ls._TRAIN[0] = 64
        ls.episodes.cache_clear()
