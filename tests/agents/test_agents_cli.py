"""The agents package's commands: one ``register`` per command, gathered by ``agents/cli.py``;
the planner tools' older ``python -m`` command lines are aliases with ``hpcgym``'s errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    return subprocess.run(
        [sys.executable, "-m", module, *argv], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_the_agents_commands_are_hpcgym_commands() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"train", "search-score", "write-planners", "distill"} <= set(sub.choices)


def test_old_planner_command_line_is_an_alias(tmp_path: Path) -> None:
    got = _run(
        "hpcgym.agents.lookahead",
        *("--out", "p", "--seeds", "3", "--horizon", "16", "--backfill"),
        cwd=tmp_path,
    )
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == [str(Path("p") / "s3" / "planner.json")]
    card = PlannerCard.from_json((tmp_path / "p" / "s3" / "planner.json").read_text())
    assert card.seed == 3 and card.horizon == 16 and card.backfill
    again = _run("hpcgym.agents.lookahead", "--out", "p", "--seeds", "3", cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.startswith("hpcgym: error: planner cards exist, not overwritten")


def test_old_distill_command_line_errors_as_hpcgym(tmp_path: Path) -> None:
    got = _run("hpcgym.agents.distill", "--out", "d", "--seeds", "0", "--rounds", "0", cwd=tmp_path)
    assert got.returncode == 2 and got.stderr.startswith("hpcgym: error: "), got.stderr
    bad = _run("hpcgym.agents.distill", "--bogus", cwd=tmp_path)
    assert bad.returncode == 2 and "hpcgym distill: error: " in bad.stderr
