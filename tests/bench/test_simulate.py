from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hpcgym.baselines import make
from hpcgym.cli import main
from hpcgym.sim import Simulator
from hpcgym.workloads import registry, transforms


def test_simulate_prints_summary_and_writes_the_same_table_as_a_direct_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "jobs.csv"
    code = main(
        [
            "simulate",
            "--workload",
            "swf/kth-sp2-v0",
            "--jobs",
            "300",
            "--scheduler",
            "easy",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "easy on swf/kth-sp2-v0 (seed 0): 300 jobs, 100 nodes" in printed
    assert "mean_bsld" in printed
    table = pd.read_csv(out)
    w = transforms.first(registry.load("swf/kth-sp2-v0"), 300)
    direct = Simulator(w.platform, w.jobs).run(make("easy")).jobs
    assert len(table) == 300
    pd.testing.assert_series_equal(table["end"], direct["end"], check_names=False)


def test_simulate_unknown_workload_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--workload", "swf/no-such-set-v0"]) == 2
    assert "no-such-set-v0" in capsys.readouterr().err
