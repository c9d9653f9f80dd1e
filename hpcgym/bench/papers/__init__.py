"""Paper checks: scripts reproducing each paper's qualitative result (see docs/papers.md).

``PAPERS`` names the check of each paper. A check's module exposes
``run(quick: bool, out: Path | None) -> str``: it runs the check (``quick``: a small sample
that fits in a few minutes), writes the Markdown tables to ``out`` when given and returns them.
``hpcgym papers NAME [--quick]`` calls it (:func:`run_paper`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from hpcgym.atomic import write_text
from hpcgym.errors import HpcGymError

PAPERS: dict[str, str] = {
    "mebf": "hpcgym.bench.papers.mebf",
    "sdpolicy": "hpcgym.bench.papers.sdpolicy",
    "koala": "hpcgym.bench.papers.koala",
    "dfrs": "hpcgym.bench.papers.dfrs",
}
"""Paper name -> the module of its check."""


def marked(verdict: str, preview: bool) -> str:
    """A verdict as a quick check prints it: with ``?`` (a preview, not a result)."""
    return f"{verdict}?" if preview else verdict


def preview_note(sample: str, full: str) -> str:
    """The line under a quick check's table: its sample cannot decide; the full check can."""
    return (
        f"Quick check: {sample} give intervals too wide to decide, so each verdict above is a "
        f"preview (marked ?), not a result; the full check ({full}) may reach another verdict, "
        "which docs/papers.md records.\n"
    )


def publish(text: str, out: str | Path | None) -> None:
    """Print a paper check's report and, when ``out`` is given, write it there too."""
    print(text)
    if out:
        write_text(out, text)


def runner(name: str) -> Callable[[bool, Path | None], str]:
    """The ``run`` function of paper ``name``'s check.

    Raises:
        HpcGymError: The name is unknown, or its check has no ``run`` yet.
    """
    module_name = PAPERS.get(name)
    if module_name is None:
        raise HpcGymError(f"unknown paper {name!r}; the papers are: {', '.join(PAPERS)}")
    module = importlib.import_module(module_name)
    run = getattr(module, "run", None)
    if run is None:
        raise HpcGymError(
            f"paper {name!r} has no runner yet: {module_name} defines no run(quick, out); "
            f"run `python -m {module_name} --help` for its script"
        )
    return run


def run_paper(name: str, quick: bool = False, out: Path | None = None) -> str:
    """Run paper ``name``'s check; its Markdown tables (also written to ``out`` if given)."""
    return runner(name)(quick, out)
