"""The project's prose names no folder of the machine it was written on."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL = re.compile(r"(?<![\w.~-])/(?:work|root|home|Users)/[\w.-]+")


def _pages() -> list[Path]:
    pages = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("benchmarks/**/*.md")]
    return [*pages, *ROOT.glob("agents/**/*.md")]


def test_no_page_names_a_machine_local_folder() -> None:
    pages = _pages()
    assert len(pages) > 5, pages  # the pages are found from a fresh clone too
    found = [
        f"{p.relative_to(ROOT)}:{n}: {m.group(0)}"
        for p in pages
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in LOCAL.finditer(line)
    ]
    assert not found, "machine-local paths (write them relative to the project):\n" + "\n".join(
        found
    )


def test_the_check_finds_such_a_path() -> None:
    assert LOCAL.search("run `/work/results/large-bf`; every")
    assert LOCAL.search("see /home/ana/runs")
    assert not LOCAL.search("hpcgym-bench/rigid-lublin-v0/run.json and https://x.org/home/a")


SHARED = re.compile(r"(?<![\w/-])(?:\.\./)?shared/[\w.-]+|\b(?:PAPERS|DESIGN|STYLE)\.md\b")
"""A file of the workspace beside the project (``shared/DESIGN.md``, ``PAPERS.md``), which a
clone lacks."""


def test_no_page_points_at_the_workspace_beside_the_project() -> None:
    sources = [
        *ROOT.glob("hpcgym/**/*.py"),
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("studies/*.py"),
    ]
    found = [
        f"{p.relative_to(ROOT)}:{n}: {m.group(0)}"
        for p in [*_pages(), *sources]
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in SHARED.finditer(line)
    ]
    assert not found, "files a user's clone does not have:\n" + "\n".join(found)
    assert SHARED.search("follows `shared/DESIGN.md`") and SHARED.search("../shared/papers/x")
    assert SHARED.search("the MEBF paper (``PAPERS.md`` section 4)")
    assert not SHARED.search("hpcgym/envs/shares.py and Shared-v0's shared nodes")
