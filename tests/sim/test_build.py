"""The compiled build (setup.py) and what hpcgym reports of it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pickle
import time
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import hpcgym
from hpcgym._build import COMPILED_MODULES, NATIVE_MODULES, stale_extensions, warn_if_stale
from hpcgym.sim import JobSpec, Platform, Simulator
from hpcgym.sim.job import Job

ROOT = Path(__file__).resolve().parents[2]


def test_setup_compiles_exactly_the_modules_hpcgym_reports_on():
    # setup.py reads the one list in hpcgym/_build.py; run its reader as setup.py would.
    tree = ast.parse((ROOT / "setup.py").read_text())
    reader = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == "_build_lists"
    )
    namespace = {"Path": Path, "importlib": importlib, "__file__": str(ROOT / "setup.py")}
    exec(compile(ast.Module(body=[reader], type_ignores=[]), "setup.py", "exec"), namespace)
    files, native = namespace["_build_lists"]()
    assert [f.removesuffix(".py").replace("/", ".") for f in files] == list(COMPILED_MODULES)
    assert all((ROOT / f).is_file() for f in files)
    assert native == NATIVE_MODULES
    assert set(native) == {"hpcgym.sim._batchcore", "hpcgym.sim._idleruns", "hpcgym.sim._eventheap"}
    assert all((ROOT / source).is_file() for source in native.values())


def test_compiled_reports_every_module():
    report = hpcgym.compiled()
    assert set(report) == set(COMPILED_MODULES) | set(NATIVE_MODULES)
    assert all(isinstance(v, bool) for v in report.values())
    # The C modules are built exactly when the mypyc modules are (setup.py builds them all).
    assert report["hpcgym.sim._batchcore"] == report["hpcgym.sim.engine"]
    assert report["hpcgym.sim._idleruns"] == report["hpcgym.sim.engine"]
    assert report["hpcgym.sim._eventheap"] == report["hpcgym.sim.engine"]


def test_an_edited_c_source_behind_its_extension_is_reported(tmp_path):
    pkg = tmp_path / "hpcgym" / "sim"
    pkg.mkdir(parents=True)
    source = pkg / "_batchcore.c"
    source.write_text("")
    ext = pkg / f"_batchcore{EXTENSION_SUFFIXES[0]}"
    ext.write_bytes(b"")
    past = time.time() - 100
    os.utime(ext, (past, past))
    assert stale_extensions(tmp_path) == ["hpcgym.sim._batchcore"]


def test_an_edited_source_behind_its_extension_is_reported(tmp_path):
    pkg = tmp_path / "hpcgym" / "sim"
    pkg.mkdir(parents=True)
    source = pkg / "engine.py"
    ext = pkg / f"engine{EXTENSION_SUFFIXES[0]}"
    source.write_text("")
    assert stale_extensions(tmp_path) == []  # pure Python: nothing to be stale
    ext.write_bytes(b"")
    past = time.time() - 100
    os.utime(source, (past, past))
    assert stale_extensions(tmp_path) == []  # built after the last edit
    os.utime(source, None)
    os.utime(ext, (past, past))
    assert stale_extensions(tmp_path) == ["hpcgym.sim.engine"]
    with pytest.warns(RuntimeWarning, match=r"hpcgym\.sim\.engine changed"):
        warn_if_stale(tmp_path)
    # a rebuild that left the module's shim as it was still rebuilt the group's library
    (tmp_path / f"hpcgym__mypyc{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    assert stale_extensions(tmp_path) == []


def test_jobs_and_simulators_pickle_mid_episode():
    jobs = [JobSpec(i, float(i), 10.0, 1 + i % 2) for i in range(6)]
    sim = Simulator(Platform.single(2), jobs)
    sim.advance()
    sim.start(0)
    sim.advance()
    copy = pickle.loads(pickle.dumps(sim))
    assert isinstance(copy.jobs[0], Job)
    for s in (sim, copy):
        while s.advance():
            head = s.queue_head()
            if head is not None and head.spec.nodes <= s.free_nodes():
                s.start(head.id)
    assert [j.end_time for j in copy.jobs.values()] == [j.end_time for j in sim.jobs.values()]


def test_numpy_integer_sizes_are_sizes_on_either_build():
    import numpy as np

    from hpcgym.sim import JobKind

    spec = JobSpec(1, 0.0, 10.0, 2, kind=JobKind.MALLEABLE, min_nodes=1, max_nodes=4)
    sim = Simulator(Platform.single(4), [spec])
    sim.advance()
    sim.start(1, np.int64(3))
    assert sim.jobs[1].size == 3
    sim.resize(1, np.int32(2))
    assert sim.jobs[1].size == 2


def test_numpy_integer_job_ids_are_ids_on_either_build():
    import numpy as np

    from hpcgym.errors import CommandError

    sim = Simulator(Platform.single(4), [JobSpec(i, 0.0, 10.0, 1) for i in range(3)])
    sim.advance()
    sim.start(np.int64(0))
    sim.start(np.int32(1))
    assert [type(k) for k in sim.running] == [int, int]
    before = dict(sim.counts)
    with pytest.raises(CommandError, match="integer"):
        sim.start(2.0)  # type: ignore[arg-type]
    assert sim.counts == before
    sim.reject(np.uint8(2))
    assert sim.jobs[2].state.value == "rejected"


def test_a_leftover_extension_of_a_module_no_longer_compiled_is_reported(tmp_path):
    # hpcgym.baselines.profile became an alias of availability: an old build's extension of it
    # would be imported instead of the alias.
    pkg = tmp_path / "hpcgym" / "baselines"
    pkg.mkdir(parents=True)
    (pkg / "profile.py").write_text("")
    assert stale_extensions(tmp_path) == []
    (pkg / f"profile{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    assert stale_extensions(tmp_path) == ["hpcgym.baselines.profile"]
    with pytest.warns(RuntimeWarning, match=r"hpcgym\.baselines\.profile is no longer compiled"):
        warn_if_stale(tmp_path)
