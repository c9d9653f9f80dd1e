"""The project's prose names no folder of the machine it was written on."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL = re.compile(r"(?<![\w.~-])/(?:work|root|home|Users)/[\w.-]+")


def _pages() -> list[Path]:
    pages = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("benchmarks/**/*.md")]
    return [*pages, *ROOT.glob("agents/**/*.md"), *ROOT.glob("studies/**/*.md")]


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
        *ROOT.glob("studies/**/*.py"),
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


SECTION_REF = re.compile(
    r"`{1,2}((?:docs|studies)/[\w.-]+\.md)`{1,2}[\s#]*(?:,[\s#]*|\([\s#]*)\"([\w`][^\"]*)\""
)
"""A reference to a section of a page: ```docs/X.md`, "Section"`` or ```studies/X.md` ("Section"``,
with single or double backticks, across a line break (comment markers included)."""
FENCE = re.compile(r"^\s*(```|~~~)")
BOLD_LEAD = re.compile(r"^(?:- )?\*\*([^*]+)\*\*")


def _anchors(page: Path) -> list[str]:
    """The page's headings (outside code blocks) and bold paragraph leads (``**Tried next**``,
    ``- **Resize costs**``): the names a reference may give."""
    anchors, in_code = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            anchors.append(line.lstrip("#").strip())
        elif not in_code and (m := BOLD_LEAD.match(line)):
            anchors.append(m.group(1).strip())
    return anchors


def _section_refs(text: str) -> list[tuple[str, str]]:
    return [
        (m.group(1), " ".join(re.sub(r"\n\s*#*", " ", m.group(2)).split()))
        for m in SECTION_REF.finditer(text)
    ]


def _broken_section_refs(files: list[Path]) -> list[str]:
    broken = []
    for f in files:
        for page, section in _section_refs(f.read_text(encoding="utf-8")):
            target = ROOT / page
            if not target.is_file():
                broken.append(f"{f.relative_to(ROOT)}: {page} does not exist")
            elif not any(a.startswith(section) for a in _anchors(target)):
                broken.append(f'{f.relative_to(ROOT)}: {page} has no section "{section}"')
    return broken


def test_every_named_section_exists() -> None:
    files = [
        *_pages(),
        *ROOT.glob("hpcgym/**/*.py"),
        *ROOT.glob("hpcgym/**/*.yml"),
        *ROOT.glob("benchmarks/*.py"),
        *ROOT.glob("studies/**/*.py"),
        *(p for p in ROOT.glob("tests/**/*.py") if p.name != "test_docs_paths.py"),
    ]
    refs = [r for f in files for r in _section_refs(f.read_text(encoding="utf-8"))]
    assert len(refs) > 30, refs  # the references are found
    broken = _broken_section_refs(files)
    assert not broken, "references to sections that are not there:\n" + "\n".join(broken)


def test_the_section_check_reads_the_forms_in_use() -> None:
    text = (
        'see `docs/bench.md`, "Relative rewards" and ``studies/x.md`` ("A large\n'
        '    # fresh test") or `docs/env.md`,\n "Speed"'
    )
    assert _section_refs(text) == [
        ("docs/bench.md", "Relative rewards"),
        ("studies/x.md", "A large fresh test"),
        ("docs/env.md", "Speed"),
    ]
    anchors = _anchors(ROOT / "docs" / "rlscheduler.md")
    assert (
        "The RL column (`compare-make-table.py` at `c5d7c7b`, `ppo-pick-jobs.py` lines 115-127)"
        in anchors
    )
    assert not any(
        a.startswith("the same with --seed")
        for a in _anchors(ROOT / "studies" / "rlscheduler-agents.md")
    )
