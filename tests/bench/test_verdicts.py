"""verdicts.md: every policy against the scenario's best heuristic, by the interval rule."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hpcgym.bench.command import run_bench
from hpcgym.bench.report import intervals
from hpcgym.bench.scenarios import Scenario
from hpcgym.bench.verdicts import (
    agent_lines,
    interval_verdict,
    method_of,
    verdict_table,
    verdicts_markdown,
)

AGENTS = Path(__file__).resolve().parents[2] / "agents"


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(1.0, 1.9, "beats"), (3.1, 4.0, "loses"), (1.5, 2.5, "tie"), (1.0, 2.0, "tie")],
)
def test_the_interval_rule(low: float, high: float, verdict: str) -> None:
    assert interval_verdict(low, high, 2.0, 3.0) == verdict
    assert interval_verdict(math.nan, high, 2.0, 3.0) == "-"


@pytest.mark.parametrize(
    ("policy", "method"),
    [
        ("easy", "heuristic"),
        ("mebf-spare", "heuristic"),
        ("easy@env", "heuristic"),
        ("easy-min", "trivial"),
        ("asap-min@env", "trivial"),
        ("advance", "reference"),
        ("random", "reference"),
        (str(AGENTS / "malleable-100k" / "s0" / "best"), "RL"),
        (str(AGENTS / "malleable-100k") + "@best", "RL"),
        (str(AGENTS / "score-synlublin-easy" / "s2"), "search"),
        (str(AGENTS / "evolving-order"), "search"),
        (str(AGENTS / "planner-nobf" / "s0"), "planner"),
        (str(AGENTS / "distilled-bf" / "s0"), "distilled"),
    ],
)
def test_each_policy_names_the_method_that_produced_it(policy: str, method: str) -> None:
    assert method_of(policy) == method


def _results() -> pd.DataFrame:
    """60 episodes of three policies: one clearly lower, one tied, the best, one clearly higher."""
    rng = np.random.default_rng(0)
    base = rng.uniform(2.0, 4.0, 60)
    rows = []
    for policy, shift, response in (
        ("easy", 0.0, 100.0),
        ("advance", -1.5, 150.0),  # lower objective, worse response everywhere
        ("random", 0.01, 90.0),
        ("fcfs", 2.0, 100.0),
    ):
        for seed, value in enumerate(base + shift):
            rows.append(
                {
                    "scenario": "s-v0",
                    "policy": policy,
                    "seed": seed,
                    "mean_bstretch": value,
                    "max_bstretch": value * 3,
                    "mean_response": response + seed,
                }
            )
    return pd.DataFrame(rows)


def test_the_table_judges_each_policy_against_the_named_best_only() -> None:
    results = _results()
    stats = intervals(results, {"s-v0": "mean_bstretch"})
    table = verdict_table(stats, results, {"s-v0": "easy"}).set_index("policy")
    assert table.loc["easy", "verdict"] == "best heuristic"
    assert table.loc["advance", "verdict"] == "beats"
    assert table.loc["random", "verdict"] == "tie"
    assert table.loc["fcfs", "verdict"] == "loses"
    assert table.loc["advance", "win"] == 1.0 and table.loc["fcfs", "win"] == 0.0
    assert table.loc["advance", "response_win"] == 0.0
    assert table.loc["random", "response_win"] == 1.0
    assert table.loc["advance", "method"] == "reference"
    text = verdicts_markdown(table.reset_index(), {"s-v0": "easy"})
    assert "best heuristic `easy`" in text
    (advance,) = [line for line in text.splitlines() if line.startswith("| `advance` ")]
    assert advance.endswith("| beats *(worse response)* |")
    # a policy that left episodes truncated is not judged: its objective skips jobs
    cut = results.assign(truncated=(results["policy"] == "advance") & (results["seed"] < 3))
    stats = intervals(cut, {"s-v0": "mean_bstretch"})
    table = verdict_table(stats, cut, {"s-v0": "easy"}).set_index("policy")
    assert table.loc["advance", "verdict"] == "not judged (3 truncated)"
    assert math.isnan(table.loc["advance", "win"])
    assert table.loc["fcfs", "verdict"] == "loses"
    # no best named, or the named one did not play: no verdicts
    assert verdict_table(stats, results, {}).empty
    assert verdict_table(stats, results, {"s-v0": "sjf"}).empty


def test_a_bench_run_writes_verdicts_for_a_scenario_naming_its_best(tmp_path: Path) -> None:
    judged = Scenario(
        "tiny-v0",
        "hpcgym/Rigid-v0",
        {"n_jobs": 24},
        tuple(range(6)),
        ("fcfs", "easy"),
        best_heuristic="easy",
    )
    plain = Scenario("plain-v0", "hpcgym/Rigid-v0", {"n_jobs": 24}, (0, 1), ("fcfs", "easy"))
    run = tmp_path / "run"
    assert run_bench([judged, plain], None, run_dir=run, executor="serial", progress=False) == 0
    table = pd.read_csv(run / "verdicts.csv")
    assert list(table["scenario"].unique()) == ["tiny-v0"]
    assert set(table["policy"]) == {"fcfs", "easy"}
    fcfs = table.set_index("policy").loc["fcfs"]
    assert fcfs["method"] == "heuristic" and fcfs["episodes"] == 6
    assert fcfs["verdict"] in ("beats", "tie", "loses")
    assert "## tiny-v0 (mean_bsld), best heuristic `easy`" in (run / "verdicts.md").read_text()


def test_the_bench_prints_each_agents_verdict_and_no_heuristics() -> None:
    results = _results()
    stats = intervals(results, {"s-v0": "mean_bstretch"})
    table = verdict_table(stats, results, {"s-v0": "easy"})
    table.loc[table["policy"] == "advance", "method"] = "RL"  # as if it were a trained agent
    (line,) = agent_lines(table)
    assert line.startswith("s-v0: advance (RL) beats against easy by the interval rule: mean ")
    assert " vs " in line and "lower on 1.00 of the episodes (verdicts.md)" in line
    assert agent_lines(table[table["policy"] != "advance"]) == []


def test_an_agents_method_comes_from_its_files_not_its_table_name(tmp_path: Path) -> None:
    from dataclasses import replace

    from hpcgym.agents.engine.score import ScoreCard
    from hpcgym.bench import scenarios

    card = ScoreCard("hpcgym/Rigid-v0", {"n_jobs": 256}, (1.2, 0.1, 0.3, -0.2, 0.1, 0.0, 0.8, 0.4))
    folder = tmp_path / "mine"  # its table name, "mine", leads back to no file
    folder.mkdir()
    (folder / "score.json").write_text(card.to_json())
    base = scenarios.get("rigid-lublin-v1")
    sc = replace(base, seeds=base.seeds[:4], policies=("easy",), best_heuristic="easy")
    run = tmp_path / "run"
    assert run_bench([sc], [str(folder), "easy"], run_dir=run, executor="serial") == 0
    table = pd.read_csv(run / "verdicts.csv").set_index("policy")
    assert table.loc["mine", "method"] == "search"
