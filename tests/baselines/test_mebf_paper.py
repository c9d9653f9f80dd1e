"""The MEBF paper check's headline on one window per setting (slow: `pytest -m slow`)."""

from __future__ import annotations

import pytest

from hpcgym.bench.papers.mebf import cases, report, simulate


@pytest.mark.slow
def test_mebf_beats_ebf_on_one_window_per_arrival_setting() -> None:
    import pandas as pd

    todo = [c for c in cases(1, 1) if c.experiment == "arrivals" and c.n_jobs == 1000]
    df = pd.DataFrame([simulate(c) for c in todo])
    for _, group in df.groupby("intensive"):
        ebf = group[group["label"] == "EBF"]["turnaround"].iloc[0]
        mebf = group[group["label"] != "EBF"]["turnaround"]
        assert (mebf < ebf).all()
    assert "% better than EBF" in report(df)
