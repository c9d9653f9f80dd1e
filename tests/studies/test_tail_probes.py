"""The tail probes: each trace's worst job compared in pairs, and the starvation guard.

``studies/probes/worst_per_trace.py`` and ``studies/probes/starvation_guard.py`` back figures in
``studies/rlscheduler-agents.md`` ("Where the worst jobs come from"): the first on a hand-made
table, the
second on the rule it adds and on one validation trace of the scenario it probes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PROBES = Path(__file__).resolve().parents[2] / "studies" / "probes"
sys.path.insert(0, str(PROBES))

import starvation_guard as sg  # noqa: E402
import worst_per_trace as wpt  # noqa: E402

from hpcgym.agents.engine.distill import DistilledReserve  # noqa: E402
from hpcgym.bench import scenarios  # noqa: E402
from hpcgym.envs.episodes import episode_for  # noqa: E402
from hpcgym.sim import SimConfig, Simulator  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_each_trace_is_compared_with_the_references_same_trace() -> None:
    table = pd.DataFrame(
        {
            "scenario": ["s"] * 8,
            "policy": ["ref"] * 4 + ["a"] * 4,
            "train_seed": [np.nan] * 4 + [0.0] * 4,
            "seed": [1, 2, 3, 4, 4, 3, 2, 1],  # the agent's rows in another order
            "max_bsld": [10.0, 20.0, 30.0, 40.0, 41.0, 28.0, 20.0, 15.0],
        }
    )
    rows = {r["policy"]: r for r in wpt.compare(table, "ref", "max_bsld")}
    a = rows["a"]
    assert a["train_seed"] == 0 and a["traces"] == 4
    assert a["mean_max_bsld"][0] == 26.0  # (15 + 20 + 28 + 41) / 4
    diff = a["minus_ref"]
    assert diff[0] == 1.0  # (+5 + 0 - 2 + 1) / 4, paired by seed
    assert diff[1] <= 1.0 <= diff[2] and diff[1] < 0 < diff[2]
    assert a["win"][0] == (1 + 0.5) / 4  # better on seed 3, a tie on seed 2
    assert (a["worst"], a["ref_worst"]) == (41.0, 40.0)
    assert rows["ref"]["minus_ref"] == [0.0, 0.0, 0.0]
    with pytest.raises(SystemExit, match="did not play"):
        wpt.compare(table, "nobody", "max_bsld")


class _Spy(sg.Guarded):
    """The guard, checking each of its choices against the rule and the network's own."""

    checked = overridden = 0

    def choose(self, sim: Simulator, free: int) -> int:
        pick = super().choose(sim, free)
        now = sim.now
        starved = max(
            sim.queue.values(),
            key=lambda j: (now - j.spec.submit) / max(sg.runtime_estimate(j.spec), 10.0),
        )
        if (now - starved.spec.submit) / max(sg.runtime_estimate(starved.spec), 10.0) > 0:
            assert pick == starved.spec.id
            self.overridden += pick != DistilledReserve.choose(self, sim, free)
        self.checked += 1
        return pick


def test_the_guard_commits_to_the_most_starved_job_past_its_limit() -> None:
    card = str(ROOT / "agents" / "distilled-dagger-bf" / "s0" / "distilled.json")
    base = sg.scheduler(card, None)
    assert isinstance(base, DistilledReserve)
    sc = scenarios.on_split(scenarios.get(sg.SCENARIO), "validation")
    seed = sc.seeds[0]
    ep = episode_for(sc.env_id, dict(sc.env_kwargs), seed)
    spy = _Spy(base, limit=0.0)  # fires whenever a queued job has waited at all
    sim = Simulator(ep.platform, ep.jobs, SimConfig(kill_on_walltime=False))
    spy.run(sim)
    assert spy.checked > 100 and spy.overridden > 0  # the rule ran and changed choices
    # an unreachable limit plays the network's own schedule
    assert sg.play((card, float("inf"), seed)) == sg.play((card, None, seed))
    mean, worst = sg.play((card, None, seed))
    assert np.isfinite(mean) and worst >= mean >= 1.0
