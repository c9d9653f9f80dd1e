"""A built wheel, installed into a fresh virtual environment, finds and loads every named set.

This is the path of a user who installs hpcgym with pip and has no source tree: the traces must
come from the installed package, from any working directory, without writing into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    import hpcgym
    from hpcgym.workloads import catalog, load, names, registry

    pkg = Path(hpcgym.__file__).parent
    assert Path(sys.prefix) in pkg.parents, (pkg, sys.prefix)
    def snapshot():
        return sorted(
            (str(p.relative_to(pkg)), p.stat().st_size, p.stat().st_mtime_ns)
            for p in pkg.rglob("*") if "__pycache__" not in p.parts
        )
    before = snapshot()
    jobs = {}
    for name in names():
        w = load(name)
        jobs[name] = len(w.jobs)
        ws = registry.get(name)
        if ws.file is not None:
            assert pkg in registry.resolve_file(ws.file).parents, (name, ws.file)
    assert snapshot() == before, "loading workloads wrote into the installed package"
    print(json.dumps(jobs))
    """
)


def _copy_sources(dest: Path) -> None:
    """The files a wheel is built from, without build products or caches."""
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(
        ROOT / "hpcgym",
        dest / "hpcgym",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c"),
    )


def test_wheel_in_a_fresh_venv_loads_every_named_set(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    _copy_sources(src)
    env = {**os.environ, "HPCGYM_COMPILE": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("HPCGYM_WORKLOADS", None)
    env.pop("PYTHONPATH", None)
    pip = [sys.executable, "-m", "pip"]
    dist = tmp_path / "dist"
    subprocess.run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("hpcgym-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # The dependencies come from this test's environment (a .pth line; hpcgym's own editable
    # hook there is not run, since .pth files are read only in site folders).
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        env=env,
    )
    # Read-only, as a system site-packages is (root ignores the bits: the script also compares
    # the package's files before and after).
    for p in (site / "hpcgym").rglob("*"):
        p.chmod(p.stat().st_mode & 0o555)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = subprocess.run(
        [python, "-c", CHECK], capture_output=True, text=True, env=env, cwd=elsewhere
    )
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])  # set name -> job count
    from hpcgym.workloads import names

    # (other tests of this session may have registered test/... sets in this process)
    assert sorted(loaded) == [n for n in names() if not n.startswith("test/")]
    assert all(n > 0 for n in loaded.values())
    assert loaded["swf/sdsc-sp2-v0"] > 50_000
