"""RLScheduler's job list and evaluation sequences, drawn as its evaluation script draws them."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import load
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.rlsched import (
    RLSCHED_SETS,
    gym_legacy_rng,
    read_rlscheduler_trace,
    rlscheduler_jobs,
    rlscheduler_sequences,
    rlscheduler_starts,
    split_starts,
)
from hpcgym.workloads.swf import COL, N_FIELDS, SwfTrace

# Seed 1, ten draws of randint(1024, 10000 - 1024 - 1): the starts of RLScheduler's published
# Lublin-1 table. Checked against the seeding module of OpenAI Gym at the commit RLScheduler's
# requirements pin (ff4664bd), run on a legacy numpy RandomState.
PUBLISHED_STARTS = [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085]


@pytest.fixture(scope="module")
def lublin():  # type: ignore[no-untyped-def]
    return read_rlscheduler_trace(resolve_file("lublin_256.swf.gz"))


def test_fixed_seed_gives_fixed_starts() -> None:
    assert rlscheduler_starts(10000) == PUBLISHED_STARTS
    assert rlscheduler_starts(10000, 3) == PUBLISHED_STARTS[:3]
    assert rlscheduler_starts(10000, seed=2) != PUBLISHED_STARTS


def test_gym_seeding_words() -> None:
    # sha512(b"0")[:8] read as two little-endian words seeds a RandomState.
    import hashlib

    d = hashlib.sha512(b"0").digest()
    words = [int.from_bytes(d[:4], "little"), int.from_bytes(d[4:8], "little")]
    expected = np.random.RandomState(words).randint(0, 2**31, size=5)
    assert (gym_legacy_rng(0).randint(0, 2**31, size=5) == expected).all()
    with pytest.raises(WorkloadError, match="non-negative"):
        gym_legacy_rng(-1)


def test_starts_range_and_job_slice() -> None:
    starts = rlscheduler_starts(59715, 200, job_slice=10000)
    assert all(1024 <= s < 10000 - 1024 - 1 for s in starts)
    short = rlscheduler_starts(2000, 50, length=256)
    assert all(256 <= s < 2000 - 256 - 1 for s in short)
    with pytest.raises(WorkloadError, match="too few"):
        rlscheduler_starts(2000)
    with pytest.raises(WorkloadError, match="shorter than a sequence"):
        rlscheduler_starts(10000, job_slice=500)


def test_lublin_job_list(lublin) -> None:  # type: ignore[no-untyped-def]
    assert len(lublin.jobs) == 10000
    assert lublin.platform.total_nodes == 256
    assert lublin.procs_per_node == 1.0
    first = lublin.jobs[0]
    # The trace's own clock (its first job submits at 5094), its size, no request time.
    assert (first.id, first.submit, first.work, first.nodes, first.walltime) == (
        1,
        5094.0,
        12072.0,
        16,
        None,
    )


def test_sequences(lublin) -> None:  # type: ignore[no-untyped-def]
    seqs = rlscheduler_sequences(lublin)
    assert [s for s, _ in seqs] == PUBLISHED_STARTS
    start, jobs = seqs[0]
    assert len(jobs) == 1024
    assert jobs[0] is lublin.jobs[start] and jobs[-1] is lublin.jobs[start + 1023]
    assert [s for s, _ in rlscheduler_sequences(lublin)] == PUBLISHED_STARTS  # deterministic


def _record(jid: int, submit: float, run: float, alloc: int, req: int, req_time: float) -> list:  # type: ignore[type-arg]
    row = [-1.0] * N_FIELDS
    row[COL["job_id"]] = jid
    row[COL["submit_time"]] = submit
    row[COL["run_time"]] = run
    row[COL["alloc_procs"]] = alloc
    row[COL["req_procs"]] = req
    row[COL["req_time"]] = req_time
    row[COL["status"]] = 1
    return row


def test_reading_rules() -> None:
    header = SwfHeader.from_lines([" MaxNodes: 4", " MaxProcs: 8"])
    data = np.array(
        [
            _record(3, 30, 50, 3, -1, 100),  # 3 procs on 2-proc nodes: 2 nodes
            _record(1, 10, -1, 2, 5, -1),  # negative run time: 10 s; 5 requested procs > 2
            _record(2, 20, 0, 2, 2, 60),  # zero run time: dropped
            _record(4, 40, 70, 8, 8, 0),  # a request of 0 s: 0.1 s (the engine needs > 0)
        ]
    )
    t = rlscheduler_jobs(SwfTrace(header, data), "mem")
    assert t.procs_per_node == 2.0
    assert t.platform.total_nodes == 4
    got = [(j.id, j.submit, j.work, j.nodes, j.walltime) for j in t.jobs]
    assert got == [
        (1, 10.0, 10.0, 3, None),
        (3, 30.0, 50.0, 2, 100.0),
        (4, 40.0, 70.0, 4, 0.1),
    ]


def test_reading_errors() -> None:
    data = np.array([_record(1, 0, 5, 1, 1, -1)])
    with pytest.raises(WorkloadError, match="MaxNodes"):
        rlscheduler_jobs(SwfTrace(SwfHeader.from_lines([]), data), "mem")
    no_size = np.array([_record(1, 0, 5, -1, -1, -1)])
    with pytest.raises(WorkloadError, match="job 1 has no processor count"):
        rlscheduler_jobs(SwfTrace(SwfHeader.from_lines([" MaxNodes: 4"]), no_size), "mem")


def test_split_starts_fixed_and_inside() -> None:
    starts = split_starts(7719, 10000, 30)
    assert starts == split_starts(7719, 10000, 30)  # a fixed seed gives fixed starts
    assert starts[:3] == [8676, 8946, 7963]
    assert all(7719 <= s <= 10000 - 1024 for s in starts)
    assert split_starts(7719, 10000, 30, seed=2) != starts
    # The range's last start is reachable: a range of exactly one sequence gives it every time.
    assert split_starts(5, 5 + 1024, 4) == [5, 5, 5, 5]
    with pytest.raises(WorkloadError, match="fewer than one 1024-job sequence"):
        split_starts(2264, 3170, 1)


@pytest.mark.parametrize("name", sorted(RLSCHED_SETS))
def test_rlsched_sets_are_the_job_lists(name: str) -> None:
    w = load(name)
    trace = read_rlscheduler_trace(resolve_file(RLSCHED_SETS[name][0]))
    # Job-number order (RLScheduler's indices) is the submission order on the bundled traces,
    # so a start index means the same jobs in both.
    assert w.jobs == trace.jobs
    assert w.platform == trace.platform
    assert w.name == name


def test_rlsched_lublin_keeps_the_trace_clock() -> None:
    w = load("rlsched/lublin256-v0")
    assert w.jobs[0].submit > 0  # F1 reads absolute submit times
    assert all(j.walltime is None for j in w.jobs[:100])  # no requests: estimates are exact
