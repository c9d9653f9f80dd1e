from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from hpcgym.bench import scenarios
from hpcgym.bench.report import leaderboard
from hpcgym.bench.runner import execute, plan, ray_available, resolve_executor, results_table
from hpcgym.cli import main
from hpcgym.errors import SpecError

MICRO = scenarios.Scenario("micro-test", "hpcgym/Rigid-v0", {"n_jobs": 12}, (5, 6), ("fcfs",))


def test_plan_is_scenario_policy_seed_ordered_and_details_the_first_seed() -> None:
    tasks = plan([MICRO], ["easy", "random"])
    assert [(t.policy, t.seed, t.detail) for t in tasks] == [
        ("easy", 5, True),
        ("easy", 6, False),
        ("random", 5, True),
        ("random", 6, False),
    ]
    with pytest.raises(SpecError, match="unknown policy"):
        plan([MICRO], ["nobody"])


def test_process_pool_gives_the_serial_table() -> None:
    tasks = plan([MICRO], ["easy", "random", "advance"])
    serial = results_table(execute(tasks, "serial"))
    pooled = results_table(execute(tasks, "process", workers=2))
    pd.testing.assert_frame_equal(serial, pooled)


@pytest.mark.skipif(not ray_available(), reason="ray is not installed")
def test_ray_gives_the_serial_table() -> None:
    tasks = plan([MICRO], ["easy", "random"])
    pd.testing.assert_frame_equal(
        results_table(execute(tasks, "serial")), results_table(execute(tasks, "ray", 2))
    )


def test_truncated_policies_rank_last() -> None:
    rows = pd.DataFrame(
        {
            "scenario": ["s"] * 3,
            "policy": ["a", "b", "c"],
            "truncated": [False, True, False],
            "mean_bsld": [3.0, 1.0, 2.0],
        }
    )
    board = leaderboard(rows)
    assert list(board["policy"]) == ["c", "a", "b"]
    assert list(board["rank"]) == [1, 2, 3]


def test_bench_cli_writes_everything_and_reruns_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--scenario", "tiny-v0", "--policy", "easy", "--policy", "first-fit"]
    argv += ["--executor", "process"]
    assert main([*argv, "--run-dir", str(tmp_path / "a")]) == 0
    printed = capsys.readouterr().out
    assert "tiny-v0" in printed and str((tmp_path / "a").resolve()) in printed
    assert main([*argv, "--executor", "serial", "--run-dir", str(tmp_path / "b")]) == 0
    for name in ("results.csv", "jobs.csv", "leaderboard.md", "intervals.md", "win_rates.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    plots = sorted(p.name for p in (tmp_path / "a" / "plots").iterdir())
    assert plots == [
        "tiny-v0_gantt_easy.png",
        "tiny-v0_gantt_first-fit.png",
        "tiny-v0_slowdown.png",
        "tiny-v0_timeline.png",
    ]
    results = pd.read_csv(tmp_path / "a" / "results.csv")
    assert len(results) == 2 * len(scenarios.get("tiny-v0").seeds)
    # pyarrow is part of the test install: the parquet copies hold the same tables.
    parquet = pd.read_parquet(tmp_path / "a" / "results.parquet")
    pd.testing.assert_frame_equal(parquet, results, check_dtype=False)
    jobs = pd.read_csv(tmp_path / "a" / "jobs.csv")
    for col in ("submit", "start", "end", "requested_nodes", "max_nodes_held", "state"):
        assert col in jobs.columns
    assert (jobs["end"] >= jobs["start"]).all() and (jobs["start"] >= jobs["submit"]).all()
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "a" / "jobs.parquet"), jobs, check_dtype=False
    )
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporary files


def test_bench_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--list"]) == 0
    assert scenarios.MAIN in capsys.readouterr().out


def test_main_job_trains_then_benchmarks_and_reuses_its_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("yaml")
    import hpcgym.agents.rl.train as train_module

    shipped = train_module.load_hyperparams
    small = {"n_steps": 32, "batch_size": 32, "n_epochs": 1}
    monkeypatch.setattr(
        train_module, "load_hyperparams", lambda *a, **k: {**shipped(*a, **k), **small}
    )
    main_sc = scenarios.Scenario(
        "main-test",
        "hpcgym/Malleable-v0",
        {"n_jobs": 12, "split": "test"},
        (1000,),
        ("easy", "mebf"),
    )
    monkeypatch.setitem(scenarios._SCENARIOS, "main-test", main_sc)
    monkeypatch.setattr(scenarios, "MAIN", "main-test")
    argv = ["bench", "--timesteps", "64", "--executor", "serial", "--out", str(tmp_path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "training MaskablePPO" in printed and "agent" in printed
    agent_dir = tmp_path / "main" / "agent-64-steps"
    assert (agent_dir / "agent.safetensors").is_file()
    assert not (agent_dir / "agent.zip").exists()
    # Trained on the train split although the scenario's episodes are the test split's ...
    card = json.loads((agent_dir / "agent.json").read_text())
    assert card["env_kwargs"]["split"] == "train"
    # ... and evaluated on the test split: the card does not choose the episodes.
    from hpcgym.agents.rl.env_policy import AgentPolicy

    policy = AgentPolicy(agent_dir / "agent")
    assert "split" not in policy.env_overrides
    (first,) = [p for p in (tmp_path / "main").iterdir() if not p.name.startswith("agent")]
    assert str(first.resolve()) in printed  # says where the results are
    board = (first / "leaderboard.md").read_text()
    assert "| agent-64-steps |" in board and "| mebf |" in board
    before = {p: p.read_bytes() for p in first.rglob("*") if p.is_file()}
    assert main(argv) == 0
    assert "reusing the agent" in capsys.readouterr().out
    runs = sorted(p for p in (tmp_path / "main").iterdir() if not p.name.startswith("agent"))
    assert len(runs) == 2  # a new folder: the first run's files are untouched
    assert {p: p.read_bytes() for p in first.rglob("*") if p.is_file()} == before
    assert (runs[1] / "results.csv").read_bytes() == (first / "results.csv").read_bytes()


def test_each_scenario_ranks_by_its_own_metric() -> None:
    rows = pd.DataFrame(
        {
            "scenario": ["s", "s", "t", "t"],
            "policy": ["a", "b", "a", "b"],
            "truncated": [False] * 4,
            "mean_bsld": [1.0, 2.0, 1.0, 2.0],
            "makespan": [10.0, 20.0, 20.0, 10.0],
        }
    )
    board = leaderboard(rows, {"t": "makespan"})
    assert list(zip(board["scenario"], board["policy"], strict=True)) == [
        ("s", "a"),
        ("s", "b"),
        ("t", "b"),
        ("t", "a"),
    ]
    assert scenarios.get("evolving-klein-v0").metric == "makespan"


def test_evolving_v1_draws_its_cases_from_the_test_splits_set_seeds() -> None:
    import gymnasium as gym

    sc = scenarios.get("evolving-klein-v1")
    assert sc.metric == "makespan" and len(sc.seeds) == 30
    env = gym.make(sc.env_id, **sc.env_kwargs)
    drawn = set()
    for seed in sc.seeds:
        env.reset(seed=seed)
        drawn.add(env.unwrapped.episode.workload_seed)  # type: ignore[attr-defined]
    assert drawn <= set(range(800, 1000)) and len(drawn) > 20
    train = gym.make(sc.env_id, split="train")
    for seed in range(50):
        train.reset(seed=seed)
        assert train.unwrapped.episode.workload_seed < 700  # type: ignore[attr-defined]


def test_large_evolving_scenario_plays_2000_distinct_cases_never_played_before() -> None:
    from hpcgym.envs.episodes import episode_for

    sc = scenarios.get("evolving-klein-large-v0")
    assert sc.metric == "makespan"
    assert {k: v for k, v in sc.env_kwargs.items() if k != "n_seeds"} == (
        scenarios.get("evolving-klein-v1").env_kwargs
    )
    drawn = [scenarios.drawn_seed(s, scenarios.EVOLVING_SEEDS) for s in sc.seeds]
    # distinct, and outside [0, 1,000), where training and evolving-klein-v1 draw theirs
    assert len(set(drawn)) == len(drawn) == 2000
    assert min(drawn) >= 80_000 and max(drawn) < 100_000
    for seed in sc.seeds[::400]:  # the draw is the env's
        ep = episode_for(sc.env_id, sc.env_kwargs, seed)
        assert ep.workload_seed == scenarios.drawn_seed(seed, scenarios.EVOLVING_SEEDS)


def test_the_second_large_evolving_scenario_plays_2000_cases_none_of_the_firsts() -> None:
    v0, v1 = scenarios.get("evolving-klein-large-v0"), scenarios.get("evolving-klein-large-v1")
    assert v1.env_kwargs == v0.env_kwargs and v1.metric == "makespan"
    assert v1.policies == v0.policies
    first = {scenarios.drawn_seed(s, scenarios.EVOLVING_SEEDS) for s in v0.seeds}
    second = [scenarios.drawn_seed(s, scenarios.EVOLVING_SEEDS) for s in v1.seeds]
    assert len(set(second)) == len(second) == 2000 and not first & set(second)
    assert min(second) >= 80_000 and max(second) < 100_000
    assert min(v1.seeds) > max(v0.seeds)


def test_lazy_scenarios_are_listed_built_once_and_never_registered_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []

    def build() -> scenarios.Scenario:
        built.append("x")
        return scenarios.Scenario("lazy-test-v0", "hpcgym/Rigid-v0", {}, (1, 2))

    monkeypatch.setattr(scenarios, "_LAZY", dict(scenarios._LAZY))
    monkeypatch.setattr(scenarios, "_SCENARIOS", dict(scenarios._SCENARIOS))
    scenarios.register_lazy("lazy-test-v0", build)
    assert "lazy-test-v0" in scenarios.names() and built == []
    assert scenarios.get("lazy-test-v0").seeds == (1, 2) == scenarios.get("lazy-test-v0").seeds
    assert built == ["x"]
    with pytest.raises(SpecError, match="already registered"):
        scenarios.register_lazy("lazy-test-v0", build)
    with pytest.raises(SpecError, match="already registered"):
        scenarios.register(scenarios.Scenario("evolving-klein-large-v0", "hpcgym/Evolving-v0"))
    scenarios.register_lazy("lazy-bad-v0", build)
    with pytest.raises(SpecError, match="built one named 'lazy-test-v0'"):
        scenarios.get("lazy-bad-v0")


class _Ref:
    """A stand-in object reference: holds the value."""

    def __init__(self, value: object) -> None:
        self.value = value


def _fake_ray(log: Callable[[str], None]) -> Any:
    """A module with Ray's calls the executor uses; tasks run at ``remote`` time."""
    import types

    fake: Any = types.ModuleType("ray")
    fake.is_initialized = lambda: False

    def init(**kw: Any) -> None:
        log(f"attach {kw['address']}" if "address" in kw else f"init {kw['num_cpus']}")

    fake.init = init
    fake.wait = lambda refs, num_returns=1: (refs[-num_returns:], refs[:-num_returns])
    fake.get = lambda ref: ref.value if isinstance(ref, _Ref) else ref
    return fake


def test_ray_path_keeps_task_order_with_a_stand_in_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    # Checks the wiring of the Ray executor (init, remote, get) without Ray itself.
    import sys

    calls: list[str] = []

    class Remote:
        def __init__(self, fn: object) -> None:
            self.fn = fn

        def remote(self, task: object) -> object:
            return _Ref(self.fn(task))  # type: ignore[operator]

    fake = _fake_ray(calls.append)
    fake.remote = Remote  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    tasks = plan([MICRO], ["easy", "fcfs"])
    serial = results_table(execute(tasks, "serial"))
    # auto without an attached cluster: the process pool, not Ray
    assert resolve_executor("auto", 2, len(tasks)).name == "process"
    pd.testing.assert_frame_equal(serial, results_table(execute(tasks, "ray", 2)))
    assert calls == ["init 2"]
    monkeypatch.setattr(fake, "is_initialized", lambda: False)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    ex = resolve_executor("auto", 2, len(tasks))
    assert (ex.name, ex.address) == ("ray", "ray://head:10001")
    pd.testing.assert_frame_equal(serial, results_table(execute(tasks, ex)))
    assert calls[-1] == "attach ray://head:10001"


def test_ray_start_drops_only_the_token_enabled_notice(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Starting a local Ray must not print the "token authentication is enabled" notice, but its
    # warning that authentication is disabled is a security warning and must get through.
    import logging
    import sys
    import types

    from hpcgym.bench.runner import RAY_TOKEN_LOGGER

    log = logging.getLogger(RAY_TOKEN_LOGGER)

    def init(**kw: object) -> None:
        log.warning("Token authentication is enabled for this Ray cluster. Set ...")
        log.warning("Token authentication is disabled for this Ray cluster. Anyone ...")

    fake = _fake_ray(lambda _: None)
    fake.init = init  # type: ignore[attr-defined]
    fake.remote = lambda fn: types.SimpleNamespace(remote=lambda t: _Ref(fn(t)))
    monkeypatch.setitem(sys.modules, "ray", fake)
    with caplog.at_level(logging.WARNING, logger=RAY_TOKEN_LOGGER):
        execute(plan([MICRO], ["fcfs"]), "ray", 1)
        log.warning("Token authentication is enabled (after start-up)")
    messages = [r.getMessage() for r in caplog.records]
    assert not any(m.startswith("Token authentication is enabled for") for m in messages)
    assert any(m.startswith("Token authentication is disabled") for m in messages)
    assert "Token authentication is enabled (after start-up)" in messages  # filter removed


@pytest.mark.parametrize("arrow", [True, False])
def test_job_tables_round_trip_through_either_csv_writer(
    arrow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.bench.report import _write_csv

    table = pd.DataFrame(
        {
            "policy": ['a "quoted", name', "plain"],
            "seed": [1, 2],
            "submit": [0.1 + 0.2, 1e-300],
            "wait": [0.0, 5.0],
            "train_seed": [float("nan"), 3.0],
        }
    )
    from hpcgym.bench import report

    path = tmp_path / "jobs.csv"
    plain: list[int] = []
    with monkeypatch.context() as m:
        if not arrow:  # as on a machine without pyarrow: the plain writer writes it
            m.setitem(sys.modules, "pyarrow", None)
            m.setitem(sys.modules, "pyarrow.csv", None)
        real = report.write_like_arrow
        m.setattr(report, "write_like_arrow", lambda t, p: plain.append(1) or real(t, p))
        _write_csv(table, path)
    back = pd.read_csv(path)
    pd.testing.assert_frame_equal(back, table, check_dtype=False, check_exact=True)
    assert bool(plain) is not arrow  # whose writer ran
    # The same text either way (issue 42: jobs.csv changed with the installation).
    assert path.read_text() == (
        '"policy","seed","submit","wait","train_seed"\n'
        '"a ""quoted"", name",1,0.30000000000000004,0,\n'
        '"plain",2,1e-300,5,3\n'
    )
    assert [p.name for p in tmp_path.iterdir()] == ["jobs.csv"]  # no temporary file left


def test_the_main_job_calls_run_bench_as_it_is_when_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The order-dependent failure of test_runs, test_cli_errors, test_bench: ``main_job`` bound
    ``run_bench`` when first imported, so a test importing it while ``run_bench`` was patched
    (test_cli_errors forbids it) left every later main job calling that stand-in."""
    import importlib

    import hpcgym.bench as bench_package
    import hpcgym.bench.command as command
    from hpcgym.cli import build_parser

    monkeypatch.delitem(sys.modules, "hpcgym.bench.main_job", raising=False)
    monkeypatch.delattr(bench_package, "main_job", raising=False)
    with monkeypatch.context() as patched:
        patched.setattr(command, "run_bench", lambda *a, **k: pytest.fail("the stand-in ran"))
        fresh = importlib.import_module("hpcgym.bench.main_job")
    agent = tmp_path / "main" / "agent-5-steps"  # a finished agent: no training
    agent.mkdir(parents=True)
    (agent / "agent.safetensors").write_bytes(b"")
    (agent / "agent.json").write_text("{}")
    calls: list[str] = []
    monkeypatch.setattr(command, "run_bench", lambda *a, **k: calls.append(k["label"]) or 0)
    args = build_parser().parse_args(["bench", "--out", str(tmp_path), "--timesteps", "5"])
    assert fresh.main_job(args) == 0
    assert calls == ["main"]
