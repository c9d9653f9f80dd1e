"""MEBF on a few hundred jobs of real traces: it ends every job, resizes only malleable jobs
within their ranges and at most once per pass, and equals EASY when every job is rigid."""

from __future__ import annotations

import functools

import pytest

import hpcgym.workloads as W
from hpcgym.baselines import make
from hpcgym.sim import JobKind, SimConfig, Simulator
from hpcgym.workloads import transforms

NO_KILL = SimConfig(kill_on_walltime=False)
PRESETS = ["mebf-handoff", "mebf-spare", "mebf-intensive", "mebf-shrink+", "mebf-expand+"]


@functools.cache
def elastic(intensive: bool) -> W.Workload:
    return W.load(
        "elastic/sdsc-sp2-mebf-v0", seed=1, n_jobs=300, malleable=0.8, intensive=intensive
    )


@pytest.mark.parametrize("resize_at", ["now", "phase"])
@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("intensive", [False, True])
def test_invariants_on_an_elastic_window(name: str, intensive: bool, resize_at: str) -> None:
    w = elastic(intensive)
    sim = Simulator(w.platform, w.jobs, NO_KILL)
    sched = make(name, resize_at=resize_at)
    sched.reset()
    while sim.advance():
        before = {jid: j.reconfigurations for jid, j in sim.running.items()}
        sched.schedule(sim)
        for jid, job in sim.running.items():
            spec = job.spec
            assert spec.min_nodes <= job.size <= spec.max_nodes
            assert job.reconfigurations - before.get(jid, 0) <= 1, "resized twice in one pass"
    assert sim.done
    table = sim.result().jobs
    assert (table["state"] == "completed").sum() + (table["state"] == "rejected").sum() == 300
    resized = table[table["reconfigurations"] > 0]
    assert (resized["kind"] == JobKind.MALLEABLE.value).all()
    assert len(resized) > 0, "the window exercised no resize"


@pytest.mark.parametrize("name", ["mebf", "mebf-shrink+", "mebf-expand+"])
def test_equals_easy_when_every_job_is_rigid(name: str) -> None:
    w = transforms.first(W.load("swf/kth-sp2-v0", estimates="exact"), 300)
    starts = {}
    for sched in ("easy", name):
        sim = Simulator(w.platform, w.jobs)
        make(sched).run(sim)
        starts[sched] = {jid: j.start_time for jid, j in sim.jobs.items()}
    assert starts["easy"] == starts[name]


def test_mebf_beats_ebf_on_a_malleable_window() -> None:
    w = elastic(True)
    resp = {}
    for name in ("easy", "mebf"):
        sim = Simulator(w.platform, w.jobs, NO_KILL)
        make(name).run(sim)
        resp[name] = sim.result().summary["mean_response"]
    assert resp["mebf"] < resp["easy"]
