"""Card numbers of the wrong type or out of range are refused when the card is read (issue 39,
L4; found by tests/fuzz/test_bench_files_fuzz.py).

A seed (or an agent's timesteps) of ``Infinity`` ended ``evaluate`` and ``bench`` in an
``OverflowError`` traceback, a fractional or boolean seed was silently truncated, a planner's
negative seed failed only when it played (a ``ValueError`` traceback in ``evaluate``), and a
planner's ``samples`` of 2^64 in an ``OverflowError``. Seen failing before the fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcgym.agents.engine.lookahead import PlannerCard
from hpcgym.agents.engine.order import OrderCard
from hpcgym.agents.engine.score import ScoreCard
from hpcgym.agents.rl.saved import AgentCard
from hpcgym.errors import SpecError

AGENTS = Path(__file__).resolve().parents[2] / "agents"
CARDS = {
    "score": (AGENTS / "score-rlsched-bf" / "s0" / "score.json", ScoreCard),
    "order": (AGENTS / "evolving-order" / "s0" / "order.json", OrderCard),
    "planner": (AGENTS / "planner-bf" / "s0" / "planner.json", PlannerCard),
    "agent": (AGENTS / "malleable-100k" / "s0" / "best.json", AgentCard),
}
BAD = [
    ("score", "seed", float("inf")),
    ("score", "seed", 1.5),
    ("score", "seed", True),
    ("score", "seed", -1),
    ("score", "seed", "3"),
    ("order", "seed", float("inf")),
    ("order", "seed", 2.5),
    ("order", "seed", False),
    ("order", "seed", -1),
    ("planner", "seed", -1),
    ("planner", "seed", float("nan")),
    ("planner", "samples", 2**64),
    ("planner", "candidates", 2**64),
    ("agent", "seed", float("inf")),
    ("agent", "seed", 0.5),
    ("agent", "timesteps", float("inf")),
    ("agent", "timesteps", -5),
]


@pytest.mark.parametrize(("kind", "key", "value"), BAD)
def test_a_card_number_of_the_wrong_type_or_range_is_refused(kind, key, value):
    path, cls = CARDS[kind]
    raw = json.loads(path.read_text())
    cls.from_json(json.dumps(raw))  # the shipped card reads
    raw[key] = value
    with pytest.raises(SpecError, match=key):
        cls.from_json(json.dumps(raw), str(path))


def test_a_card_whose_network_torch_cannot_build_is_a_one_line_error(tmp_path, capsys):
    """A block width of 2^64 made torch raise an error whose text holds its C++ stack: the
    refusal ran over 13 lines (found by the card fuzzing's long run). Seen failing before."""
    import shutil

    from hpcgym.cli import main

    shutil.copytree(AGENTS / "malleable-100k" / "s0", tmp_path / "a")
    raw = json.loads((tmp_path / "a" / "best.json").read_text())
    raw["policy_kwargs"]["features_extractor_kwargs"]["blocks"]["start"][2] = 2**64
    (tmp_path / "a" / "best.json").write_text(json.dumps(raw))
    assert (
        main(["evaluate", "--env", "hpcgym/Malleable-v1", "--policy", str(tmp_path / "a" / "best")])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert "best.json" in err and "policy_kwargs" in err


@pytest.mark.parametrize("kind", ["score", "order", "planner", "agent"])
def test_a_card_that_is_not_text_is_a_one_line_error(kind, tmp_path, capsys):
    """A card file of bytes (not UTF-8) ended evaluate in a UnicodeDecodeError traceback."""
    import shutil

    from hpcgym.cli import main

    path, _ = CARDS[kind]
    shutil.copytree(path.parent, tmp_path / "a")
    (tmp_path / "a" / path.name).write_bytes(b"\xff\xfe\x00not text")
    name = tmp_path / "a" / ("best" if kind == "agent" else "")
    assert main(["evaluate", "--policy", str(name), "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    assert path.name in err and "UTF-8" in err
