"""Seed sweeps: every executor trains the same agent per seed; Ray attaches to a real cluster."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hpcgym.agents.rl.saved import load_agent
from hpcgym.agents.rl.sweep import seed_config, sweep
from hpcgym.agents.rl.train import TrainConfig
from hpcgym.cli_checks import parse_seeds
from hpcgym.errors import SpecError


def tiny(out: Path) -> TrainConfig:
    return TrainConfig(
        env_id="hpcgym/Rigid-v0",
        timesteps=128,
        env_kwargs={"n_jobs": 16},
        overrides={"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        out=str(out),
        tensorboard="",
    )


def weights(path: str) -> dict[str, object]:
    return dict(load_agent(path)[0].policy.state_dict())


def same(a: dict[str, object], b: dict[str, object]) -> bool:
    return a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)  # type: ignore[attr-defined]


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3, 0-1,9") == [3, 0, 1, 9]
    for bad in ("a", "4-2", "-1", "0-2,1"):
        with pytest.raises(SpecError):
            parse_seeds(bad)


def test_seed_folders_are_separate_and_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    cfg = seed_config(TrainConfig(out="sweep"), 3)
    assert cfg.seed == 3 and cfg.out == str(tmp_path / "sweep" / "s3")
    assert seed_config(TrainConfig(), 2).out == str(tmp_path / "runs" / "maskable_ppo_Rigid-v0_s2")


def test_serial_and_process_sweeps_train_the_same_agents(tmp_path: Path):
    serial = sweep(tiny(tmp_path / "serial"), [0, 1], "serial")
    pooled = sweep(tiny(tmp_path / "pooled"), [0, 1], "process", workers=2)
    assert [r.seed for r in serial] == [r.seed for r in pooled] == [0, 1]
    for a, b in zip(serial, pooled, strict=True):
        assert Path(a.run_dir).name == f"s{a.seed}"
        assert same(weights(a.agent), weights(b.agent))
    # Different seeds give different agents.
    assert not same(weights(serial[0].agent), weights(serial[1].agent))
    # A resumed sweep keeps the finished seeds as they are.
    again = sweep(dataclasses.replace(tiny(tmp_path / "serial"), resume=True), [0, 1])
    assert [r.seconds for r in again] == [0, 0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_pids(temp: str, port: int) -> set[int]:
    """The live processes of the Ray cluster started with ``temp`` and ``port``, with their
    descendants.

    Found by command line (``/proc``): each of its daemons names the temporary folder or the
    port; the workers and agents are the raylet's children. Zombies (killed, not reaped yet by
    their parent) hold nothing and are left out.
    """
    args: dict[int, str] = {}
    parent: dict[int, int] = {}
    zombies: set[int] = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            line = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state, ppid = (d / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue  # gone meanwhile
        pid = int(d.name)
        args[pid], parent[pid] = line, int(ppid)
        if state == "Z":
            zombies.add(pid)
    mine = {p for p, a in args.items() if temp in a or ("ray" in a and f":{port} " in a + " ")}
    while kids := {p for p, pp in parent.items() if pp in mine} - mine:
        mine |= kids
    return mine - zombies - {os.getpid()}


def _stop_cluster(temp: str, port: int) -> None:
    """Kill this test's cluster only (``ray stop --force`` kills every Ray process of the user:
    another test's cluster, or the user's own)."""
    deadline = time.monotonic() + 60
    while (live := _cluster_pids(temp, port)) and time.monotonic() < deadline:
        for pid in live:
            with contextlib.suppress(ProcessLookupError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
    assert not _cluster_pids(temp, port), "Ray processes of the test's cluster are left"


@pytest.fixture
def ray_cluster(monkeypatch: pytest.MonkeyPatch):
    """A real local Ray cluster (``ray start --head``) with token auth, stopped afterwards.

    The token is the cluster's shared secret: this process gets it too, as a user attaching
    to a secured cluster would (Ray 2.59+ enables token auth by default).
    """
    pytest.importorskip("ray")
    ray_bin = shutil.which("ray", path=os.path.dirname(sys.executable))
    assert ray_bin, "the ray command is missing beside this Python"
    port = _free_port()
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(16))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    # A short temporary folder: Ray's socket paths must fit the 107-byte Unix limit.
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    start = [ray_bin, "start", "--head", f"--port={port}", "--num-cpus=2"]
    start += ["--include-dashboard=false", f"--temp-dir={temp}"]
    done = subprocess.run(start, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        _stop_cluster(temp, port)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow  # starts a Ray cluster (about 27 s); the Ray executor's table runs by default
def test_a_ray_sweep_attaches_to_a_running_cluster(tmp_path: Path, ray_cluster: str):
    # The command a user runs, in its own process (Ray reads its auth settings at import).
    serial = sweep(tiny(tmp_path / "serial"), [0, 1], "serial")
    cmd = [sys.executable, "-m", "hpcgym.cli", "train", "--env", "hpcgym/Rigid-v0"]
    cmd += ["--timesteps", "128", "--env-kwargs", '{"n_jobs": 16}', "--tensorboard", ""]
    cmd += ["--hp", "n_steps=64", "--hp", "batch_size=64", "--hp", "n_epochs=1"]
    cmd += ["--seeds", "0-1", "--executor", "ray", "--ray-address", ray_cluster]
    cmd += ["--out", str(tmp_path / "ray"), "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    port = ray_cluster.rsplit(":", 1)[1]
    assert "ray: attached to the cluster at " in done.stdout and f":{port} (2 CPUs)" in done.stdout
    for r in serial:
        assert same(weights(r.agent), weights(str(tmp_path / "ray" / f"s{r.seed}")))


def test_sweep_curves_gather_every_seeds_validation_rows(tmp_path: Path) -> None:
    import csv

    from hpcgym.agents.rl.sweep import sweep_curves
    from hpcgym.agents.rl.validation import COLUMNS

    assert sweep_curves(tmp_path, "x") == []
    for seed, values in ((0, [9.0, 5.0]), (2, [7.0, 3.0]), (4, None)):
        member = tmp_path / f"s{seed}"
        member.mkdir()
        (member / "agent.safetensors").write_bytes(b"")
        (member / "agent.json").write_text("{}")
        if values is None:  # trained without validation: left out
            continue
        rows = [
            {
                "timesteps": 1024 * (i + 1),
                "episodes": 8,
                "mean_objective": v,
                "iqm_objective": v,
                "best": 1,
                "truncated": 0,
            }
            for i, v in enumerate(values)
        ]
        with (member / "validation.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    written = sweep_curves(tmp_path, "hpcgym/Malleable-v0")
    assert [p.name for p in written] == ["validation.csv", "learning_curves.png"]
    with (tmp_path / "validation.csv").open() as f:
        got = [
            (int(r["seed"]), int(r["timesteps"]), float(r["mean_objective"]))
            for r in csv.DictReader(f)
        ]
    assert got == [(0, 1024, 9.0), (0, 2048, 5.0), (2, 1024, 7.0), (2, 2048, 3.0)]
    assert (tmp_path / "learning_curves.png").read_bytes().startswith(b"\x89PNG")


def test_a_diverging_seed_puts_the_curves_on_a_log_scale() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hpcgym.agents.rl.validation import set_objective_scale

    fig, ax = plt.subplots()
    set_objective_scale(ax, [15.0, 16.0, 5676.0])  # one seed at thousands, the rest near 15
    assert ax.get_yscale() == "log"
    set_objective_scale(fig.add_subplot(2, 1, 2), [5.5, 17.6])  # 3.2x: stays linear
    assert fig.axes[-1].get_yscale() == "linear"
    set_objective_scale(ax2 := fig.add_subplot(2, 2, 4), [0.0, 100.0])  # no log of 0
    assert ax2.get_yscale() == "linear"
    plt.close(fig)
