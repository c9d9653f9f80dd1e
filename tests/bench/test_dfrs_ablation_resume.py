"""The DFRS ablation (hpcgym papers dfrs) resumes from its rows file after a stop."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hpcgym.bench.papers.dfrs import ablation_cases, ablation_runs


def test_a_stopped_ablation_runs_only_the_cases_its_rows_file_lacks(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    full = ablation_runs(1, workers=1, n_jobs=12, rows_csv=rows)
    assert len(full) == len(ablation_cases(1, 12)) == len(pd.read_csv(rows))
    # A run stopped after 5 cases left 5 rows; mark them to see that they are kept, not re-run.
    stopped = pd.read_csv(rows).head(5).assign(seconds=-1.0)
    stopped.to_csv(rows, index=False)
    resumed = ablation_runs(1, workers=1, n_jobs=12, rows_csv=rows)
    assert (resumed["seconds"] == -1.0).sum() == 5
    assert len(resumed) == len(full) == len(pd.read_csv(rows))
    same = full.columns.drop("seconds")
    pd.testing.assert_frame_equal(resumed[same], full[same])
