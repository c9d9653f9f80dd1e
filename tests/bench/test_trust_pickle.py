"""``hpcgym bench --trust-pickle`` (issue "Hardening III", L11).

Bench refused a pickled SB3 agent by telling the user to pass ``--trust-pickle``, which bench
did not accept; each of the agent's cells failed instead. Now bench refuses such an agent before
any folder or episode unless ``--trust-pickle`` is given, loads it when it is (in worker
processes too), records the trusted files in run.json, and ``--from`` and ``--resume`` of that
run ask for the flag again rather than unpickling on the file's word.
"""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import gymnasium as gym
import pytest

import hpcgym  # noqa: F401  (registers the presets)
from hpcgym.cli import main

ENV_ID, KWARGS = "hpcgym/Malleable-v0", {"n_jobs": 16}  # tiny-v0's preset


class Payload:
    """Unpickling this creates the file ``marker``: what a crafted agent could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _crafted(folder: Path, marker: Path) -> Path:
    folder.mkdir(parents=True)
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": blob}}
    with zipfile.ZipFile(folder / "agent.zip", "w") as z:
        z.writestr("data", json.dumps(data))
    (folder / "agent.json").write_text(json.dumps({"algo": "maskable_ppo", "env_id": ENV_ID}))
    return folder


def _one_error(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def test_bench_refuses_a_pickled_agent_before_any_work_and_names_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    agent = _crafted(tmp_path / "old", marker)
    argv = ["bench", "--scenario", "tiny-v0", "--policy", str(agent), "--policy", "fcfs"]
    argv += ["--executor", "serial", "--no-progress", "--run-dir", str(tmp_path / "run")]
    assert main(argv) == 2
    _one_error(capsys, str(agent / "agent.zip"), "pickle", "--trust-pickle")
    assert not (tmp_path / "run").exists() and not marker.exists()
    # the flag is one bench accepts: the file is unpickled then (which is why it needs it)
    main([*argv, "--trust-pickle"])
    assert marker.exists()


def test_a_trusted_pickled_agent_runs_and_from_and_resume_ask_for_the_flag_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpcgym.agents import make_agent

    agent = tmp_path / "old"
    agent.mkdir()
    model = make_agent(gym.make(ENV_ID, **KWARGS), seed=0, n_steps=64, batch_size=64, n_epochs=1)
    model.save(agent / "agent.zip")
    card = {"algo": "maskable_ppo", "env_id": ENV_ID, "env_kwargs": KWARGS, "seed": 0}
    (agent / "agent.json").write_text(json.dumps(card))
    first = tmp_path / "first"
    argv = ["bench", "--scenario", "tiny-v0", "--policy", str(agent), "--policy", "fcfs"]
    argv += ["--no-progress", "--trust-pickle"]
    # worker processes: the trust travels with the tasks
    assert main([*argv, "--executor", "process", "--workers", "2", "--run-dir", str(first)]) == 0
    record = json.loads((first / "run.json").read_text())
    assert record["trust_pickle"] == [str((agent / "agent.zip").resolve())]
    assert "| old |" in (first / "leaderboard.md").read_text()
    capsys.readouterr()
    again = ["bench", "--from", str(first / "run.json"), "--executor", "serial", "--no-progress"]
    assert main([*again, "--run-dir", str(tmp_path / "second")]) == 2
    _one_error(capsys, "--trust-pickle", "agent.zip")
    assert not (tmp_path / "second").exists()
    assert main([*again, "--run-dir", str(tmp_path / "second"), "--trust-pickle"]) == 0
    for name in ("results.csv", "leaderboard.md"):
        assert (first / name).read_bytes() == (tmp_path / "second" / name).read_bytes()
    capsys.readouterr()
    resume = [*again, "--run-dir", str(first), "--resume"]
    assert main(resume) == 2
    _one_error(capsys, "--trust-pickle")
    assert main([*resume, "--trust-pickle"]) == 0
