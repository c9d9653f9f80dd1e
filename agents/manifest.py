"""Write ``agents.json`` and ``expected/`` from the agents here and their benchmark runs.

    python agents/manifest.py RUN_DIR [RUN_DIR ...]

Each RUN_DIR is an ``hpcgym bench --run-dir`` folder in which one published agent
(``--policy agents/<name>@best``) played one or more scenarios. For every agent folder this
records the SHA-256 of each member's card and weights, and, from the runs, the scenarios it was
benchmarked on with each episode's figures (``<name>/expected/<scenario>.csv``), which
``tests/agents/test_published.py`` compares a fresh benchmark with. Run it after replacing an
agent, never to make a failing comparison pass.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
COLUMNS = ["seed", "train_seed", "mean_bsld", "max_bsld", "mean_wait", "makespan", "utilization"]
"""The figures kept per episode (the ones the documents quote)."""


def sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(runs: list[str]) -> int:
    """Write each run's expected episodes, then ``agents.json``; return the exit code."""
    for run in map(Path, runs):
        results = pd.read_csv(run / "results.csv")
        for (scenario, policy), part in results.groupby(["scenario", "policy"]):
            folder = HERE / str(policy).removesuffix("@best")  # labels are folder names
            if not (folder / "s0").is_dir():
                continue
            out = folder / "expected" / f"{scenario}.csv"
            out.parent.mkdir(exist_ok=True)
            rows = part.sort_values(["train_seed", "seed"])[COLUMNS]
            rows.to_csv(out, index=False, float_format="%.17g")
    agents = {}
    for folder in sorted(p for p in HERE.iterdir() if (p / "s0").is_dir()):
        if (folder / "s0" / "score.json").is_file():  # score agents (hpcgym search-score)
            files = sorted(folder.glob("s*/score.json"))
            card = json.loads(files[0].read_text())
            kind, decode = "score", "greedy"
        elif (folder / "s0" / "planner.json").is_file():  # hpcgym write-planners
            files = sorted(folder.glob("s*/planner.json"))
            card = json.loads(files[0].read_text())
            kind, decode = "planner", "greedy"
        elif (folder / "s0" / "distilled.json").is_file():  # hpcgym distill
            files = sorted(folder.glob("s*/distilled.json"))
            card = json.loads(files[0].read_text())
            kind, decode = "distilled", "greedy"
        elif (folder / "s0" / "order.json").is_file():  # order agents (hpcgym search-score)
            files = sorted(folder.glob("s*/order.json"))
            card = json.loads(files[0].read_text())
            kind, decode = "order", "greedy"
        else:  # SB3 agents: each member's validation-chosen best.*
            weights = sorted(folder.glob("s*/best.safetensors"))
            files = sorted([*weights, *(w.with_suffix(".json") for w in weights)])
            card = json.loads((folder / "s0" / "best.json").read_text())
            kind, decode = "sb3", card["decode"]
        agents[folder.name] = {
            "kind": kind,
            "env_id": card["env_id"],
            "decode": decode,
            "seeds": sorted({int(p.parent.name[1:]) for p in files}),
            "files": {str(p.relative_to(folder)): sha256(p) for p in files},
            "scenarios": sorted(p.stem for p in (folder / "expected").glob("*.csv")),
        }
    (HERE / "agents.json").write_text(json.dumps(agents, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
