"""The one writer of ``benchmarks/RESULTS.md``: each benchmark owns a ``## ...`` section."""

from __future__ import annotations

import re
from pathlib import Path

from hpcgym.atomic import write_text

RESULTS = Path(__file__).with_name("RESULTS.md")


def write_section(heading: str, text: str) -> None:
    """Replace the section that starts with ``heading`` by ``text`` (append it if absent).

    ``text`` starts with the heading line; the other sections are left as they are.
    """
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    body = text.rstrip("\n") + "\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(old):
        new = pattern.sub(lambda _: body + "\n", old)
    else:
        new = old.rstrip("\n") + "\n\n" + body
    write_text(RESULTS, new.rstrip("\n") + "\n")  # atomically: never half a file


def build_note() -> str:
    """Which build of hpcgym ran: compiled with mypyc (see ``setup.py``), pure Python or mixed."""
    import hpcgym

    report = hpcgym.compiled()
    if all(report.values()):
        return "hpcgym compiled with mypyc"
    if not any(report.values()):
        return "hpcgym pure Python (not compiled)"
    return "hpcgym partly compiled: " + ", ".join(name for name, on in report.items() if on)
