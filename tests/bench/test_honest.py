"""Honest tables: unfinished jobs counted, truncated and failed policies ranked last."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcgym.bench.episode import run_episode
from hpcgym.bench.evaluate import summary_table
from hpcgym.bench.report import leaderboard


def test_a_truncated_episode_counts_its_unfinished_jobs() -> None:
    out = run_episode("random", "hpcgym/Rigid-v0", 5, {"n_jobs": 40, "max_steps": 12})
    assert out.truncated  # cut at 12 steps, long before every job started
    jobs, s = out.jobs, {**out.summary, **out.counts}
    ended = jobs["state"].isin(["completed", "killed", "rejected"])
    assert s["unfinished"] == (~ended).sum() > 0
    never = jobs["start"].isna() & (jobs["state"] != "rejected")
    assert s["unstarted"] == never.sum() > 0
    end = s["episode_end"]
    expected = (end - jobs.loc[never, "submit"]).clip(lower=0.0)
    np.testing.assert_array_equal(jobs.loc[never, "wait"], expected)
    # mean_wait counts them: it is the mean over every job that has a wait now
    assert s["mean_wait"] == jobs["wait"].dropna().mean()
    assert s["max_wait"] >= expected.max()


def test_a_finished_episode_keeps_the_engine_summary() -> None:
    out = run_episode("easy", "hpcgym/Rigid-v0", 5, {"n_jobs": 12})
    assert (out.counts["unfinished"], out.counts["unstarted"]) == (0.0, 0.0)
    assert not out.truncated


def _rows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scenario": ["s"] * 6,
            "policy": ["best-but-cut", "best-but-cut", "b", "b", "c", "c"],
            "truncated": [True, False, False, False, False, False],
            "mean_bsld": [0.5, 0.5, 3.0, 3.0, 2.0, 2.0],
            "killed": [0.0, 0.0, 1.0, 1.0, 0.0, 0.0],
            "rejected": [0.0, 0.0, 0.0, 0.0, 2.0, 2.0],
            "unfinished": [5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        }
    )


def test_a_policy_with_a_truncated_episode_ranks_after_every_other() -> None:
    board = leaderboard(_rows())
    assert list(board["policy"]) == ["c", "b", "best-but-cut"]
    assert list(board["truncated"]) == [0, 0, 1]
    assert list(board["killed"]) == [0.0, 1.0, 0.0]
    assert list(board["rejected"]) == [2.0, 0.0, 0.0]
    assert list(board["unfinished"]) == [0.0, 0.0, 2.5]
    table = summary_table(_rows())
    assert list(table.index) == ["c", "b", "best-but-cut"]
    assert {"killed", "rejected", "unfinished"} <= set(table.columns)


def test_failed_policies_rank_after_truncated_ones() -> None:
    failures = pd.DataFrame({"scenario": ["s", "s"], "policy": ["c", "gone"], "seed": [1, 1]})
    board = leaderboard(_rows(), failures=failures)
    assert list(board["policy"]) == ["b", "best-but-cut", "c", "gone"]
    assert list(board["failed"]) == [0, 0, 1, 1]
    assert list(board["episodes"]) == [2, 2, 2, 0]


def _idle_rows(with_other: bool) -> pd.DataFrame:
    rows = {
        "scenario": ["s", "s"],
        "policy": ["never-starts", "never-starts"],
        "truncated": [True, True],
        "mean_bsld": [float("nan"), float("nan")],
        "jobs": [40.0, 40.0],
        "rejected": [0.0, 0.0],
        "unstarted": [40.0, 40.0],
        "unfinished": [40.0, 40.0],
    }
    if with_other:
        for k, v in {
            "scenario": "s",
            "policy": "easy",
            "truncated": False,
            "mean_bsld": 9.0,
            "jobs": 40.0,
            "rejected": 0.0,
            "unstarted": 0.0,
            "unfinished": 0.0,
        }.items():
            rows[k] = [*rows[k], v]  # type: ignore[list-item]
    return pd.DataFrame(rows)


def test_a_policy_that_starts_no_job_is_never_ranked_first() -> None:
    from hpcgym.bench.report import UNRANKED, markdown

    alone = leaderboard(_idle_rows(with_other=False))
    assert list(alone["rank"]) == [UNRANKED]
    assert "started no job in any episode" in markdown(alone, "t")
    board = leaderboard(_idle_rows(with_other=True))
    assert list(board["policy"]) == ["easy", "never-starts"]
    assert list(board["rank"]) == [1, UNRANKED]


def test_a_policy_that_starts_jobs_in_one_episode_keeps_its_rank() -> None:
    rows = _idle_rows(with_other=False)
    rows.loc[1, ["unstarted", "mean_bsld"]] = [10.0, 3.0]
    assert list(leaderboard(rows)["rank"]) == [1]
