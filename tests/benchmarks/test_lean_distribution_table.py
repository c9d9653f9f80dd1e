"""benchmarks/lean_distribution.py: the table it writes from recorded curves (no training here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("scipy")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import lean_distribution as ld


def test_welch_gives_the_difference_its_interval_and_p() -> None:
    cell = ld.welch([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert cell.startswith("+0.00 [") and cell.endswith("p = 1.00")
    low, high = cell.split("[")[1].split("]")[0].split(", ")
    assert float(low) == -float(high)  # equal spreads: symmetric around 0


def test_the_table_shows_whole_curves_and_summaries_kept_from_before() -> None:
    curves = {
        "exact": [[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]],
        "lean": [[2.0, 2.0, 2.0, 5.0], [2.0, 4.0, 6.0, 7.0]],
    }
    records = {
        "malleable": {"timesteps": 8192, "curves": curves},
        "rigid": {
            "timesteps": 49152,
            "summary": {
                learner: {"stretches": ["a", "b", "c", "d"], "last": [1.0, 2.0, 4.0]}
                for learner in ld.LEARNERS
            },
        },
    }
    rows = ld.table(records)
    assert len(rows) == 2 + 2 * len(records)
    assert rows[2].startswith("| rigid | 49,152 | 3 | exact | a | b | c | d | 1.00, 2.00, 4.00 |")
    assert rows[3].startswith("| rigid | 49,152 | 3 | lean |") and rows[3].endswith("p = 1.00 |")
    cells = [c.strip() for c in rows[5].strip("|").split("|")]
    assert cells[:4] == ["malleable", "8,192", "2", "lean"]
    assert cells[4:8] == ["2.00 (0.00)", "3.00 (1.41)", "4.00 (2.83)", "6.00 (1.41)"]
    assert cells[8] == "5.00, 7.00"
    assert cells[9].startswith("+1.00 [")  # lean's last stretch 6.0 against exact's 5.0
