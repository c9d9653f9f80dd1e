"""benchmarks/train_throughput.py: the row it writes, from runs it is handed (no timing here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import train_throughput as tt


def _run(cpu: float, weights: str = "w", env: float = 1.0, updates: float = 2.0) -> tt.Run:
    return tt.Run(steps=1000, cpu=cpu, env_cpu=env, update_cpu=updates, weights=weights)


def test_the_speed_ups_are_the_medians_of_the_paired_ratios_and_the_agents_are_compared() -> None:
    runs = {
        "sb3": [_run(8.0), _run(9.0), _run(12.0)],
        "exact": [_run(8.0), _run(6.0), _run(6.0)],
        "lean": [_run(4.0, "l"), _run(3.0, "l"), _run(4.0, "l")],
    }
    row = tt.row(tt.PRESETS["rigid"], runs, load=1.5)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "rigid (`hpcgym/Rigid-v0`)" and cells[1] == "1000"
    assert cells[2:8] == ["9.00", "6.00", "4.00", "111", "167", "250"]
    assert cells[8] == "**1.50x** (1.00-2.00)"  # pairs 8/8, 9/6, 12/6
    assert cells[9] == "**3.00x** (2.00-3.00)"  # pairs 8/4, 9/3, 12/4
    assert cells[12:] == ["yes", "yes", "1.5"]
    runs["exact"][1] = _run(6.0, weights="other")
    runs["lean"][2] = _run(4.0, weights="other")
    assert "| **no** | **no** |" in tt.row(tt.PRESETS["rigid"], runs, load=1.5)


def test_the_presets_include_rlschedulers_reserve_mode() -> None:
    import yaml

    reserve = tt.PRESETS["rlsched-reserve"]
    assert reserve.hyperparams is not None
    hp = yaml.safe_load(Path(reserve.hyperparams).read_text())[reserve.env_id]
    assert hp["env_kwargs"]["selection"] == "reserve"
    assert {p.env_id for p in tt.PRESETS.values()} == {"hpcgym/Rigid-v0", "hpcgym/Malleable-v0"}
