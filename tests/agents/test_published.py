"""The reference agents shipped in ``agents/``: intact, loadable, and giving their documented runs.

``agents/agents.json`` (written by ``agents/manifest.py``) holds each weights file's and card's
SHA-256 and the scenarios each agent was benchmarked on; ``agents/<name>/expected/`` holds those
runs' episodes. The benchmark comparisons replay every episode with ``pytest -m slow`` (minutes
each); the default run replays, for the short ones (:data:`QUICK`), the first
:data:`QUICK_SEEDS` episodes of every member, row for row against the same recorded files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.distill import DistilledCard
from hpcgym.agents.lookahead import PlannerCard
from hpcgym.agents.order import OrderCard
from hpcgym.agents.saved import load_agent
from hpcgym.agents.score import ScoreCard
from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.bench.policy_names import policy_kind, sweep_members
from hpcgym.cli import build_parser

AGENTS = Path(__file__).resolve().parents[2] / "agents"
MANIFEST = json.loads((AGENTS / "agents.json").read_text())
COLUMNS = ["seed", "train_seed", "mean_bsld", "max_bsld", "mean_wait", "makespan", "utilization"]
QUICK = {
    ("evolving-bc-infx-kind", "evolving-klein-v1"),
    ("evolving-order", "evolving-klein-v1"),
    ("score-synlublin-easy", "rigid-lublin-v1"),
    ("score-rlsched-bf", "rlsched-lublin-bf-test-v0"),
    ("distilled-bf", "rlsched-lublin-bf-test-v0"),
    ("distilled-dagger-bf", "rlsched-lublin-bf-test-v0"),
}
"""Replays short enough for the default test run (agent, scenario)."""
QUICK_SEEDS = 10
"""Episodes (the scenario's first seeds, of its 30) each member replays in the default run."""
CARDS = {
    "score": ScoreCard,
    "planner": PlannerCard,
    "distilled": DistilledCard,
    "order": OrderCard,
}
ENGINE = tuple(CARDS)
"""Kinds of agents that play on the bare engine (no ``@best`` member, no weights)."""


def test_the_manifest_lists_every_agent_folder_and_the_readme_names_each() -> None:
    folders = sorted(p.name for p in AGENTS.iterdir() if (p / "s0").is_dir())
    assert folders == sorted(MANIFEST) and len(folders) >= 5
    readme = (AGENTS / "README.md").read_text()
    for name in folders:
        best = "" if MANIFEST[name]["kind"] in ENGINE else "@best"
        assert f"--policy agents/{name}{best}" in readme
        assert f"`{name}`" in readme


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_published_files_are_the_recorded_ones_and_load_safely(name: str) -> None:
    entry = MANIFEST[name]
    folder = AGENTS / name
    for rel, digest in entry["files"].items():
        assert hashlib.sha256((folder / rel).read_bytes()).hexdigest() == digest, rel
    if entry["kind"] in ENGINE:
        members = sweep_members(str(folder))
        assert [seed for seed, _ in members] == entry["seeds"]
        for seed, path in members:
            agent = load_engine_card(path)
            assert (agent.env_id, agent.seed) == (entry["env_id"], seed)
            assert "split" not in agent.env_kwargs  # any split's episodes can be played
            assert isinstance(agent, CARDS[entry["kind"]])
            if isinstance(agent, ScoreCard):
                assert agent.training["episodes"] > 0
                assert agent.training["best_objective"] <= agent.training["f1_objective"]
            elif isinstance(agent, OrderCard):
                assert agent.training["episodes"] > 0 and agent.training["best_objective"] <= 0
                assert agent.training["heuristic"] == f"evolving-{agent.variant}"
            elif isinstance(agent, PlannerCard):
                assert agent.pool_split == "train"  # futures sampled from the train split only
                assert "tune" in agent.training["note"]
            else:
                assert agent.training["split"] == "train"  # the planner's choices on it only
                assert len(agent.members) == agent.training["members"] >= 1
    else:
        members = sweep_members(f"{folder}@best")
        assert [seed for seed, _ in members] == entry["seeds"]
        for seed, path in members:
            assert f"s{seed}/best.safetensors" in entry["files"]
            model, card = load_agent(path)
            assert (card.env_id, card.decode, card.seed) == (entry["env_id"], entry["decode"], seed)
            assert card.env_kwargs.get("split") == "train"  # trained on the train split only
            assert model.num_timesteps == card.timesteps > 0
    for scenario in entry["scenarios"]:
        # The agent's preset, or a later version of it (malleable-100k, trained on
        # Malleable-v0, plays the judged Malleable-v1 scenarios: the same menu and observations).
        family = entry["env_id"].rsplit("-v", 1)[0]
        assert scenarios.get(scenario).env_id.rsplit("-v", 1)[0] == family
        assert (folder / "expected" / f"{scenario}.csv").is_file()
    assert entry["scenarios"], f"{name} has no recorded benchmark"


def _commands() -> list[list[str]]:
    """The ``hpcgym`` commands of the README's bash blocks, continuation lines joined."""
    text = (AGENTS / "README.md").read_text()
    blocks = re.findall(r"^```bash\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    env = {"$HP": "hpcgym/agents/hyperparams/maskable_ppo_rlsched.yml"}
    return [
        [env.get(w, w) for w in shlex.split(line, comments=True)]
        for line in lines
        if line.startswith("hpcgym ")
    ]


def test_the_readme_commands_name_real_scenarios_agents_and_options() -> None:
    parser = build_parser()
    commands = _commands()
    assert sum(c[1] == "bench" for c in commands) == len(MANIFEST)
    assert sum(c[1] in ("train", "search-score") for c in commands) >= 5
    for argv in commands:
        args = parser.parse_args(argv[1:])  # a wrong option or value exits here
        if argv[1] == "bench":
            for name in args.scenario:
                scenarios.get(name)
            for policy in args.policy:
                assert policy_kind(str(AGENTS.parent / policy)) == "sweep", policy
        else:
            assert Path(AGENTS.parent / (getattr(args, "hyperparams", None) or "hpcgym")).exists()


def _replays() -> list[object]:
    """Every recorded run whole (slow), and the first episodes of the :data:`QUICK` ones."""
    cases = []
    for name, entry in sorted(MANIFEST.items()):
        for scenario in entry["scenarios"]:
            slow = pytest.mark.slow
            cases.append(pytest.param(name, scenario, None, marks=slow, id=f"{name}-{scenario}"))
            if (name, scenario) in QUICK:
                tag = f"{name}-{scenario}-first{QUICK_SEEDS}"
                cases.append(pytest.param(name, scenario, QUICK_SEEDS, id=tag))
    return cases


@pytest.mark.parametrize(("name", "scenario", "first"), _replays())
def test_a_published_agent_replays_its_recorded_benchmark(
    name: str, scenario: str, first: int | None, tmp_path: Path
) -> None:
    """Every member gives the recorded rows (``first``: on the scenario's first seeds only)."""
    policy = str(AGENTS / name) + ("" if MANIFEST[name]["kind"] in ENGINE else "@best")
    sc = scenarios.get(scenario)
    if first is not None:
        sc = dataclasses.replace(sc, seeds=sc.seeds[:first])
        assert len(sc.seeds) == first
    code = run_bench(
        [sc],
        [policy],
        run_dir=tmp_path / "run",
        executor="process",
        workers=2,
        progress=False,
    )
    assert code == 0
    got = pd.read_csv(tmp_path / "run" / "results.csv")
    got = got.sort_values(["train_seed", "seed"])[COLUMNS].reset_index(drop=True)
    floats = dict.fromkeys(COLUMNS[2:], float)
    got = got.astype(floats)
    expected = pd.read_csv(AGENTS / name / "expected" / f"{scenario}.csv", dtype=floats)
    expected = expected[expected["seed"].isin(sc.seeds)].reset_index(drop=True)
    assert len(got) == len(expected) == len(MANIFEST[name]["seeds"]) * len(sc.seeds)
    pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=1e-9, atol=0.0)
