"""The scale benchmark's shapes, small: the engine's FCFS and EASY start jobs as the bare loops do.

``benchmarks/scale.py`` times ``make("fcfs")`` and ``make("easy")`` against plain-Python loops
on every shape and refuses to report when their start times differ. These tests run the same
code (shape builders, packing, both runners) in this process on the first jobs of each shape.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bare_indexed  # noqa: E402
import bare_loops  # noqa: E402
import scale  # noqa: E402

SMALL = 1_200
"""Jobs per shape: enough for queues, backfilling and (overloaded shapes) a long backlog."""


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, np.ndarray]]:
    """Every shape's arrays at ``SMALL`` jobs, as the benchmark reads them (built once)."""
    cache = tmp_path_factory.mktemp("scale-cache")
    return {s.key: scale.pack(scale.shape_workload(s, SMALL, cache)) for s in scale.SHAPES}


@pytest.mark.parametrize("key", [s.key for s in scale.SHAPES])
def test_engine_starts_equal_the_bare_loops(
    key: str, packed: dict[str, dict[str, np.ndarray]]
) -> None:
    d = packed[key]
    starts = {}
    for name in ("fcfs", "easy"):
        bare, _, _ = scale.run_bare(d, name)
        for loop in (False, True):  # ``sim.run`` (the batch core where built), the event loop
            engine, _, _ = scale.run_engine(d, name, loop=loop)
            assert scale.mismatch(key, name, d["id"], engine, bare) == ""
            assert not np.isnan(engine).all()
        starts[name] = engine
    # EASY must really backfill here, or its check above would repeat FCFS's.
    assert (starts["easy"] < starts["fcfs"]).any()


@pytest.mark.parametrize(("steps", "scan_from"), [(10**9, 0), (0, 0), (3, 0), (64, 256)])
@pytest.mark.parametrize("key", ["fat64-nodes", "overload-sdsc", "overload-lublin", "sdsc-sp2"])
def test_both_short_job_passes_of_easy_start_what_the_scan_starts(
    key: str,
    steps: int,
    scan_from: int,
    packed: dict[str, dict[str, np.ndarray]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EASY's pass for jobs ending by the shadow time: scan only, sorted only, both, default."""
    from hpcgym.baselines import classic

    monkeypatch.setattr(classic, "SCAN_STEPS", steps)
    monkeypatch.setattr(classic, "SCAN_FROM", scan_from)
    d = packed[key]
    engine, _, _ = scale.run_engine(d, "easy")
    bare, _, _ = scale.run_bare(d, "easy")
    assert scale.mismatch(key, "easy", d["id"], engine, bare) == ""


@pytest.mark.parametrize("key", ["fat64-nodes", "overload-sdsc", "nodes-100k", "hpc2n"])
def test_the_size_indexed_prototype_starts_what_the_scan_starts(
    key: str, packed: dict[str, dict[str, np.ndarray]]
) -> None:
    d = packed[key]
    specs, capacity = scale.specs_of(d), int(d["machine"][0])
    scan = bare_loops.bare_easy(specs, capacity)
    indexed = bare_indexed.bare_easy_indexed(specs, capacity)
    assert np.array_equal(np.array(scan), np.array(indexed), equal_nan=True)


def test_shapes_are_what_they_claim(packed: dict[str, dict[str, np.ndarray]]) -> None:
    units = {k: int(d["machine"][0]) for k, d in packed.items()}
    assert units["nodes-100k"] == 100_000
    assert units["cea-curie"] == 93_312
    assert units["fat64-cores"] == 64 * 64
    assert units["fat64-nodes"] == 64 and int(packed["fat64-nodes"]["machine"][1]) == 64
    assert str(packed["fat64-nodes"]["unit"]).startswith("node of 64 cores")
    assert str(packed["hpc2n"]["unit"]).startswith("node of 2 cores")
    assert str(packed["hpc2n-procs"]["unit"]) == "processor"
    # Rounding 1-256-core jobs up to 64-core nodes inflates their core-seconds.
    assert float(packed["fat64-nodes"]["load"][1]) > 1.5
    # Compressing arrivals 4x makes the queue grow far beyond the uncompressed trace's.
    for plain, compressed in (("lublin-10k", "overload-lublin"), ("sdsc-sp2", "overload-sdsc")):
        queues = []
        for key in (plain, compressed):
            d = packed[key]
            queues.append(scale.peak_queue(d["submit"], scale.run_bare(d, "easy")[0]))
        assert queues[1] > 2 * queues[0]
    for d in packed.values():
        assert (d["size"] <= d["machine"][0]).all()


def test_a_changed_start_is_reported() -> None:
    specs = [(0.0, 10.0, 10.0, 2), (0.0, 5.0, 5.0, 2), (1.0, 1.0, 1.0, 1)]
    fcfs = np.array(bare_loops.bare_fcfs(specs, 3))
    easy = np.array(bare_loops.bare_easy(specs, 3))
    assert fcfs.tolist() == [0.0, 10.0, 10.0]
    assert easy.tolist() == [0.0, 10.0, 1.0]
    ids = np.array([1, 2, 3])
    msg = scale.mismatch("toy", "easy", ids, fcfs, easy)
    assert "MISMATCH" in msg and "job 3" in msg and "1 jobs" in msg
    assert scale.mismatch("toy", "easy", ids, easy, easy.copy()) == ""


def test_jobs_larger_than_the_machine_are_refused_by_both() -> None:
    specs = [(0.0, 10.0, 10.0, 4), (0.0, 5.0, 5.0, 1)]
    for loop in (bare_loops.bare_fcfs, bare_loops.bare_easy):
        starts = loop(specs, 3)
        assert np.isnan(starts[0]) and starts[1] == 0.0
