"""Where the engine's time goes on one shape of ``scale.py``: cProfile of FCFS or EASY.

    python benchmarks/scale_profile.py SHAPE [--run easy] [--max-jobs N] [--top 15] [--count]

Prints the total CPU seconds of the decision loop without the profiler, then the functions
with the most self time under it. Under the mypyc build the compiled functions are opaque to
cProfile (a compiled method shows as one entry, its callees inside it are not seen), so read
the compiled build's profile for which *Python-level* calls it still makes.

``--count`` (pure-Python build, EASY) also counts what EASY's passes touch: passes that scan
the queue copy in order (the head leaves extra nodes), passes where only jobs ending by the
shadow time can start, and for those the queued jobs their scans in submission order looked at
and the passes that then took the rest from the estimate-sorted copy.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from results_md import build_note
from scale import SHAPE, cached, job_specs

from hpcgym.baselines import classic, make
from hpcgym.sim import Platform, Simulator


def loop(d: dict[str, np.ndarray], name: str) -> tuple[Simulator, object]:
    """A fresh simulator and scheduler for ``d``."""
    total, cores = (int(x) for x in d["machine"])
    return Simulator(Platform.single(total, cores), job_specs(d)), make(name)


def count_easy(d: dict[str, np.ndarray]) -> dict[str, int]:
    """Run EASY with counters on its pass (line events of ``EasyBackfill``'s pass)."""
    import inspect
    from collections import Counter

    where = {
        classic.EasyBackfill.schedule: {
            "full-queue passes": "candidates = queue.values()",
            "shadow-time passes": "short = bisect_right(self._by_est, (limit, math.inf))",
            "candidates checked (full queue, new jobs)": "n = rec[0]",
            "starts (queue heads, full queue, new jobs)": "start(rec[2])",
        },
        classic.EasyBackfill._backfill_short: {
            "queued jobs looked at by those scans": "est = rec[1]",
            "passes taking the rest from the estimate-sorted copy": "fit.sort(key=_SEQ)",
            "jobs checked from it": "n = r[2]",
            "starts (shadow time)": "started.append((rec, now + est))",
        },
    }
    line_of: dict[object, dict[int, str]] = {}
    for func, names in where.items():
        lines, first = inspect.getsourcelines(func)
        line_of[func.__code__] = {
            first + i: name
            for i, text in enumerate(lines)
            for name, code in names.items()
            if text.strip() == code
        }
    counts: Counter[str] = Counter()

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "line":
            name = line_of[frame.f_code].get(frame.f_lineno)
            if name:
                counts[name] += 1
        return local

    def calls(frame, event, arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code in line_of else None

    sim, sched = loop(d, "easy")
    sys.settrace(calls)
    try:
        while sim.advance():
            counts["passes"] += 1
            sched.schedule(sim)  # type: ignore[attr-defined]
    finally:
        sys.settrace(None)
    return dict(counts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("shape", choices=sorted(SHAPE))
    ap.add_argument("--run", default="easy", choices=("fcfs", "easy"))
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--count", action="store_true", help="count EASY's pass work")
    ap.add_argument("--time-only", action="store_true", help="no profile: the loop's time only")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hpcgym-scale")
    args = ap.parse_args()
    shape = SHAPE[args.shape]
    n = shape.jobs if args.max_jobs is None else min(shape.jobs, args.max_jobs)
    with np.load(cached(shape, n, args.cache)) as f:
        d = {k: f[k] for k in f.files}
    sim, sched = loop(d, args.run)
    c0 = time.process_time()
    while sim.advance():
        sched.schedule(sim)  # type: ignore[attr-defined]
    cpu = time.process_time() - c0
    print(f"{args.shape} ({len(d['id']):,} jobs, {int(d['machine'][0]):,} units), {args.run}, ")
    print(f"{build_note()}: {cpu:.3f} CPU s without the profiler, {len(d['id']) / cpu:,.0f} jobs/s")
    if args.time_only:
        return
    if args.count:
        for what, k in count_easy(d).items():
            print(f"{what:45s} {k:>12,}")
        return
    sim, sched = loop(d, args.run)
    prof = cProfile.Profile()

    def run() -> None:
        while sim.advance():
            sched.schedule(sim)  # type: ignore[attr-defined]

    prof.runcall(run)
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
