from __future__ import annotations

import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import load
from hpcgym.workloads.splits import SPLITS, time_splits, window_starts


@pytest.mark.parametrize("name", ["swf/lublin256-v0", "swf/sdsc-sp2-v0"])
def test_no_test_window_shares_a_job_with_any_training_window(name):
    w = load(name)
    splits = time_splits(w)
    assert list(splits) == list(SPLITS)
    ids = {}
    for s in splits.values():
        starts = window_starts(s, 256)
        assert starts and all(s.first <= a and a + 256 <= s.stop for a in starts)
        ids[s.name] = {j.id for a in starts for j in w.jobs[a : a + 256]}
    assert not ids["train"] & ids["test"]
    assert not ids["train"] & ids["validation"]
    assert not ids["validation"] & ids["test"]


def test_splits_follow_submission_time():
    w = load("swf/lublin256-v0")
    s = time_splits(w)
    span = w.jobs[-1].submit - w.jobs[0].submit
    assert s["train"].first == 0 and s["test"].stop == len(w.jobs)
    assert s["train"].stop == s["validation"].first and s["validation"].stop == s["test"].first
    # Every job sits in the time range of its split.
    for split in s.values():
        for j in w.jobs[split.first : split.stop]:
            assert split.t0 <= j.submit and (j.submit < split.t1 or split.name == "test")
    assert s["validation"].t0 == pytest.approx(w.jobs[0].submit + 0.7 * span)


def test_counted_windows_are_spread_and_fixed():
    split = time_splits(load("swf/lublin256-v0"))["test"]
    a = window_starts(split, 1024, count=30)
    assert a == window_starts(split, 1024, count=30)
    assert len(a) == 30 and a[0] == split.first and a[-1] == split.stop - 1024
    assert a == sorted(a)


def test_bad_fractions_and_short_splits_are_refused():
    w = load("swf/lublin256-v0")
    with pytest.raises(WorkloadError, match="overlaps"):
        time_splits(w, {"train": (0.0, 0.8), "test": (0.7, 1.0)})
    with pytest.raises(WorkloadError, match="must be 0 <= from < to <= 1"):
        time_splits(w, {"train": (0.5, 0.5)})
    split = time_splits(w)["validation"]
    with pytest.raises(WorkloadError, match="fewer than one"):
        window_starts(split, len(split) + 1)
