"""Two benches racing into one new --run-dir: exactly one runs (issue "Hardening III", N7).

Both used to exit 0 (3 trials of 8): the folder was checked, then made with ``exist_ok``, and
one run's results were lost; once run.json said fcfs while results.csv held easy. Here two real
processes start at a barrier and race, several times; so do a resume and a run.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from hpcgym.bench.runlock import folder_lock
from hpcgym.cli import main
from hpcgym.errors import SpecError

TRIALS = 4


def _bench(barrier, argv: list[str], log: str) -> None:
    """A child: wait for the other, run ``hpcgym bench``, exit with its code."""
    with open(log, "w") as f:
        sys.stdout = sys.stderr = f
        barrier.wait(60)
        try:
            code = main(argv)
        except BaseException as e:  # a traceback is a failure of the test too
            print(f"raised {e!r}", file=f)
            code = 99
        f.flush()
    os._exit(code)


def _race(tmp_path: Path, trial: int, argvs: list[list[str]]) -> list[tuple[int, str]]:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(argvs))
    logs = [str(tmp_path / f"log-{trial}-{k}.txt") for k in range(len(argvs))]
    procs = [
        ctx.Process(target=_bench, args=(barrier, argv, log))
        for argv, log in zip(argvs, logs, strict=True)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode is not None, "a bench did not finish"
    return [(p.exitcode or 0, Path(log).read_text()) for p, log in zip(procs, logs, strict=True)]


def _argv(policy: str, folder: Path, *extra: str) -> list[str]:
    return ["bench", "--scenario", "tiny-v0", "--policy", policy, "--executor", "serial",
            "--no-progress", "--run-dir", str(folder), *extra]  # fmt: skip


@pytest.mark.parametrize("trial", range(TRIALS))
def test_two_benches_into_one_new_run_dir(tmp_path, trial):
    folder = tmp_path / "run"
    (a, log_a), (b, log_b) = _race(tmp_path, trial, [_argv("fcfs", folder), _argv("easy", folder)])
    assert sorted([a, b]) == [0, 2], (log_a, log_b)
    winner, loser = ("fcfs", log_b) if a == 0 else ("easy", log_a)
    assert "hpcgym: error: " in loser and str(folder) in loser
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "complete" and record["config"]["policies"] == [winner]
    assert set(pd.read_csv(folder / "results.csv")["policy"]) == {winner}


def test_a_resume_and_a_run_race_one_at_a_time(tmp_path):
    folder = tmp_path / "run"
    assert main(_argv("fcfs", folder)) == 0
    before = (folder / "results.csv").read_bytes()
    for trial in range(2):
        results = _race(
            tmp_path,
            trial,
            [_argv("fcfs", folder, "--resume"), _argv("fcfs", folder, "--resume")],
        )
        codes = sorted(code for code, _ in results)
        # Both may finish one after the other (the second finds nothing left to run), but
        # never both at once: a refused one says the folder is in use.
        assert codes in ([0, 0], [0, 2]), results
        for code, log in results:
            assert code == 0 or "in use by another" in log, log
    assert (folder / "results.csv").read_bytes() == before


def test_a_locked_folder_refuses_a_second_lock(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    busy = pytest.raises(SpecError, match="in use by another hpcgym bench")
    with folder_lock(folder), busy, folder_lock(folder):
        pass
    with folder_lock(folder):  # released at the end of the block
        pass
