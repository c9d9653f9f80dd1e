"""The README's time statements: its installs and its main job, in a fresh clone and venv.

Run: ``python benchmarks/readme_time.py [--repeats N] [--write]``. Each repeat clones the
repository's committed ``HEAD`` into an empty temporary folder, makes a fresh venv there with
this Python, and runs, timed one after the other, the README's main-job command in its two
parts (the install, ``pip install "torch==2.13.0" -e ".[rl]"``, then the main job itself,
``hpcgym bench``) and then the install part of its test command (the same with ``dev``, which
builds the package again). The commands are taken from the README's text, as CI takes them.
``HPCGYM_COMPILE`` is left to its default (compile where possible); a repeat whose venv does
not end with every module compiled is an error, since it would time a pure-Python install.

Times are wall seconds of each whole command and CPU seconds of it and the children it waited
for (the bench's episode workers, forked by a fork server nobody waits for, are not counted).
Packages come from what this machine's pip finds (its local wheel folders and cache): the
figures hold no download of torch or the other dependencies, which a first install elsewhere
adds. With ``--write`` it rewrites the ``## README commands: time`` section of
``benchmarks/RESULTS.md`` (the README quotes its medians).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_md import write_section

HEADING = "## README commands: time"
ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 180.0
"""Issue target: the main job's install under 3 minutes on 2 cores."""


def readme_parts(name: str) -> tuple[str, str]:
    """The install part (before the first ``&&``) of the README command marked ``name``, and
    the rest."""
    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "readme_command.py"), name, str(ROOT / "README.md")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    install, _, rest = out.partition(" && ")
    if not install.startswith("pip install") or not rest:
        sys.exit(f"README {name} command is not 'pip install ... && ...': {out!r}")
    return install, rest


def timed(command: str, cwd: Path, venv: Path) -> tuple[float, float]:
    """Wall and CPU seconds (children's user + system) of ``command`` run by a shell in ``venv``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HPCGYM_COMPILE")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}:{env.get('PATH', '')}")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(
            f"{command!r} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def all_compiled(venv: Path, cwd: Path) -> bool:
    """Whether the venv's hpcgym has every module compiled."""
    code = "import hpcgym, sys; sys.exit(0 if all(hpcgym.compiled().values()) else 1)"
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=cwd).returncode == 0


def one_repeat(main_install: str, main_run: str, test_install: str) -> tuple[float, ...]:
    """In a fresh clone and venv, wall and CPU seconds of: the main job's install, the main
    job, the test install."""
    with tempfile.TemporaryDirectory(prefix="hpcgym-install-") as tmp:
        clone = Path(tmp) / "hpcgym"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        venv = clone / ".venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        main = timed(main_install, clone, venv)
        run = timed(main_run, clone, venv)
        test = timed(test_install, clone, venv)
        if not all_compiled(venv, venv):  # not beside the clone: it would import the folder
            sys.exit("the installed hpcgym is not fully compiled: this would time pure Python")
    return (*main, *run, *test)


def table(rows: list[tuple[float, ...]]) -> str:
    """The Markdown table of the repeats and their medians."""
    lines = [
        "| repeat | main-job install: wall s | CPU s | main job: wall s | CPU s "
        "| then test install: wall s | CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for k, row in enumerate(rows, 1):
        lines.append(f"| {k} | " + " | ".join(f"{x:.0f}" for x in row) + " |")
    medians = [statistics.median(col) for col in zip(*rows, strict=True)]
    lines.append("| median | " + " | ".join(f"**{x:.0f}**" for x in medians) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="fresh clones timed (default 3)")
    ap.add_argument("--write", action="store_true", help="rewrite the RESULTS.md section")
    args = ap.parse_args()
    (main_install, main_run), (test_install, _) = readme_parts("main-job"), readme_parts("tests")
    rows: list[tuple[float, ...]] = []
    for k in range(args.repeats):
        rows.append(one_repeat(main_install, main_run, test_install))
        print(f"repeat {k + 1}: " + ", ".join(f"{x:.1f}" for x in rows[-1]), flush=True)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    worst = max(r[0] for r in rows)
    verdict = "met" if worst < TARGET_SECONDS else "not met"
    text = "\n".join(
        [
            HEADING,
            "",
            f"`python benchmarks/readme_time.py --repeats {args.repeats} --write`: the README's "
            f"commands in its order, `{main_install}`, `{main_run}` (the main job), then "
            f"`{test_install}`, each repeat in a "
            "fresh clone of the committed HEAD with a fresh venv (compiled build, checked). "
            "Wall seconds of each command; CPU seconds of it and the children it waited for "
            "(the main job's episode workers are children of a fork server that is not waited "
            "for, so its CPU column leaves them out: read its wall time). Packages come from "
            "this machine's local wheel folders and pip cache, so no download is timed.",
            "",
            table(rows),
            "",
            f"Target: the main job's install under {TARGET_SECONDS:.0f} s on 2 cores: "
            f"**{verdict}** (slowest repeat {worst:.0f} s). Commit {commit}, Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs shared with other work, "
            f"{time.strftime('%Y-%m-%d')}.",
        ]
    )
    print(text)
    if args.write:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
