"""benchmarks/lean_distribution.py: the table it writes from recorded curves (no training here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("scipy")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import lean_distribution as ld


def test_the_paired_test_sees_a_steady_difference_welchs_does_not() -> None:
    exact = [-100.0, -200.0, -300.0, -400.0]
    lean = [-101.0, -202.0, -301.0, -402.0]
    assert float(ld.welch(lean, exact).split("p = ")[1]) > 0.9
    assert float(ld.paired(lean, exact).split("p = ")[1]) < 0.05


def test_welch_gives_the_difference_its_interval_and_p() -> None:
    cell = ld.welch([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert cell.startswith("+0.00 [") and cell.endswith("p = 1.00")
    low, high = cell.split("[")[1].split("]")[0].split(", ")
    assert float(low) == -float(high)  # equal spreads: symmetric around 0


def test_the_table_shows_whole_curves_and_summaries_kept_from_before() -> None:
    curves = {
        "exact": [[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]],
        "lean": [[2.0, 2.0, 2.0, 5.0], [2.0, 4.0, 6.0, 8.0]],
    }
    records = {
        "malleable": {"timesteps": 8192, "curves": curves},
        "rigid": {
            "timesteps": 49152,
            "summary": {
                "exact": {"stretches": ["a", "b", "c", "d"], "last": [1.0, 2.0, 4.0]},
                "lean": {"stretches": ["e", "f", "g", "h"], "last": [2.0, 2.0, 6.0]},
            },
        },
    }
    rows = ld.table(records)
    assert len(rows) == 2 + 2 * len(records)
    assert rows[2].startswith("| rigid | 49,152 | 3 | exact | a | b | c | d | 1.00, 2.00, 4.00 |")
    assert rows[3].startswith("| rigid | 49,152 | 3 | lean | e | f | g | h | 2.00, 2.00, 6.00 |")
    assert rows[3].count("+1.00 [") == 2  # both tests: lean's mean 1 above, seed by seed too
    cells = [c.strip() for c in rows[5].strip("|").split("|")]
    assert cells[:4] == ["malleable", "8,192", "2", "lean"]
    assert cells[4:8] == ["2.00 (0.00)", "3.00 (1.41)", "4.00 (2.83)", "6.50 (2.12)"]
    assert cells[8] == "5.00, 8.00"
    assert cells[9].startswith("+1.50 [")  # lean's last stretch 6.5 against exact's 5.0
    assert cells[10].startswith("+1.50 [")  # seed by seed: +1.0 and +2.0


def test_more_appends_seeds_after_the_recorded_ones(tmp_path, monkeypatch) -> None:
    """``--more`` trains the seeds after the recorded ones and keeps the earlier curves."""
    path = tmp_path / "curves.json"
    old = {"exact": [[1.0, 1.0, 1.0, 1.0]], "lean": [[2.0, 2.0, 2.0, 2.0]]}
    record = {"timesteps": 64, "started": "then", "command": "first", "curves": old}
    path.write_text(ld.json.dumps({"malleable": record}))
    trained: list[tuple[str, int]] = []

    def fake(preset, learner, seed, timesteps):
        trained.append((learner, seed))
        return [float(seed)] * 4

    monkeypatch.setattr(ld, "curve", fake)
    argv = ["x", "--preset", "malleable", "--seeds", "2", "--timesteps", "64", "--more"]
    monkeypatch.setattr(sys, "argv", [*argv, "--curves", str(path)])
    ld.main()
    assert sorted(trained) == [("exact", 1), ("exact", 2), ("lean", 1), ("lean", 2)]
    got = ld.load(path)["malleable"]
    assert got["curves"]["exact"] == [[1.0] * 4, [1.0] * 4, [2.0] * 4]
    assert got["curves"]["lean"] == [[2.0] * 4, [1.0] * 4, [2.0] * 4]
    assert got["started"] == "then" and got["command"].startswith("first`, then `")
    monkeypatch.setattr(sys, "argv", [*argv[:-2], "128", "--more", "--curves", str(path)])
    with pytest.raises(SystemExit, match="no recorded curves"):
        ld.main()
