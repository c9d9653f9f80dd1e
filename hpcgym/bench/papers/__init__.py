"""Paper checks: each reproduces one paper's qualitative result (see docs/papers.md).

``PAPERS`` names the check of each paper. A check's module exposes
``run(quick: bool, out: Path | None) -> str``: it runs the check (``quick``: a small sample
that fits in a few minutes), writes the Markdown tables to ``out`` when given and returns them
(:func:`run_paper`). ``hpcgym papers NAME [options]`` runs a check with the flags that
:mod:`hpcgym.bench.papers.cli` declares for it, through the module's ``command(args)``.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from hpcgym.atomic import write_csv, write_text
from hpcgym.errors import HpcGymError

PAPERS: dict[str, str] = {
    "mebf": "hpcgym.bench.papers.mebf",
    "sdpolicy": "hpcgym.bench.papers.sdpolicy",
    "koala": "hpcgym.bench.papers.koala",
    "dfrs": "hpcgym.bench.papers.dfrs",
    "rlscheduler": "hpcgym.bench.papers.rlscheduler",
    "evolving": "hpcgym.bench.papers.evolving",
}
"""Paper name -> the module of its check."""

SUMMARIES: dict[str, str] = {
    "mebf": "MEBF (malleable EASY backfilling) on SDSC SP2: the paper's policies and variants "
    "against EASY, and each suspected cause of a difference alone",
    "sdpolicy": "SD-Policy (co-scheduling by slowdown-driven sharing) against EASY on its "
    "workloads, with the paper's MAXSD and runtime models",
    "koala": "KOALA's malleability managers (FPSMA, EGS; PRA, PWA) on the DAS-3 clusters",
    "dfrs": "DFRS (fractional resource sharing, GreedyPM) against EASY by maximum and mean "
    "bounded stretch",
    "rlscheduler": "RLScheduler's heuristic table (Lublin-1, mean bounded slowdown): its five "
    "scores in reserve mode, without and with backfilling, beside the published numbers",
    "evolving": "list scheduling of evolving applications (Klein and Perez): the six "
    "algorithms on 1,000 generated cases, planned and run in the engine",
}
"""One line per paper check (``hpcgym list papers``)."""


T = TypeVar("T")


class Progress:
    """``hpcgym papers: k/n simulations, t s`` on stderr at every tenth of the way (and the end).

    Plain lines, not a redrawn bar, so a log or a pipe keeps them too.
    """

    def __init__(self, total: int, what: str = "simulations") -> None:
        self.total, self.what, self.done = total, what, 0
        self._t0 = time.perf_counter()
        self._next = 1

    def step(self, k: int = 1) -> None:
        """Count ``k`` more finished; print when a tenth of the total is crossed."""
        self.done += k
        tenth = (10 * self.done) // max(1, self.total)
        if tenth >= self._next or self.done == self.total:
            self._next = tenth + 1
            took = time.perf_counter() - self._t0
            print(
                f"hpcgym papers: {self.done}/{self.total} {self.what}, {took:.0f} s",
                file=sys.stderr,
                flush=True,
            )


def counted(items: Iterable[T], progress: Progress) -> Iterator[T]:
    """``items``, counting each one into ``progress`` as it is taken."""
    for item in items:
        yield item
        progress.step()


def run_all(fn: Callable[[Any], T], todo: Sequence[Any], workers: int) -> list[T]:
    """``[fn(c) for c in todo]`` on ``workers`` processes, in order, showing progress."""
    progress = Progress(len(todo))
    if workers <= 1:
        return list(counted((fn(c) for c in todo), progress))
    with ProcessPoolExecutor(workers) as pool:
        return list(counted(pool.map(fn, todo, chunksize=2), progress))


def tabulated(
    simulate_all: Callable[[Any, int], Any],
    todo: Sequence[Any],
    workers: int,
    report: Callable[[Any], str],
    csv: str | None = None,
) -> str:
    """Run ``todo`` (``simulate_all(todo, workers)``: a frame, one row per simulation).

    Returns ``report`` of the frame with a line counting the simulations and their time; the
    rows are written to ``csv`` too when given.
    """
    t0 = time.perf_counter()
    df = simulate_all(todo, workers)
    if csv:
        write_csv(csv, df, index=False)
    return report(df) + f"\n{len(todo)} simulations in {time.perf_counter() - t0:.0f} s.\n"


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


def no_quick(name: str, args: Any) -> None:
    """Refuse ``--quick`` for a check (or mode) that has no small sample.

    Raises:
        HpcGymError: ``args.quick`` is set.
    """
    if getattr(args, "quick", False):
        raise HpcGymError(f"paper check {name!r} has no --quick sample; run it without --quick")


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
            f"paper {name!r} has no runner yet: {module_name} defines no run(quick, out)"
        )
    return run


def run_paper(name: str, quick: bool = False, out: Path | None = None) -> str:
    """Run paper ``name``'s check; its Markdown tables (also written to ``out`` if given)."""
    return runner(name)(quick, out)
