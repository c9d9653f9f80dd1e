"""Fuzzing the files bench and evaluate read: run.json and the five kinds of agent card (issue 39).

Any value (a string, a number, null, a list, an object) put in any field of a recorded run.json
(read by ``bench --from`` and ``bench --resume``) or of an agent's card (``agent.json``,
``score.json``, ``planner.json``, ``distilled.json``, ``order.json``, read by ``evaluate`` and
``bench``) ends in one of: success; a bench whose cells failed, each recorded in failures.csv
(exit 1); or one ``hpcgym: error:`` line with exit status 2. Never a traceback, and never an
import of a module a value names (strings naming a ``fuzzcanary`` module are among the values,
and an import hook watches for them).

The default run is derandomized and short; ``pytest -m slow`` explores longer and also puts a
fixed set of hostile values in every field, one at a time.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import shutil
import sys
import tempfile
from collections.abc import Iterator
from importlib.abc import MetaPathFinder
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.bench import scenarios
from hpcgym.bench.command import run_bench
from hpcgym.cli import main

FAST = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
    derandomize=True,
)
LONG = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

CANARIES = ("fuzzcanary", "fuzzcanary:Fuzz-v0", "fuzzcanary.mod:Thing", "nn.fuzzcanary")
"""Strings naming a module: importing any ``fuzzcanary`` module fails the test."""
WORDS = ("", "fcfs", "easy", "hpcgym/Rigid-v0", "mean_bsld", "disjoint", "nn.__class__", "..")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-2, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(CANARIES + WORDS),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
HOSTILE: tuple[Any, ...] = (
    None, "", "fuzzcanary:Fuzz-v0", "nn.__class__", -1, 0, 2**64, 1.5, math.nan, math.inf, True,
    [], [None], ["fcfs"], {}, {"a": 1}, [[1]],
)  # fmt: skip
"""The values the slow sweep puts in every field, one field at a time."""


# ------------------------------------------------------------------------------ helpers
class _Canary(MetaPathFinder):
    """Records every attempt to import a ``fuzzcanary`` module (and finds nothing)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0].startswith("fuzzcanary"):
            self.asked.append(name)


@pytest.fixture(scope="module")
def canary() -> Iterator[_Canary]:
    finder = _Canary()
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field of a JSON value (itself included); long lists by their first items."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield from paths(v, (*prefix, i))


def put(record: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``record`` with the field at ``path`` replaced by ``value``."""
    if not path:
        return value
    record = copy.deepcopy(record)
    node = record
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return record


def ends_cleanly(argv: list[str], canary: _Canary, run_dir: Path | None = None) -> int:
    """Run ``hpcgym argv``: success, recorded cell failures, or one error line; no import."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)  # any exception fails the test, with its traceback
    text = err.getvalue()
    assert not canary.asked, f"imported {canary.asked} for {argv}"
    if code == 2:
        assert text.startswith("hpcgym: error: ") and text.count("\n") == 1, text
        return code
    assert code in (0, 1), (code, text)
    assert all(line.startswith("hpcgym: warning: ") for line in text.splitlines()), text
    if code == 1:  # only bench exits 1: some cells failed, each recorded
        assert run_dir is not None and (run_dir / "failures.csv").is_file(), out.getvalue()
    return code


# ------------------------------------------------------------------------------ run.json
MICRO = scenarios.Scenario("fuzz-micro", "hpcgym/Rigid-v0", {"n_jobs": 6}, (5,), ("fcfs",))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A finished run of ``MICRO`` (registered while the module runs) and its run.json."""
    folder = tmp_path_factory.mktemp("recorded") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(scenarios._SCENARIOS, MICRO.name, MICRO)
        assert run_bench([MICRO], None, run_dir=folder, executor="serial", progress=False) == 0
        yield folder, json.loads((folder / "run.json").read_text())


def _scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))


def check_from(record: Any, scratch: Path, canary: _Canary) -> None:
    (scratch / "edited.json").write_text(json.dumps(record))
    run_dir = scratch / "run"
    argv = ["bench", "--from", str(scratch / "edited.json"), "--run-dir", str(run_dir)]
    ends_cleanly(
        [*argv, "--executor", "serial", "--no-progress", "--job-table", "none"], canary, run_dir
    )


def check_resume(folder: Path, record: Any, scratch: Path, canary: _Canary) -> None:
    run_dir = scratch / "run"
    shutil.copytree(folder, run_dir)
    (run_dir / "run.json").write_text(json.dumps(record))
    argv = ["bench", "--scenario", MICRO.name, "--run-dir", str(run_dir), "--resume"]
    ends_cleanly(
        [*argv, "--executor", "serial", "--no-progress", "--job-table", "none"], canary, run_dir
    )


def _run_json_change(recorded: tuple[Path, dict[str, Any]]) -> st.SearchStrategy[Any]:
    """A run.json with one field (half the time one of its configuration's) replaced."""
    record = recorded[1]
    fields = list(paths(record))
    config = [p for p in fields if p[:1] == ("config",)]
    where = st.one_of(st.sampled_from(config), st.sampled_from(fields))
    return st.tuples(where, values).map(lambda pv: put(record, *pv))


@FAST
@given(data=st.data())
def test_any_value_in_any_run_json_field_for_from(data, recorded, tmp_path_factory, canary):
    record = data.draw(_run_json_change(recorded), label="run.json")
    check_from(record, _scratch(tmp_path_factory), canary)


@FAST
@given(data=st.data())
def test_any_value_in_any_run_json_field_for_resume(data, recorded, tmp_path_factory, canary):
    record = data.draw(_run_json_change(recorded), label="run.json")
    check_resume(recorded[0], record, _scratch(tmp_path_factory), canary)


@pytest.mark.slow
@LONG
@given(data=st.data())
def test_any_value_in_any_run_json_field_long(data, recorded, tmp_path_factory, canary):
    record = data.draw(_run_json_change(recorded), label="run.json")
    check_from(record, _scratch(tmp_path_factory), canary)
    check_resume(recorded[0], record, _scratch(tmp_path_factory), canary)


@pytest.mark.slow
def test_hostile_values_in_every_run_json_field(recorded, tmp_path_factory, canary):
    folder, record = recorded
    for path in paths(record):
        for value in HOSTILE:
            changed = put(record, path, value)
            check_from(changed, _scratch(tmp_path_factory), canary)
            check_resume(folder, changed, _scratch(tmp_path_factory), canary)


# ------------------------------------------------------------------------------ cards
AGENT_ENV, AGENT_KWARGS = "hpcgym/Malleable-v1", {"n_jobs": 8}


def _reserve_kwargs() -> dict[str, Any]:
    kwargs = dict(scenarios.get("rlsched-lublin-test-v0").env_kwargs)
    kwargs.pop("window_starts", None)
    return {**kwargs, "n_jobs": 16}


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, str, dict]]]:
    """A valid card of each kind, the preset it plays and a scenario of that preset.

    Returns ``{kind: (card file, env id, env kwargs)}``; the scenarios ``fuzz-<kind>`` are
    registered while the module runs.
    """
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    from hpcgym.agents import make_agent, save_agent
    from hpcgym.agents.engine.distill import WIDTH, DistilledCard
    from hpcgym.agents.engine.lookahead import PlannerCard
    from hpcgym.agents.engine.order import FEATURES as ORDER_FEATURES
    from hpcgym.agents.engine.order import OrderCard
    from hpcgym.agents.engine.score import ScoreCard
    from hpcgym.agents.rl.saved import card_for

    root = tmp_path_factory.mktemp("cards")
    reserve = _reserve_kwargs()
    rng = np.random.default_rng(0)
    net = [(rng.normal(size=(WIDTH, 4)), rng.normal(size=4)), (rng.normal(size=(4, 1)), [0.0])]
    texts = {
        "score": ("score.json", ScoreCard("hpcgym/Rigid-v0", {}, (1, 0, 0, 0, 0, 0, 1, 0))),
        "planner": (
            "planner.json",
            PlannerCard("hpcgym/Rigid-v0", reserve, "rlsched/lublin256-v0", "train", 2, 8, 2),
        ),
        "distilled": (
            "distilled.json",
            DistilledCard(
                "hpcgym/Rigid-v0", reserve, [[[np.asarray(w).tolist(), list(b)] for w, b in net]]
            ),
        ),
        "order": ("order.json", OrderCard("hpcgym/Evolving-v0", {}, (0.0,) * len(ORDER_FEATURES))),
    }
    plays = {
        "score": ("hpcgym/Rigid-v0", {"n_jobs": 8}),
        "planner": ("hpcgym/Rigid-v0", reserve),
        "distilled": ("hpcgym/Rigid-v0", reserve),
        "order": ("hpcgym/Evolving-v0", {"n_jobs": 6}),
        "agent": (AGENT_ENV, AGENT_KWARGS),
    }
    out: dict[str, tuple[Path, str, dict]] = {}
    for kind, (name, card) in texts.items():
        (root / kind).mkdir()
        (root / kind / name).write_text(card.to_json())
        out[kind] = (root / kind / name, *plays[kind])
    env = gym.make(AGENT_ENV, **AGENT_KWARGS)
    model = make_agent(env, seed=0, n_steps=32, batch_size=32, n_epochs=1)
    save_agent(
        model, card_for(model, "maskable_ppo", AGENT_ENV, AGENT_KWARGS), root / "agent" / "agent"
    )
    out["agent"] = (root / "agent" / "agent.json", *plays["agent"])
    with pytest.MonkeyPatch.context() as mp:
        for kind, (_, env_id, kwargs) in out.items():
            sc = scenarios.Scenario(f"fuzz-{kind}", env_id, kwargs, (1000,), ())
            mp.setitem(scenarios._SCENARIOS, sc.name, sc)
        yield out


KINDS = ("agent", "score", "planner", "distilled", "order")
COSTLY = {"planner": ("candidates", "horizon", "samples")}
"""Settings whose valid large values only make a card slow to play: kept small here."""


def check_card(kind: str, card: Any, cards: dict, scratch: Path, canary: _Canary) -> None:
    """Evaluate and bench the agent whose card is ``card`` (a JSON value)."""
    file, env_id, kwargs = cards[kind]
    folder = scratch / kind
    shutil.copytree(file.parent, folder)
    (folder / file.name).write_text(json.dumps(card))
    evaluate = ["evaluate", "--env", env_id, "--env-kwargs", json.dumps(kwargs), "--episodes", "1"]
    ends_cleanly([*evaluate, "--policy", str(folder)], canary)
    run_dir = scratch / "run"
    bench = [
        "bench",
        "--scenario",
        f"fuzz-{kind}",
        "--policy",
        str(folder),
        "--run-dir",
        str(run_dir),
    ]
    ends_cleanly(
        [*bench, "--executor", "serial", "--no-progress", "--job-table", "none"], canary, run_dir
    )


def _cheap(kind: str, path: tuple[Any, ...], value: Any) -> bool:
    big = isinstance(value, int) and not isinstance(value, bool) and value > 64
    return not (big and path[:1] and path[0] in COSTLY.get(kind, ()))


def _card_change(kind: str, cards: dict) -> st.SearchStrategy[Any]:
    raw = json.loads(cards[kind][0].read_text())
    return (
        st.tuples(st.sampled_from(list(paths(raw))), values)
        .filter(lambda pv: _cheap(kind, *pv))
        .map(lambda pv: put(raw, *pv))
    )


@pytest.mark.parametrize("kind", KINDS[1:])
@FAST
@given(data=st.data())
def test_any_value_in_any_card_field(kind, data, cards, tmp_path_factory, canary):
    card = data.draw(_card_change(kind, cards), label=f"{kind} card")
    check_card(kind, card, cards, _scratch(tmp_path_factory), canary)


@settings(FAST, max_examples=5)  # each example loads a network: fewer in the default run
@given(data=st.data())
def test_any_value_in_any_agent_card_field(data, cards, tmp_path_factory, canary):
    card = data.draw(_card_change("agent", cards), label="agent card")
    check_card("agent", card, cards, _scratch(tmp_path_factory), canary)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@LONG
@given(data=st.data())
def test_any_value_in_any_card_field_long(kind, data, cards, tmp_path_factory, canary):
    card = data.draw(_card_change(kind, cards), label=f"{kind} card")
    check_card(kind, card, cards, _scratch(tmp_path_factory), canary)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_values_in_every_card_field(kind, cards, tmp_path_factory, canary):
    raw = json.loads(cards[kind][0].read_text())
    for path in paths(raw):
        for value in HOSTILE:
            if _cheap(kind, path, value):
                check_card(kind, put(raw, path, value), cards, _scratch(tmp_path_factory), canary)


def test_the_canary_sees_an_import(canary: _Canary) -> None:
    """The import hook works: a ``fuzzcanary`` import is seen (and fails)."""
    with pytest.raises(ImportError):
        __import__("fuzzcanary_probe")
    assert canary.asked == ["fuzzcanary_probe"]
    canary.asked.clear()
