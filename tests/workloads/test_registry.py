from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import registry
from hpcgym.workloads.convert import read_workload, write_workload
from hpcgym.workloads.lublin import generate_lublin
from hpcgym.workloads.registry import WorkloadSet, load, names, workloads_dir

EXPECTED = {
    "swf/sdsc-sp2-v0",
    "swf/lublin256-v0",
    "swf/kth-sp2-v0",
    "swf/hpc2n-v0",
    "swf/cea-curie-v0",
    "swf/hpc2n-dfrs-v0",
    "synthetic/evolving-klein-v0",
    "synthetic/lublin-dfrs-128-v0",
    "synthetic/lublin-256-v0",
    "synthetic/koala-mix-v0",
    "elastic/sdsc-sp2-mebf-v0",
}
SMALL = ["synthetic/evolving-klein-v0", "synthetic/koala-mix-v0", "synthetic/lublin-dfrs-128-v0"]


def test_builtin_sets_are_registered():
    assert set(names()) >= EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_set_is_deterministic(name):
    a = load(name, seed=3)
    b = load(name, seed=3)
    assert len(a) > 0 and a.name == name
    assert a.fingerprint() == b.fingerprint()
    last = a.provenance[-1]
    assert last.op == "set" and last.seed == 3 and dict(last.params)["name"] == name


@pytest.mark.parametrize("name", [*SMALL, "elastic/sdsc-sp2-mebf-v0"])
def test_seeds_give_different_workloads(name):
    assert load(name, seed=1).fingerprint() != load(name, seed=2).fingerprint()


def test_same_jobs_in_another_process():
    code = (
        "import json, hpcgym.workloads as W;"
        f"print(json.dumps([W.load(n, seed=5).fingerprint() for n in {SMALL!r}]))"
    )
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [load(n, seed=5).fingerprint() for n in SMALL]


def test_set_options():
    w = load("synthetic/lublin-dfrs-128-v0", seed=0, load=0.3, n_jobs=200)
    from hpcgym.workloads.stats import offered_load

    assert len(w) == 200 and offered_load(w) == pytest.approx(0.3)
    week = load("swf/hpc2n-dfrs-v0", week=2)
    assert all(0 <= j.submit < 7 * 86400 for j in week)
    with pytest.raises(WorkloadError, match="no option"):
        load("swf/sdsc-sp2-v0", colour="red")
    with pytest.raises(WorkloadError, match="known sets"):
        load("swf/nothing-v0")
    koala = load("synthetic/koala-mix-v0", variant="Wmr", approach="PWA")
    assert koala.jobs[1].submit == 30.0


def test_register_checks_names():
    ws = WorkloadSet("bad-name", "x", lambda seed, opts: generate_lublin(5, 8, seed))
    with pytest.raises(WorkloadError, match="family/name-vN"):
        registry.register(ws)
    with pytest.raises(WorkloadError, match="already registered"):
        registry.register(registry.get("swf/sdsc-sp2-v0"))


def test_env_var_and_lookup(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    write_workload(generate_lublin(20, 8, 1), folder / "tiny.swf", command="pytest")
    monkeypatch.setenv(registry.ENV_VAR, str(folder))
    assert workloads_dir() == folder
    ws = WorkloadSet(
        "test/tiny-v0",
        "tiny",
        lambda seed, opts: read_workload(registry.resolve_file("tiny.swf")),
        file="tiny.swf",
    )
    assert len(ws.load()) == 20
    monkeypatch.setenv(registry.ENV_VAR, str(tmp_path / "absent"))
    with pytest.raises(WorkloadError, match="HPCGYM_WORKLOADS"):
        workloads_dir()


def test_lookup_from_current_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(registry.ENV_VAR, raising=False)
    (tmp_path / "shared" / "workloads").mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    monkeypatch.chdir(project)
    assert workloads_dir() == tmp_path / "shared" / "workloads"
    assert registry.candidate_dirs()[:2] == [
        project / "shared" / "workloads",
        tmp_path / "shared" / "workloads",
    ]
