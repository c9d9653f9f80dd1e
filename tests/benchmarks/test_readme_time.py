"""benchmarks/readme_time.py: the README commands it times and the table it writes (no timing)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import readme_time as rt


def test_it_times_the_readmes_own_install_and_main_job() -> None:
    install, run = rt.readme_parts("main-job")
    assert install.startswith("pip install") and '".[rl]"' in install
    assert run == "hpcgym bench"
    test_install, test_run = rt.readme_parts("tests")
    assert '".[rl,dev]"' in test_install and test_run.startswith("python -m pytest")
    assert " -n auto " in f"{test_run} "  # on every core (pytest-xdist, in the test extra)


def test_the_table_has_every_repeat_and_the_median_of_each_column() -> None:
    rows = [(70.0, 60.0, 90.0, 88.0, 30.0, 25.0), (80.0, 65.0, 95.0, 90.0, 40.0, 30.0)]
    rows.append((75.0, 70.0, 100.0, 92.0, 35.0, 28.0))
    lines = rt.table(rows).splitlines()
    assert len(lines) == 2 + 3 + 1
    assert lines[2] == "| 1 | 70 | 60 | 90 | 88 | 30 | 25 |"
    assert lines[-1] == "| median | **75** | **65** | **95** | **90** | **35** | **28** |"
