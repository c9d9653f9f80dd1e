"""``hpcgym list``: every registry word of the glossary has its list, names aligned."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcgym.bench.listing import KINDS, LISTERS, name_table
from hpcgym.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_lists_every_registered_name_with_a_line(capsys):
    from hpcgym.baselines import names as baselines
    from hpcgym.bench import scenarios
    from hpcgym.bench.papers import PAPERS
    from hpcgym.envs.registration import PRESETS
    from hpcgym.workloads import registry

    expected = {
        "sets": registry.names(),
        "presets": list(PRESETS),
        "scenarios": scenarios.names(),
        "baselines": baselines(),
        "papers": list(PAPERS),
    }
    for kind in KINDS:
        rows = LISTERS[kind]()
        assert [name for name, _ in rows] == expected[kind], kind
        assert all(text.strip() for _, text in rows), [r for r in rows if not r[1].strip()]


def test_every_shipped_baseline_was_registered_with_its_own_summary():
    # In a fresh interpreter: other tests may register baselines of their own.
    import subprocess
    import sys

    code = (
        "import hpcgym.baselines\n"
        "from hpcgym.baselines import registry\n"
        "short = [n for n in registry.names() if len(registry._SUMMARIES[n]) < 20]\n"
        "assert not short, short\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_baseline_registered_without_a_summary_is_listed_by_its_docstring():
    from hpcgym.baselines.classic import FCFS
    from hpcgym.baselines.registry import _FACTORIES, _SUMMARIES, register, summary

    class Mine(FCFS):
        """My own first-come rule."""

    register("mine-for-listing", Mine)
    try:
        assert summary("mine-for-listing") == "My own first-come rule"
    finally:
        del _FACTORIES["mine-for-listing"], _SUMMARIES["mine-for-listing"]


@pytest.mark.parametrize("width", [60, 80, 160])
def test_names_stay_aligned_and_lines_fit_at_any_width(width):
    rows = [("a", "short"), ("a-much-longer-name-v1", "word " * 60), ("b", "x")]
    text = name_table(rows, width=width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines)
    column = len("  a-much-longer-name-v1  ")
    assert all(line[column - 2 : column] == "  " for line in lines)
    assert all(line[column] != " " for line in lines)  # every description starts in one column
    assert text.count("word") == 60


def test_the_command_prints_one_kind_or_all_under_headings(capsys):
    assert main(["list", "presets"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].lstrip().startswith("hpcgym/Rigid-v0")
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for heading in ("Workload sets", "Env presets", "Benchmark scenarios", "Baselines", "Paper"):
        assert heading in out


def test_an_unknown_kind_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as err:
        main(["list", "agents"])
    assert err.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_the_glossary_names_every_list():
    glossary = (ROOT / "docs/glossary.md").read_text()
    for kind in KINDS:
        assert f"hpcgym list {kind}" in glossary


def test_a_reader_that_leaves_early_gets_no_traceback():
    import subprocess
    import sys

    code = "import sys; from hpcgym.cli import main; sys.exit(main(['list']))"
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader leaves before the first line is written
    err = child.stderr.read().decode()
    assert child.wait() == 0
    assert "Traceback" not in err and "BrokenPipe" not in err
