"""The KOALA paper check's plumbing: settings, KOALA-only metrics, the ratio table."""

from __future__ import annotations

import pandas as pd

from hpcgym.bench.papers.koala import ABLATION, PAPER, TODAY, report, simulate


def test_the_paper_setting_adds_local_users_and_counts_koala_jobs_only() -> None:
    today = simulate(TODAY, "Wm", "PWA", "egs", 0, 30.0)
    paper = simulate(PAPER, "Wm", "PWA", "egs", 0, 30.0)
    assert today["local_preemptions/job"] == 0 and paper["local_preemptions/job"] > 0
    # Local jobs are not in the means: without them the utilization would be KOALA's alone.
    assert paper["utilization"] > today["utilization"]
    assert paper["run"] > today["run"]  # resizes cost time, shrunk jobs run slower
    assert {s.name for s in ABLATION} >= {TODAY.name, PAPER.name}


def test_report_gives_intervals_and_the_verdict_of_each_setting() -> None:
    rows = []
    for seed, (f, e) in enumerate([(100.0, 150.0), (110.0, 160.0), (90.0, 140.0)]):
        for approach in ("PRA", "PWA"):
            for policy, resp in (("FPSMA", f), ("EGS", e)):
                rows.append(
                    {
                        "setting": PAPER.name,
                        "workload": "W'm" if approach == "PWA" else "Wm",
                        "approach": approach,
                        "interarrival": 30.0,
                        "policy": policy,
                        "seed": seed,
                        "utilization": 0.5,
                        "run": resp,
                        "wait": 0.0,
                        "response": resp,
                        "max_size": 10.0,
                        "grows/job": 1.0,
                        "shrinks/job": 1.0,
                        "local_preemptions/job": 0.5,
                    }
                )
    text = report(pd.DataFrame(rows))
    assert "EGS worse (paper's direction)" in text
