"""``hpcgym bench --split validation``: a protocol scenario's episodes from its validation split."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import hpcgym  # noqa: F401
import hpcgym.workloads as W
from hpcgym.bench import scenarios
from hpcgym.cli import main
from hpcgym.envs.episodes import splits_of
from hpcgym.errors import SpecError


def test_on_split_swaps_the_test_split_for_the_validation_split() -> None:
    sc = scenarios.get("malleable-small-v2")
    v = scenarios.on_split(sc, "validation")
    assert v.name == "malleable-small-v2@validation" and v.seeds == sc.seeds
    assert v.env_kwargs == {**sc.env_kwargs, "split": "validation"}
    assert scenarios.on_split(sc, "test") is sc
    with pytest.raises(SpecError, match="has no splits"):
        scenarios.on_split(scenarios.get("rigid-lublin-v0"), "validation")
    with pytest.raises(SpecError, match="fixed sequences"):
        scenarios.on_split(scenarios.get("rlsched-lublin-test-v0"), "validation")
    with pytest.raises(SpecError, match="unknown split 'train'"):
        scenarios.on_split(sc, "train")


def test_bench_on_the_validation_split_plays_only_validation_jobs(tmp_path: Path) -> None:
    argv = ["bench", "--scenario", "malleable-small-v2", "--policy", "fcfs", "--split"]
    assert main([*argv, "validation", "--out", str(tmp_path), "--executor", "serial"]) == 0
    (run,) = tmp_path.glob("*/*/results.csv")
    assert set(pd.read_csv(run)["scenario"]) == {"malleable-small-v2@validation"}
    jobs = pd.read_csv(run.with_name("jobs.csv"))
    w = W.load("elastic/sdsc-sp2-mebf-v0")
    part = splits_of(w)["validation"]
    allowed = {j.id for j in w.jobs[part.first : part.stop]}
    assert len(jobs) == 30 * 64 and set(jobs["id"]) <= allowed


def test_split_is_refused_where_it_cannot_apply(tmp_path: Path, capsys) -> None:
    assert main(["bench", "--split", "validation", "--out", str(tmp_path)]) == 2
    assert "applies to --scenario runs" in capsys.readouterr().err
    assert main(["bench", "--scenario", "rigid-lublin-v0", "--split", "validation"]) == 2
    assert "has no splits" in capsys.readouterr().err
