"""``hpcgym papers NAME [--quick]``: the registry, the refusal of a paper without a runner."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from hpcgym.bench import papers
from hpcgym.bench.papers import PAPERS, run_paper, runner
from hpcgym.bench.papers.mebf import Headline, verdict
from hpcgym.cli import main
from hpcgym.errors import HpcGymError


def test_registry_names_every_paper_check() -> None:
    assert set(PAPERS) >= {"mebf", "sdpolicy", "koala", "dfrs"}
    assert callable(runner("mebf")) and callable(runner("sdpolicy"))
    with pytest.raises(HpcGymError, match="unknown paper 'nope'"):
        runner("nope")


def test_a_paper_without_a_runner_is_refused_clearly(monkeypatch, capsys) -> None:
    fake = types.ModuleType("hpcgym_fake_paper")
    monkeypatch.setitem(sys.modules, "hpcgym_fake_paper", fake)
    monkeypatch.setitem(PAPERS, "koala", "hpcgym_fake_paper")
    assert main(["papers", "koala", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "paper 'koala' has no runner yet" in err


def test_the_command_passes_quick_and_out_and_prints_the_table(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    calls = []

    def fake_run(quick: bool, out: Path | None) -> str:
        calls.append((quick, out))
        return "| table |"

    fake = types.ModuleType("hpcgym_fake_paper2")
    fake.run = fake_run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hpcgym_fake_paper2", fake)
    monkeypatch.setitem(PAPERS, "mebf", "hpcgym_fake_paper2")
    out = tmp_path / "sub" / "t.md"
    assert main(["papers", "mebf", "--quick", "--out", str(out)]) == 0
    assert calls == [(True, out)]
    assert "| table |" in capsys.readouterr().out
    assert run_paper("mebf") == "| table |" and calls[-1] == (False, None)


def test_unknown_paper_is_an_argument_error(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["papers", "nope"])
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "sign", "low", "high", "expected"),
    [
        (2.1, 0, 1.0, 3.0, "reproduced"),
        (2.1, 0, 2.2, 9.0, "above"),
        (40.0, 0, 20.0, 39.9, "below"),
        (None, -1, -5.0, -0.1, "reproduced"),
        (None, -1, -5.0, 0.5, "no direction"),
        (None, -1, 0.1, 5.0, "reversed"),
    ],
)
def test_verdicts_follow_the_intervals(value, sign, low, high, expected) -> None:
    assert verdict(Headline("x", "y", value, sign), low, high) == expected


def test_publish_writes_what_it_prints(tmp_path: Path, capsys) -> None:
    papers.publish("abc", tmp_path / "x.md")
    assert (tmp_path / "x.md").read_text() == "abc" and "abc" in capsys.readouterr().out


def _ablation_row(window: int, step: float, variant: str, factor: float) -> dict[str, object]:
    """One SD-Policy ablation result: a 6-day window, slowdown ``factor`` of 100."""
    return {
        "setting": "paper",
        "window": window,
        "step": step,
        "size": 6.0,
        "variant": variant,
        "slowdown": 100.0 * factor,
        "response": 50.0,
        "makespan": 1000.0,
        "guests": 10 if variant != "static" else 0,
        "jobs": 100,
    }


def test_sdpolicy_ablation_combines_runs_by_start_day() -> None:
    import pandas as pd

    from hpcgym.bench.papers.sdpolicy import _ratios, ablation_report

    rows = []
    # Windows of 6 days: starts 0, 2, 4, 6 from a step-2 run (indices 0-3) and 1, 3 from a
    # step-1 run (indices 1, 3). MAXSD 10's slowdown is (start + 1) / 10 of static's.
    for step, windows in ((2.0, (0, 1, 2, 3)), (1.0, (1, 3))):
        for k in windows:
            start = k * step
            for variant, factor in (("static", 1.0), ("MAXSD 10", (start + 1) / 10)):
                rows.append(_ablation_row(k, step, variant, factor))
    df = pd.DataFrame(rows)
    ratios = _ratios(df).xs("paper", level="setting")
    assert sorted(ratios.index) == [0, 1, 2, 3, 4, 6]
    assert ratios.loc[3, "slowdown"] == pytest.approx(0.4)
    assert ratios.loc[6, "guests"] == pytest.approx(10.0)
    text = ablation_report(df)
    assert "6 windows of 6 days starting every 1 day" in text
    assert "disjoint windows only (starts 0, 6)" in text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mebf", "sdpolicy", "koala", "dfrs"])
def test_each_quick_check_runs_and_writes_its_table(name: str, tmp_path: Path) -> None:
    # The real checks at their --quick size (1.5 to 3 minutes each on 2 cores).
    out = tmp_path / f"{name}.md"
    text = papers.run_paper(name, quick=True, out=out)
    assert out.read_text() == text
    assert "|---" in text and " [" in text  # a table, with intervals
    if name == "dfrs":  # the resumable rows file beside --out holds every simulation
        rows = (tmp_path / "dfrs-rows.csv").read_text().splitlines()
        assert len(rows) - 1 == 132


def test_the_mebf_quick_check_marks_its_verdicts_as_previews(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38, item 8: 4 windows cannot give a verdict the 20-window check may contradict
    (the quick check printed "reproduced" where docs/papers.md says "not reproduced")."""
    from hpcgym.bench.papers import mebf

    df = mebf._simulate_all(mebf.ablation_cases(2), 2)  # two windows: the least for intervals
    monkeypatch.setattr(mebf, "QUICK_WINDOWS", 2)
    monkeypatch.setattr(mebf, "_simulate_all", lambda todo, workers: df)
    text = mebf.run(quick=True, out=tmp_path / "mebf.md", workers=1)
    table = [line for line in text.splitlines() if line.startswith("| turnaround gain")]
    assert table
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        verdicts = cells[len(cells) // 2 + 1 :]
        assert verdicts and all(v.endswith("?") for v in verdicts), line
    assert "preview (2 windows)" in text and "each verdict above is a preview" in text
    full = mebf.ablation_report(df)
    assert "?" not in full.split("### MEBF ablation: means")[0] and "| verdict, " in full


def _sdpolicy_frame() -> pd.DataFrame:  # noqa: F821 (pandas is imported in the test)
    import pandas as pd

    rows = []
    for k in range(3):
        for variant, factor in (("static", 1.0), ("MAXSD 10", 0.3 + 0.01 * k)):
            rows.append(_ablation_row(k, 6.0, variant, factor))
    return pd.DataFrame(rows)


def _verdict_cells(text: str, first: str) -> list[str]:
    line = next(row for row in text.splitlines() if row.startswith(first))
    cells = [c.strip() for c in line.strip("|").split("|")]
    return cells[len(cells) // 2 + 1 :]


def test_the_sdpolicy_quick_check_marks_its_verdicts_as_previews() -> None:
    """Issue 38: a quick check's few windows give previews, never verdicts (as mebf's)."""
    from hpcgym.bench.papers.sdpolicy import ablation_report

    quick = ablation_report(_sdpolicy_frame(), preview=True)
    assert all(v.endswith("?") for v in _verdict_cells(quick, "| mean slowdown"))
    assert "| preview, paper |" in quick and "each verdict above is a preview" in quick
    full = ablation_report(_sdpolicy_frame())
    assert "?" not in full and "| verdict, paper |" in full


def test_the_koala_and_dfrs_quick_checks_mark_their_verdicts_as_previews() -> None:
    import pandas as pd

    from hpcgym.bench.papers import koala

    rows = []
    for seed, (f, e) in enumerate([(100.0, 150.0), (110.0, 160.0), (90.0, 140.0)]):
        for approach in ("PRA", "PWA"):
            for policy, resp in (("FPSMA", f), ("EGS", e)):
                rows.append(
                    {
                        "setting": koala.PAPER.name,
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
    df = pd.DataFrame(rows)
    assert "(EGS worse (paper's direction)?)" in koala.report(df, preview=True)
    assert "3 seeds per cell give intervals too wide" in koala.report(df, preview=True)
    full = koala.report(df)
    assert "(EGS worse (paper's direction))" in full and "preview" not in full

    from hpcgym.bench.papers import dfrs

    cases = dfrs.ablation_cases(1, n_jobs=12)
    both = pd.DataFrame([dfrs.run_case(c) for c in cases if c.load == 0.9])
    both["variant"] = [dfrs.variant_of(r) for _, r in both.iterrows()]
    both = pd.concat([both, both.assign(seed=1)], ignore_index=True)
    both["bound"] = 1.5
    both["degradation"] = both["max_bounded_stretch"] / both["bound"]
    quick = dfrs.ablation_report(both, preview=True)
    said = ("best ahead (paper)", "best behind", "tie")
    rows_ = [r for r in quick.splitlines() if any(f"| {v}" in r for v in said)]
    assert rows_ and all(any(f"| {v}? |" in r for v in said) for r in rows_)
    assert "2 traces per load give intervals too wide" in quick
    assert "?" not in dfrs.ablation_report(both)


def _square(x: int) -> int:
    return x * x


@pytest.mark.parametrize("workers", [1, 2])
def test_long_checks_show_progress_at_every_tenth(
    workers: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38, item 8: a paper check's simulations report how far they are, on stderr."""
    assert papers.run_all(_square, list(range(25)), workers) == [x * x for x in range(25)]
    lines = capsys.readouterr().err.splitlines()
    assert 2 <= len(lines) <= 11
    assert all(line.startswith("hpcgym papers: ") for line in lines)
    assert lines[-1].startswith("hpcgym papers: 25/25 simulations")
    counts = [int(line.split()[2].split("/")[0]) for line in lines]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)


def test_table_headings_count_days_in_the_right_number():
    from hpcgym.bench.papers.sdpolicy import _days

    assert _days(1) == "1 day"
    assert _days(1.0) == "1 day"
    assert _days(2) == "2 days"
    assert _days(0.5) == "0.5 days"
