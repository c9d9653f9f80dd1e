"""``metrics.summary_of`` reduces with the ufuncs straight (``np.add.reduce``...) and skips masks
that keep every row: its summary must equal the one ``mean()``, ``max()``, ``sum()`` and
``nanmax`` over the masked columns give, bit for bit, whatever NaNs and infinities the table
holds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.errors import SpecError
from hpcgym.sim.config import SimConfig
from hpcgym.sim.metrics import _MEANS, _SUMS, EpisodeTotals, summary_of


def reference(columns: dict[str, np.ndarray], t: EpisodeTotals, cfg: SimConfig) -> dict[str, float]:
    """The summary as ``summary_of`` computed it before (numpy's methods, masks applied)."""
    out = {
        "jobs": float(t.jobs),
        "completed": float(t.completed),
        "killed": float(t.killed),
        "rejected": float(t.rejected),
    }
    started = ~np.isnan(columns["start"])
    for name in _MEANS:
        col = columns[name][started]
        col = col[np.isfinite(col)]
        out[f"mean_{name}"] = float(col.mean()) if col.size else 0.0
        out[f"max_{name}"] = float(col.max()) if col.size else 0.0
    for name in _SUMS:
        out[name] = float(columns[name].sum())
    ends, submits = columns["end"], columns["submit"]
    first = float(submits.min()) if submits.size else 0.0
    last = float(np.nanmax(ends)) if np.isfinite(ends).any() else first
    makespan = last - first
    area = t.capacity * makespan
    out["makespan"] = makespan
    out["utilization"] = t.alloc_area / area if area > 0 else 0.0
    out["effective_utilization"] = t.useful_area / area if area > 0 else 0.0
    work = t.total_demand_work
    out["normalized_underutilization"] = t.underutilization / work if work > 0 else 0.0
    lost = float(columns["lost_work"].sum())
    out["lost_work"] = lost
    out["normalized_lost_work"] = lost / work if work > 0 else 0.0
    out["energy"] = cfg.idle_power * area + (cfg.busy_power - cfg.idle_power) * t.alloc_area
    return out


value = st.one_of(
    st.floats(0.0, 1e7, allow_nan=False),
    st.floats(-1e3, 1e12, allow_nan=False, allow_infinity=False),
    st.sampled_from([math.nan, math.inf, 0.1, 1.0 / 3.0]),
)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(0, 300),
    data=st.data(),
    nan_starts=st.sampled_from([0.0, 0.1, 1.0]),
    odd=st.sampled_from([0.0, 0.05, 0.5]),
)
def test_summary_equals_numpy_methods(n, data, nan_starts, odd) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    start = rng.random(n) * 1e6
    start[rng.random(n) < nan_starts] = np.nan
    columns: dict[str, np.ndarray] = {"start": start}
    for name in (*_MEANS, "end", "submit", "lost_work"):
        col = rng.exponential(10.0 ** rng.integers(-3, 9), n)
        pick = rng.random(n) < odd  # some NaNs and infinities, from the strategy
        col[pick] = [data.draw(value) for _ in range(int(pick.sum()))]
        columns[name] = col
    columns["submit"] = np.abs(np.nan_to_num(columns["submit"], posinf=5.0))
    columns["lost_work"] = np.nan_to_num(columns["lost_work"], posinf=0.0)
    for name in _SUMS:
        columns[name] = rng.integers(0, 5, n)
    totals = EpisodeTotals(
        jobs=n,
        completed=n,
        killed=0,
        rejected=0,
        capacity=64.0,
        alloc_area=12345.678,
        useful_area=12000.5,
        underutilization=3.25,
        total_demand_work=data.draw(st.sampled_from([0.0, 1e5, 1e9 / 7])),
    )
    cfg = SimConfig()
    try:
        expected = reference(columns, totals, cfg)
    except FloatingPointError:  # pragma: no cover - numpy set to raise elsewhere
        return
    if any(math.isinf(v) for v in expected.values()):
        with pytest.raises(SpecError, match="overflow"):
            summary_of(columns, totals, cfg)
        return
    got = summary_of(columns, totals, cfg)
    assert list(got) == list(expected)
    for key, v in expected.items():
        assert type(got[key]) is float, key
        assert got[key] == v or (math.isnan(got[key]) and math.isnan(v)), key
