"""studies/verdicts.py: its presets name judged scenarios and shipped agents; its tables."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from hpcgym.bench import scenarios
from hpcgym.bench.policy_names import policy_kind

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "studies"))

import verdicts as study  # noqa: E402  (found through sys.path)


def test_every_preset_plays_judged_scenarios_and_shipped_agents() -> None:
    for preset in study.PRESETS.values():
        for judged in preset.scenarios:
            assert scenarios.get(judged.scenario).best_heuristic, judged.scenario
        for agent in preset.agents:
            assert policy_kind(str(ROOT / agent)) == "sweep", agent


def _row(policy: str, method: str, verdict: str, seeds: int = 1) -> dict[str, object]:
    nan = math.nan
    return {
        "scenario": "s-v0",
        "policy": policy,
        "metric": "mean_bsld",
        "method": method,
        "train_seeds": seeds,
        "episodes": 100 * seeds,
        "mean": 3.0,
        "mean_low": 2.5,
        "mean_high": 3.5,
        "worst_job": 1234.0,
        "mean_response": 5000.0,
        "verdict": verdict,
        "win": nan if verdict == "best heuristic" else 0.4,
        "win_low": 0.3,
        "win_high": 0.5,
        "response_win": 0.2,
    }


def test_a_table_keeps_agents_the_best_and_what_does_not_lose() -> None:
    table = pd.DataFrame(
        [
            _row("malleable-100k@best", "RL", "loses", seeds=5),
            _row("easy", "heuristic", "best heuristic"),
            _row("asap-min", "trivial", "beats"),
            _row("fcfs", "heuristic", "loses"),
        ]
    )
    table["scenario"] = "malleable-small-v3"
    agents = ("agents/malleable-100k@best",)  # its rows carry the label malleable-100k@best
    preset = study.Preset("p", (study.Judged("malleable-small-v3", cross_trace=True),), agents)
    text = study.markdown(preset, {"malleable-small-v3": table}, Path("out"))
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows] == [
        "`malleable-100k@best`",  # kept although it loses
        "`easy`",
        "`asap-min`",
    ]
    assert "| 5 x 100 |" in rows[0] and rows[0].endswith("| loses |")
    assert rows[2].endswith("| beats *(worse response)* |")
    assert "cross-trace" in text and "best heuristic on validation `easy`" in text
    assert (
        "--scenario malleable-small-v3 --with-defaults --policy agents/malleable-100k@best" in text
    )
    assert "every disjoint window of the split: no two share a job (split `test`)" in text


def test_a_modes_own_rules_are_kept_whatever_their_verdict() -> None:
    table = pd.DataFrame(
        [
            _row("f1-reserve-bf", "heuristic", "best heuristic"),
            _row("f1-reserve", "heuristic", "loses"),
            _row("fcfs-reserve", "heuristic", "loses"),
        ]
    )
    judged = study.Judged("rlsched-synlublin-large-v0", also=("f1-reserve",))
    kept = study.kept(table, (), judged.also)
    assert list(kept["policy"]) == ["f1-reserve-bf", "f1-reserve"]
    assert list(study.kept(table, ())["policy"]) == ["f1-reserve-bf"]
    reserve = study.PRESETS["rlscheduler-reserve"].scenarios
    assert all("f1-reserve" in j.also for j in reserve)


def test_a_scenario_without_a_finished_run_says_how_to_run_it(tmp_path: Path) -> None:
    preset = study.PRESETS["malleable"]
    out = tmp_path / "runs"
    assert study.finished("malleable-small-v3", preset.agents, out) is None
    run = out / "malleable-small-v3"
    run.mkdir(parents=True)
    table = pd.DataFrame([_row("easy-min", "trivial", "best heuristic")])
    table.to_csv(run / "verdicts.csv", index=False)
    # A run without the preset's agents (an earlier run, before one joined) is not finished.
    assert study.finished("malleable-small-v3", preset.agents, out) is None
    text = study.markdown(preset, {}, out)
    assert text.count("not run yet") == len(preset.scenarios)
    for judged in preset.scenarios:
        assert f"python studies/verdicts.py --scenario {judged.scenario} --write" in text


def test_a_run_of_other_agents_is_set_aside_not_resumed(tmp_path: Path) -> None:
    run = tmp_path / "malleable-small-v3"
    run.mkdir()
    command = ["hpcgym", "bench", "--policy", "agents/old@best", "--run-dir", str(run)]
    record = {"command": command, "started": "2026-11-27T21:38:53Z"}
    (run / "run.json").write_text(json.dumps(record))
    study.set_aside_if_other_agents(run, ("agents/old@best",))
    assert (run / "run.json").is_file()  # the same agents: resumed in place
    study.set_aside_if_other_agents(run, ("agents/old@best", "agents/new@best"))
    assert not run.exists()
    kept = tmp_path / "malleable-small-v3.2026-11-27T213853Z"
    assert json.loads((kept / "run.json").read_text()) == record


def test_scenario_runs_only_the_named_ones(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    ran: list[str] = []
    read: list[str] = []
    monkeypatch.setattr(study, "run_scenario", lambda s, agents, out: ran.append(s))
    monkeypatch.setattr(study, "finished", lambda s, agents, out: read.append(s))
    monkeypatch.setattr(study, "markdown", lambda preset, tables, out: preset.name)
    argv = ["verdicts.py", "--scenario", "rlsched-sdsc-sp2-cross-v0", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    study.main()
    assert ran == ["rlsched-sdsc-sp2-cross-v0"]
    assert read == ["rlsched-synlublin-large-v0"]  # the preset's other scenario: shown, not run
    assert capsys.readouterr().out.strip() == "rlscheduler-reserve"


def test_agents_are_also_judged_against_their_modes_f1(tmp_path: Path) -> None:
    """With a mode rule in ``also``, a second table puts F1 in the best heuristic's place."""
    scenario, rule = "rlsched-synlublin-bf-large-v0", "f1-reserve-bf"
    agents = ("agents/rlsched-bf-1m-relf1@best",)
    agent = "rlsched-bf-1m-relf1@best"  # the label its rows carry
    seeds = list(range(40))
    rows = []
    for k in seeds:  # the agent is lower than F1 on 30 of 40 traces, with a longer response
        rows.append((scenario, rule, None, k, 50.0, 100.0))
        rows.append((scenario, "easy-f1", None, k, 30.0, 90.0))
        for train_seed in (0, 1):
            rows.append((scenario, agent, train_seed, k, 40.0 if k < 30 else 60.0, 120.0))
    results = pd.DataFrame(
        rows, columns=["scenario", "policy", "train_seed", "seed", "mean_bsld", "mean_response"]
    )
    run = tmp_path / scenario
    run.mkdir()
    results.to_csv(run / "results.csv", index=False)
    stats = []
    for policy, low, high, seeds_n in ((rule, 48.0, 52.0, 1), ("easy-f1", 29.0, 31.0, 1),
                                       (agent, 42.0, 47.0, 2)):  # fmt: skip
        stats.append({"scenario": scenario, "policy": policy, "metric": "mean_bsld",
                      "train_seeds": seeds_n, "episodes": 40 * seeds_n, "mean": (low + high) / 2,
                      "mean_low": low, "mean_high": high, "worst_job": 1.0,
                      "mean_response": 1.0, "truncated": 0})  # fmt: skip
    pd.DataFrame(stats).to_csv(run / "intervals.csv", index=False)
    methods = pd.DataFrame({"policy": [rule, "easy-f1", agent],
                            "method": ["heuristic", "heuristic", "RL"]})  # fmt: skip
    methods.to_csv(run / "verdicts.csv", index=False)
    judged = study.Judged(scenario, also=(rule, "sjf-reserve-bf"))
    lines = study.mode_lines(judged, agents, run)
    assert f"against `{rule}`" in lines[0]
    table = [line for line in lines if line.startswith("| `")]
    assert table[0].startswith(f"| `{rule}` |") and table[0].endswith("| reference |")
    assert "easy-f1" not in "".join(lines)  # the best heuristic stays in its own table
    assert table[1].startswith(f"| `{agent}` | RL | 2 x 40 |")
    assert "| 0.75 [" in table[1]  # lower on 30 of 40 traces
    assert table[1].endswith("| 0.00 | beats *(worse response)* |")
    assert f"win rate over `{rule}`" in lines[2]
    assert study.mode_lines(judged, agents, tmp_path / "missing") == []
