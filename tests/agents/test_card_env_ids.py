"""Cards and run.json name only hpcgym presets: a shared file cannot make Gymnasium import code.

Issue 39, N2: Gymnasium imports ``module`` from an id ``module:Name-v0``, so a card with
``"env_id": "pwnmod:hpcgym/Rigid-v0"`` and a ``pwnmod.py`` beside it ran that file when the agent
was loaded from its folder. Seen failing before the fix (the marker file was written).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.agents import load_agent
from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.engine.distill import DistilledCard
from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.agents.engine.order import OrderCard
from hpcgym.agents.engine.score import ScoreCard
from hpcgym.agents.rl.saved import AgentCard
from hpcgym.cli import main
from hpcgym.envs.registration import PRESETS, check_env_id
from hpcgym.errors import SpecError

AGENTS = Path(__file__).resolve().parents[2] / "agents"
CARDS = [
    (AGENTS / "malleable-100k" / "s0" / "best.json", AgentCard),
    (AGENTS / "score-rlsched-bf" / "s0" / "score.json", ScoreCard),
    (AGENTS / "planner-bf" / "s0" / "planner.json", PlannerCard),
    (AGENTS / "evolving-order" / "s0" / "order.json", OrderCard),
    (AGENTS / "distilled-bf" / "s0" / "distilled.json", DistilledCard),
]
CRAFTED = [
    "pwnmod:hpcgym/Rigid-v0",
    "pwnmod:Rigid-v0",
    "CartPole-v1",
    "hpcgym/Rigid-v0 ",
    "hpcgym/NoSuch-v0",
    "../hpcgym/Rigid-v0",
]


def _marker_module(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``pwnmod.py`` in ``folder`` (importable, the cwd): importing it writes ``marker``."""
    marker = folder / "pwned"
    (folder / "pwnmod.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "pwnmod", raising=False)
    return marker


@pytest.mark.parametrize(("path", "cls"), CARDS, ids=[p.name for p, _ in CARDS])
@pytest.mark.parametrize("env_id", CRAFTED)
def test_every_card_kind_refuses_an_id_that_is_not_a_preset(
    path: Path, cls: type, env_id: str
) -> None:
    raw = json.loads(path.read_text())
    cls.from_json(json.dumps(raw))  # the shipped card itself reads
    raw["env_id"] = env_id
    with pytest.raises(SpecError, match="not an hpcgym preset"):
        cls.from_json(json.dumps(raw))


@pytest.mark.parametrize(("path", "cls"), CARDS, ids=[p.name for p, _ in CARDS])
def test_loading_a_crafted_agent_from_its_folder_imports_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path, cls: type
) -> None:
    folder = tmp_path / "agent"
    shutil.copytree(path.parent, folder)
    card = folder / path.name
    raw = json.loads(card.read_text())
    raw["env_id"] = "pwnmod:" + raw["env_id"]
    card.write_text(json.dumps(raw))
    marker = _marker_module(folder, monkeypatch)
    name = "best" if cls is AgentCard else "."  # a network's files are best.{json,safetensors}
    with pytest.raises(SpecError, match="not an hpcgym preset"):
        if cls is AgentCard:
            load_agent(name)
        else:
            load_engine_card(name)
    code = main(["evaluate", "--policy", name, "--episodes", "1"])
    assert code == 2
    assert not marker.exists() and "pwnmod" not in sys.modules


def test_a_run_json_naming_a_module_or_a_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench --from``: neither an id with a module part (N2) nor a scenario name that climbs
    out of ``--out`` (N8) gets past the reading of the file."""
    marker = _marker_module(tmp_path, monkeypatch)
    out = tmp_path / "out"
    good = {
        "name": "mine-v0",
        "env_id": "hpcgym/Rigid-v0",
        "env_kwargs": {"n_jobs": 8},
        "seeds": [1000],
        "policies": ["fcfs"],
    }
    for change, words in [
        ({"env_id": "pwnmod:hpcgym/Rigid-v0"}, "not an hpcgym preset"),
        ({"name": "../../escaped"}, "scenario name"),
        ({"name": "a/b"}, "scenario name"),
        ({"name": ""}, "scenario name"),
    ]:
        run = tmp_path / "run.json"
        run.write_text(json.dumps({"config": {"scenarios": [{**good, **change}]}}))
        assert main(["bench", "--from", str(run), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hpcgym: error:") and words in err
    assert not marker.exists() and "pwnmod" not in sys.modules
    assert not (tmp_path.parent / "escaped").exists() and not out.exists()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_string_but_a_preset_id_is_refused(text: str) -> None:
    if text in PRESETS:
        assert check_env_id(text) == text
    else:
        with pytest.raises(SpecError, match="not an hpcgym preset"):
            check_env_id(text)
