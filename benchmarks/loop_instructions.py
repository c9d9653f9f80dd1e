"""Instructions per job of the event loop, counted by valgrind's callgrind: a figure that does not
move with the machine's load, for A/B comparisons of builds of the loop.

Run: ``python benchmarks/loop_instructions.py [--jobs N] [--schedulers fcfs,easy]
[--only KEYS]`` (valgrind must be installed; about 30-60 s a shape and scheduler). Each count
is one child process under ``valgrind --tool=callgrind`` with collection on only inside the
compiled ``advance`` and ``schedule`` methods (their callees included): the first ``N`` jobs of
a ``scale.py`` shape (from the default cache), ``sim.advance`` then ``schedule`` by hand, as
``env_path.py``'s event loop. The simulator's construction, the interpreter's own loop and the
start-up are not counted. Instructions are not time (a cache miss costs many), but two builds
compared on the same shape run the same work, so their ratio shows what a change saved. To
compare builds, run the script under each (``PYTHONPATH`` pointing at a checkout built in
place).

``--cache-sim`` also has callgrind simulate the caches (the machine's own sizes, as valgrind
detects them): first-level data and instruction misses and last-level misses a job, and an
estimate of cycles a job, ``Ir + 10 * L1 misses + 100 * LL misses`` (KCachegrind's weights).
A change that saves instructions but touches colder memory (a cache of objects read at
random, say) shows there as a loss where the instruction count shows a gain; still a model,
not a clock, but one that does not move with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scale import SHAPES

from hpcgym.baselines import make

CHILD = """
import sys, tempfile
from pathlib import Path
import numpy as np
sys.path.insert(0, {bench!r})
from scale import SHAPES, cached, job_specs
from hpcgym.baselines import make
from hpcgym.sim import Platform, Simulator
shape = next(s for s in SHAPES if s.key == {key!r})
cache = Path(tempfile.gettempdir()) / "hpcgym-scale"
with np.load(cached(shape, min(shape.jobs, 20_000), cache)) as f:
    d = {{k: f[k] for k in f.files}}
total, cores = (int(x) for x in d["machine"])
sim = Simulator(Platform.single(total, cores), job_specs(d)[:{n}])
scheduler = make({name!r})
def loop(advance, schedule, sim):
    while advance():
        schedule(sim)
loop(sim.advance, scheduler.schedule, sim)
"""


def schedule_symbol(name: str) -> str:
    """The C symbol of the compiled ``schedule`` wrapper of ``make(name)``'s class."""
    cls = type(make(name))
    if not cls.__module__.startswith("hpcgym."):
        raise SystemExit(f"{name}: {cls.__module__} is not an hpcgym module")
    return f"CPyPy_{cls.__module__.rsplit('.', 1)[-1]}___{cls.__name__}___schedule"


def count(key: str, name: str, n: int, cache_sim: bool = False) -> dict[str, int]:
    """What callgrind counts inside ``advance`` and ``schedule`` for one loop, by event
    (``Ir``; with ``cache_sim`` also ``D1mr``, ``LLmr``... as valgrind names them)."""
    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            "--collect-atstart=no",
            f"--cache-sim={'yes' if cache_sim else 'no'}",
            # Exact names (a wildcard pattern after another one was seen to match nothing).
            f"--toggle-collect={schedule_symbol(name)}",
            "--toggle-collect=CPyPy_engine___EngineCore___advance",
            sys.executable,
            "-c",
            CHILD.format(bench=bench, key=key, n=n, name=name),
        ]
        subprocess.run(cmd, check=True, capture_output=True, env=os.environ.copy())
        text = out.read_text()
        events = re.search(r"^events:\s+(.+)$", text, re.MULTILINE)
        summary = re.search(r"^summary:\s+(.+)$", text, re.MULTILINE)
        if events is None or summary is None:
            raise SystemExit(f"{out}: no events or summary line; did valgrind run?")
        return dict(zip(events.group(1).split(), map(int, summary.group(1).split()), strict=True))


def cycles(c: dict[str, int]) -> int:
    """KCachegrind's cycle estimate: ``Ir + 10 * L1 misses + 100 * last-level misses``."""
    l1 = c["I1mr"] + c["D1mr"] + c["D1mw"]
    ll = c["ILmr"] + c["DLmr"] + c["DLmw"]
    return c["Ir"] + 10 * l1 + 100 * ll


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=5_000, help="first N jobs of each shape")
    parser.add_argument("--schedulers", default="fcfs,easy")
    parser.add_argument("--only", default="", help="comma-separated scale.py shape keys")
    parser.add_argument(
        "--cache-sim", action="store_true", help="also cache misses and a cycle estimate"
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt install valgrind)")
    keys = [k for k in args.only.split(",") if k] or [s.key for s in SHAPES]
    if args.cache_sim:
        print(
            "| shape | scheduler | jobs | instructions / job | L1 misses / job "
            "| LL misses / job | estimated cycles / job |"
        )
        print("|---|---|---:|---:|---:|---:|---:|")
    else:
        print("| shape | scheduler | jobs | instructions / job |")
        print("|---|---|---:|---:|")
    for key in keys:
        shape = next(s for s in SHAPES if s.key == key)
        n = min(args.jobs, shape.jobs)
        for name in args.schedulers.split(","):
            c = count(key, name, n, args.cache_sim)
            row = f"| {key} | {name} | {n:,} | {c['Ir'] / n:,.0f} |"
            if args.cache_sim:
                l1 = c["I1mr"] + c["D1mr"] + c["D1mw"]
                ll = c["ILmr"] + c["DLmr"] + c["DLmw"]
                row += f" {l1 / n:,.1f} | {ll / n:,.2f} | {cycles(c) / n:,.0f} |"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
