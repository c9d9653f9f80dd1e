"""Regressions from the fuzzing round (issue 16): bad command lines end with a one-line error
(exit status 2) before any work starts, never with a traceback or after the work is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.workloads import catalog


def _fails_cleanly(argv: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def _forbid(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> None:
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{name} ran although the command line was bad")

    monkeypatch.setattr(f"{module}.{name}", no_work)


@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_unknown_env_id(command, capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.agents.rl.train", "train")
    argv = [command, "--env", "hpcgym/Nope-v0"]
    argv += ["--out", str(tmp_path / "x")] if command == "train" else []
    _fails_cleanly(argv, capsys, "hpcgym/Nope-v0", "hpcgym/Rigid-v0")


@pytest.mark.parametrize("command", ["evaluate", "train"])
@pytest.mark.parametrize("text", ["{bad", "[1,2]", "3", '"x"'])
def test_bad_env_kwargs(command, text, capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.agents.rl.train", "train")
    argv = [command, "--env-kwargs", text]
    argv += ["--out", str(tmp_path / "x")] if command == "train" else []
    _fails_cleanly(argv, capsys, "--env-kwargs", "JSON object")


@pytest.mark.parametrize("episodes", ["0", "-2"])
def test_evaluate_needs_at_least_one_episode(episodes, capsys):
    _fails_cleanly(["evaluate", "--episodes", episodes], capsys, "--episodes")


@pytest.mark.parametrize("timesteps", ["0", "-5"])
def test_train_needs_positive_timesteps(timesteps, capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.agents.rl.train", "train")
    out = tmp_path / "run"
    _fails_cleanly(["train", "--timesteps", timesteps, "--out", str(out)], capsys, "timesteps")
    assert not out.exists()


def _blocked(tmp_path: Path) -> Path:
    """A folder that cannot be created: its parent is a file (refused even for root)."""
    (tmp_path / "file").write_text("x")
    return tmp_path / "file" / "out"


def test_evaluate_checks_its_output_before_the_work(capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.bench.evaluate", "evaluate")
    out = _blocked(tmp_path) / "table.csv"
    _fails_cleanly(["evaluate", "--out", str(out)], capsys, "cannot write")


def test_simulate_checks_its_output_before_the_work(capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.bench.simulate", "make")
    out = _blocked(tmp_path) / "jobs.csv"
    _fails_cleanly(["simulate", "--out", str(out)], capsys, "cannot write")


def test_train_checks_its_run_folder_before_the_work(capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.agents.rl.train", "train")
    _fails_cleanly(["train", "--out", str(_blocked(tmp_path))], capsys, "cannot write")


@pytest.mark.parametrize("scenario", [[], ["--scenario", "tiny-v0"]])
def test_bench_checks_its_output_folder_before_the_work(scenario, capsys, monkeypatch, tmp_path):
    _forbid(monkeypatch, "hpcgym.bench.command", "run_bench")
    _forbid(monkeypatch, "hpcgym.bench.main_job", "main_job")
    argv = ["bench", *scenario, "--out", str(_blocked(tmp_path))]
    _fails_cleanly(argv, capsys, "cannot write")


def test_workloads_convert_checks_its_output_before_reading(capsys, monkeypatch, tmp_path):
    shared_dir = catalog.bundled_dir()
    _forbid(monkeypatch, "hpcgym.workloads.cli", "read_workload")
    out = _blocked(tmp_path) / "x.swf"
    _fails_cleanly(
        ["workloads", "convert", str(shared_dir / "lublin_256.swf.gz"), str(out)], capsys, "cannot"
    )


def test_the_folder_check_leaves_nothing_behind(tmp_path):
    from hpcgym.cli_checks import writable_folder

    target = tmp_path / "a" / "b"
    assert writable_folder(target) == target
    assert not (tmp_path / "a").exists()
    (tmp_path / "kept").mkdir()
    writable_folder(tmp_path / "kept")
    assert (tmp_path / "kept").is_dir() and not list((tmp_path / "kept").iterdir())


def test_the_folder_check_never_deletes_what_another_process_wrote(tmp_path, monkeypatch):
    """Two trainings raced into one new run folder: the loser's check removed the folder it had
    created, with the files the winner had written meanwhile (seen failing before the fix)."""
    import tempfile

    from hpcgym.cli_checks import writable_folder

    target = tmp_path / "runs" / "run"
    real = tempfile.NamedTemporaryFile

    def racing(*args, **kwargs):
        (target / "run.json").write_text("{}")  # the other process, while this one checks
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", racing)
    writable_folder(target)
    assert (target / "run.json").read_text() == "{}"
    assert not [p for p in target.iterdir() if p.name.startswith(".hpcgym-write-check")]


def test_the_folder_check_keeps_an_empty_folder_another_command_holds(tmp_path, monkeypatch):
    """Two trainings raced into one new run folder: the other one made the folder and locked
    it, not yet writing in it, while this one's check was removing the folder it had made;
    the other then found its folder gone (seen failing in the suite before the fix)."""
    import tempfile

    from hpcgym.cli_checks import writable_folder
    from hpcgym.folder_lock import exclusive, is_locked

    target = tmp_path / "runs" / "run"
    real = tempfile.NamedTemporaryFile
    held = []

    def racing(*args, **kwargs):
        lock = exclusive(target, lambda: "busy")  # the other process, while this one checks
        lock.__enter__()
        held.append(lock)
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", racing)
    writable_folder(target)
    assert target.is_dir() and is_locked(target)
    held[0].__exit__(None, None, None)
    assert not is_locked(target)
    monkeypatch.undo()
    writable_folder(tmp_path / "free" / "run")  # no one holds it: removed as before
    assert not (tmp_path / "free").exists()


# Issue 39, L4: these ended in tracebacks (exit 1) before; seen failing before the fix.
@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["train", "--seed", "-1"], ("--seed", ">= 0")),
        (["evaluate", "--seed", "-1"], ("--seed", ">= 0")),
        (["search-score", "--seed", "-1"], ("--seed", ">= 0")),
        (["train", "--env", "CartPole-v1"], ("CartPole-v1", "hpcgym/Rigid-v0")),
        (["evaluate", "--env", "CartPole-v1"], ("CartPole-v1", "hpcgym/Rigid-v0")),
        (["train", "--hp", "n_steps=0"], ("--hp n_steps", "integer >= 1")),
        (["train", "--hp", "batch_size=2.5"], ("--hp batch_size", "integer >= 1")),
        (["train", "--hp", "learning_rate=a"], ("--hp learning_rate", "number")),
        (["train", "--hp", "learning_rate=-1"], ("--hp learning_rate", "> 0")),
        (["train", "--hp", "gamma=NaN"], ("--hp gamma", "finite")),
        (["train", "--hp", "gamma=1.5"], ("--hp gamma", "[0, 1]")),
        (["train", "--hp", "ent_coef=-0.1"], ("--hp ent_coef", ">= 0")),
    ],
)
def test_bad_seeds_ids_and_hyperparameters_are_one_line_errors(
    argv, words, capsys, monkeypatch, tmp_path
):
    _forbid(monkeypatch, "hpcgym.agents.rl.train", "train")
    if argv[0] in ("train", "search-score"):
        argv = [*argv, "--out", str(tmp_path / "x")]
    _fails_cleanly(argv, capsys, *words)
    assert not (tmp_path / "x").exists()


def test_train_in_worker_processes_on_an_empty_workload_is_a_one_line_error(capsys, tmp_path):
    """Issue 39, L7: ``train --subproc`` on a 0-job workload ended in a bare EOFError."""
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 8\n")
    kwargs = f'{{"workload": "{empty}", "platform": null}}'
    argv = ["train", "--subproc", "--n-envs", "2", "--timesteps", "64"]
    argv += ["--env-kwargs", kwargs, "--out", str(tmp_path / "run")]
    _fails_cleanly(argv, capsys, "no job")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "extra",
    [["--scenario", "rigid-lublin-v0"], ["--policy", "easy"], ["--from", "nosuch/run.json"]],
    ids=["scenario", "policy", "from"],
)
def test_bench_timesteps_is_refused_where_nothing_trains(extra, tmp_path, capsys):
    argv = ["bench", "--timesteps", "5000", "--out", str(tmp_path / "out"), *extra]
    _fails_cleanly(argv, capsys, "--timesteps", "main job")
    assert not (tmp_path / "out").exists()
