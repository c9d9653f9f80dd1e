"""The DFRS paper check's plumbing on tiny instances: load scaling, rows, tables."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcgym.bench.papers.dfrs import Case, instance, run_case, tables


def test_instances_are_scaled_to_the_load_as_a_whole() -> None:
    jobs = instance(0, 0.6, 40)
    assert len(jobs) == 40
    span = jobs[-1].submit - jobs[0].submit
    demand = sum(j.work * j.nodes * j.cpu_need for j in jobs)
    assert demand / (128 * span) == pytest.approx(0.6, rel=0.02)


def test_rows_and_tables_with_another_period() -> None:
    rows = [
        run_case(Case(0, 0.6, 25, "EASY")),
        run_case(Case(0, 0.6, 25, "GreedyPM */per/opt=min/minvt=600")),
        run_case(Case(0, 0.6, 25, "GreedyPM */per/opt=min/minvt=600", period=1200.0)),
    ]
    assert rows[2]["period"] == 1200.0
    assert all(r["cycle_breaks_per_job"] >= 0 for r in rows)
    df = pd.DataFrame(rows)
    df["bound"] = 1.5
    df["degradation"] = df["max_bounded_stretch"] / df["bound"]
    df.loc[:, "load"] = 0.7  # so that the counts table (loads >= 0.7) has rows
    text = tables(df)
    assert "| GreedyPM */per/opt=min/minvt=600 (period 1200) |" in text
    assert "| GreedyPM */per/opt=min/minvt=600 |" in text
    assert "cycle breaks/job" in text


def test_ablation_rows_name_their_variant_and_count_released_moves_as_migrations() -> None:
    from hpcgym.bench.papers.dfrs import ablation_cases, ablation_report, variant_of

    cases = ablation_cases(1, n_jobs=12)
    assert {c.accounting for c in cases} == {"hold", "release"}
    rows = [run_case(c) for c in cases if c.load == 0.9]
    df = pd.DataFrame(rows)
    df["variant"] = [variant_of(r) for _, r in df.iterrows()]
    assert "other" not in set(df["variant"])
    released = df[(df["accounting"] == "release") & (df["algorithm"] != "EASY")]
    assert (released["mig_per_job"] >= 0).all() and (released["pmtn_per_job"] >= 0).all()
    # The report needs two instances for an interval: a second copy under another seed.
    both = pd.concat([df, df.assign(seed=1)], ignore_index=True)
    both["bound"] = 1.5
    both["degradation"] = both["max_bounded_stretch"] / both["bound"]
    text = ablation_report(both[both["load"] == 0.9])
    assert "| penalty released: off the nodes, placed anywhere after |" in text
