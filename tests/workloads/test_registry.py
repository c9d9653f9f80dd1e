from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpcgym.errors import WorkloadError
from hpcgym.workloads import catalog, registry
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
    "synthetic/evolving-klein-wide-v0",
    "synthetic/lublin-dfrs-128-v0",
    "synthetic/lublin-256-v0",
    "synthetic/koala-mix-v0",
    "elastic/sdsc-sp2-mebf-v0",
}
SMALL = [
    "synthetic/evolving-klein-v0",
    "synthetic/evolving-klein-wide-v0",
    "synthetic/koala-mix-v0",
    "synthetic/lublin-dfrs-128-v0",
]


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


def test_env_var_folder_comes_first(tmp_path, monkeypatch):
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
    # A user's folder overrides a bundled file of the same name (either spelling).
    write_workload(generate_lublin(7, 8, 1), folder / "lublin_256.swf", command="pytest")
    assert registry.resolve_file("lublin_256.swf.gz") == folder / "lublin_256.swf"
    assert len(registry.load("swf/lublin256-v0")) == 7
    # ... and the bundled data is still searched for what the user's folder lacks.
    assert registry.resolve_file("hpc2n.swf").parent == catalog.bundled_dir()
    monkeypatch.setenv(registry.ENV_VAR, str(tmp_path / "absent"))
    with pytest.raises(WorkloadError, match="HPCGYM_WORKLOADS"):
        workloads_dir()


def test_bundled_traces_are_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(registry.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    assert workloads_dir() == catalog.bundled_dir()
    for trace in catalog.BUNDLED:
        assert registry.resolve_file(trace.file) == catalog.bundled_dir() / trace.file
    w = registry.load("swf/hpc2n-v0")
    assert len(w) + sum(n for _, n in w.skipped) == 3170


def test_missing_trace_names_the_places_and_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.delenv(registry.ENV_VAR, raising=False)
    monkeypatch.setenv(catalog.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(WorkloadError, match="not found in") as e:
        registry.resolve_file("nowhere.swf")
    assert str(catalog.bundled_dir()) in str(e.value)
    assert str(tmp_path / "cache") in str(e.value)
    archived = catalog.ARCHIVE[0]
    with pytest.raises(WorkloadError, match=f"hpcgym workloads fetch {archived.key}"):
        registry.resolve_file(archived.file)


def test_a_file_path_works_where_a_set_name_does(tmp_path, monkeypatch):
    path = write_workload(generate_lublin(30, 8, 2), tmp_path / "mine.swf.gz", command="pytest")
    monkeypatch.chdir(tmp_path)
    for given in (str(path), "mine.swf.gz"):
        w = registry.load(given)
        assert len(w) == 30 and w.name == given
        assert dict(w.provenance[-1].params)["name"] == given
    assert len(registry.load(str(path), procs_per_node=2).jobs) == 30
    with pytest.raises(WorkloadError, match="has no option"):
        registry.load(str(path), n_jobs=5)
    with pytest.raises(WorkloadError, match=r"absent\.swf"):
        registry.load(str(tmp_path / "absent.swf"))
    with pytest.raises(WorkloadError, match=r"'absent\.swf' not found"):
        registry.load("absent.swf")
    with pytest.raises(WorkloadError, match="no workload set 'swf/absent-v0'"):
        registry.load("swf/absent-v0")
