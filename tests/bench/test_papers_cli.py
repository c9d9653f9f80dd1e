"""``hpcgym papers NAME [options]``: every check's flags, its modes, and the old command lines.

The checks themselves are tested with their modules; here each mode is routed with a stand-in
for the simulations, and two cheap checks (rlscheduler on 2 sequences, evolving on 3 cases) run
for real, through ``hpcgym papers`` and through their old ``python -m`` command lines.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hpcgym.bench.papers import PAPERS, cli, dfrs, mebf, sdpolicy
from hpcgym.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_every_check_has_flags_and_examples() -> None:
    assert set(cli.OPTIONS) == set(PAPERS) == set(cli.EXAMPLES)
    assert set(PAPERS) >= {"mebf", "sdpolicy", "koala", "dfrs", "rlscheduler", "evolving"}


def _captured(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    monkeypatch.setattr(module, name, lambda *a, **k: calls.append((a, k)) or "| t |")
    return calls


def test_mebf_runs_the_ablation_unless_told_the_experiments(monkeypatch, tmp_path) -> None:
    calls = _captured(monkeypatch, mebf, "_ablation")
    out = tmp_path / "m.md"
    assert main(["papers", "mebf", "--quick", "--workers", "1", "--out", str(out)]) == 0
    assert calls == [((True, 1, None), {})] and out.read_text() == "| t |"
    sims = _captured(monkeypatch, mebf, "_simulate_all")
    monkeypatch.setattr(mebf, "_tables", lambda df: "| e |")
    assert main(["papers", "mebf", "--experiments", "--quick", "--only", "arrivals"]) == 0
    (todo, workers), _ = sims[0]
    assert workers == 2 and todo and {c.experiment for c in todo} == {"arrivals"}
    assert todo == [c for c in mebf.cases(1, 1) if c.experiment == "arrivals"]


def test_sdpolicy_modes(monkeypatch) -> None:
    calls = _captured(monkeypatch, sdpolicy, "_ablation")
    assert main(["papers", "sdpolicy", "--quick"]) == 0
    assert main(["papers", "sdpolicy"]) == 0
    assert main(["papers", "sdpolicy", "--experiments", "--ablation", "paper"]) == 0
    quick, full, paper = calls
    assert quick[0][0] == sdpolicy.ablation_cases(1.0, 6.0, last_start=18.0)
    assert full[0][0] == sdpolicy.ablation_cases() and paper[0][0] == sdpolicy.ablation_cases(
        settings=("paper",)
    )
    assert [k["preview"] for _, k in calls] == [True, False, False]
    # --experiments: the paper's runs (3 CEA and 3 KTH windows per variant), no --quick
    assert main(["papers", "sdpolicy", "--experiments", "--quick"]) == 2


def test_dfrs_keeps_its_rows_beside_out_unless_run_as_the_old_ablation(
    monkeypatch, tmp_path
) -> None:
    calls = _captured(monkeypatch, dfrs, "_ablation")
    out = tmp_path / "d.md"
    assert main(["papers", "dfrs", "--out", str(out)]) == 0
    assert main(["papers", "dfrs", "--ablation", "--out", str(out)]) == 0
    assert main(["papers", "dfrs", "--ablation", "--rows", "r.csv", "--quick"]) == 0
    assert [a for a, _ in calls] == [
        (False, 2, tmp_path / "d-rows.csv", None),
        (False, 2, None, None),
        (True, 2, Path("r.csv"), None),
    ]
    assert dfrs.run.__doc__ and "rows" in dfrs.run.__doc__


@pytest.mark.parametrize(
    ("name", "argv", "flag"),
    [
        ("mebf", ["--only", "cost"], "experiments"),
        ("sdpolicy", ["--windows", "1"], "experiments"),
        ("dfrs", ["--jobs", "50"], "experiments"),
        ("koala", ["--seeds", "3"], None),
    ],
)
def test_old_command_lines_are_aliases(monkeypatch, name, argv, flag) -> None:
    """``python -m hpcgym.bench.papers.NAME ARGS`` is ``hpcgym papers NAME [--experiments] ARGS``:
    the old scripts ran the experiments by default."""
    seen: list[argparse.Namespace] = []
    module = importlib.import_module(PAPERS[name])
    monkeypatch.setattr(module, "command", lambda args: seen.append(args) or "")
    assert cli.alias(name, argv) == 0
    assert seen[0].name == name
    if flag:
        assert getattr(seen[0], flag) is True


def _old(cwd: Path, *argv: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m hpcgym.bench.papers.rlscheduler ARGV``, the old command line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    module = "hpcgym.bench.papers.rlscheduler"
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=check,
    )


def test_rlscheduler_runs_through_both_command_lines(tmp_path: Path) -> None:
    args = ["--count", "2", "--more", "3"]
    new = main(["papers", "rlscheduler", *args, "--out", str(tmp_path / "a.md")])
    assert new == 0
    old = _old(tmp_path, *args, check=True)
    # the same tables (the run's duration aside)
    drop = ("(",)
    same = [line for line in old.stdout.splitlines() if not line.startswith(drop)]
    assert same == [
        line for line in (tmp_path / "a.md").read_text().splitlines() if not line.startswith(drop)
    ]


def test_evolving_runs_and_refuses_quick(tmp_path: Path, capsys) -> None:
    out = tmp_path / "e.md"
    args = ["--cases", "3", "--online", "1", "--workers", "1"]
    assert main(["papers", "evolving", *args, "--out", str(out)]) == 0
    assert "# Evolving applications: 3 cases offline, 1 online" in out.read_text()
    assert main(["papers", "evolving", "--quick"]) == 2
    assert "hpcgym: error: paper check 'evolving' has no --quick" in capsys.readouterr().err


def test_old_command_line_errors_are_hpcgym_errors(tmp_path: Path) -> None:
    for argv in (["--bogus"], ["--quick"]):
        got = _old(tmp_path, *argv)
        assert got.returncode == 2, got.stderr
        assert "hpcgym: error: " in got.stderr
