"""``Capacity.room`` (C when built) counts what its numpy formula counts, exactly.

The counts decide which sizes the env offers (``hpcgym.envs.menu``): one node counted apart
would change an action mask. Random CPU and memory use on one or several clusters, with
values on the comparison's edges (exactly ``1 - s + EPS``, exact and signed zeros, NaN), and
random tasks (whole nodes, shares, memory or none).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.envs.capacity import _ROOM_COUNTS, Capacity
from hpcgym.sim import Platform, Simulator
from hpcgym.sim.nodes import EPS

SHARES = [0.25, 0.5, 1.0 / 3.0, 0.75, 1.0, 1.5, 1e-6, float("nan")]
MEMS = [0.0, -0.0, 0.1, 0.5, 1.0, float("nan")]


def _edges(share: float, mem: float) -> list[float]:
    """Values a node's use takes on the edges of a task's comparisons."""
    return [0.0, -0.0, 1.0 - share + EPS, 1.0 - mem + EPS, np.nextafter(1.0 - share + EPS, 2.0)]


@pytest.mark.skipif(_ROOM_COUNTS is None, reason="needs the C helper: compares it with numpy")
@settings(max_examples=300, deadline=None)
@given(
    widths=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
    tasks=st.lists(st.tuples(st.sampled_from(SHARES), st.sampled_from(MEMS)), max_size=12),
)
def test_room_counts_as_numpy_does(
    widths: list[int], seed: int, tasks: list[tuple[float, float]]
) -> None:
    rng = np.random.default_rng(seed)
    sim = Simulator(Platform.multi(widths), [])
    n = sum(widths)
    pool = [v for s, m in tasks for v in _edges(s, m)] + [0.0, 0.5, 1.0, 0.3, float("nan")]
    cpu = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.random(n))
    mem = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.random(n))
    sim.pool.cpu_used[:] = cpu  # set by hand: the engine would never hold NaN or -0.0
    sim.pool.mem_used[:] = mem
    cap = Capacity(sim)
    share = np.array([s for s, _ in tasks], dtype=np.float64)
    need = np.array([m for _, m in tasks], dtype=np.float64)
    got, want = cap.room(share, need), cap.numpy_room(share, need)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    # Views and other dtypes (a ledger's rows) convert as numpy converts them.
    if tasks:
        assert np.array_equal(cap.room(share[::-1], need[::-1]), want[::-1])
        assert np.array_equal(
            cap.room(share.astype(np.float32), need), cap.numpy_room(share.astype(np.float32), need)
        )


@pytest.mark.skipif(_ROOM_COUNTS is None, reason="needs the C helper")
def test_room_counts_refuses_arrays_that_do_not_agree() -> None:
    out = np.empty((2, 1), dtype=np.int64)
    cpu = np.zeros(4)
    with pytest.raises(ValueError, match="sizes do not agree"):
        _ROOM_COUNTS(out, cpu, np.zeros(3), np.zeros(2), np.zeros(2), (0,), EPS)
    with pytest.raises(TypeError, match="float64"):
        _ROOM_COUNTS(out, cpu.astype(np.float32), cpu, np.zeros(2), np.zeros(2), (0,), EPS)
    with pytest.raises(TypeError, match="int64"):
        _ROOM_COUNTS(out.astype(np.float64), cpu, cpu, np.zeros(2), np.zeros(2), (0,), EPS)
    with pytest.raises(ValueError, match="ascend"):
        _ROOM_COUNTS(np.empty((2, 2), np.int64), cpu, cpu, np.zeros(2), np.zeros(2), (3, 1), EPS)
