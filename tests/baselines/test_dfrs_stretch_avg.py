"""``/stretch-per/opt=avg``: the average estimated stretch over a fixed mapping, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import make
from hpcgym.baselines.dfrs import DFRSScheduler, Placement, dfrs_setup, parse_name
from hpcgym.baselines.dfrs.allocation import load_matrix
from hpcgym.baselines.dfrs.stretch import avg_stretch_yields, min_max_floor, stretch_yields
from hpcgym.sim import JobSpec, Platform, Simulator

T = 600.0


def spec(jid: int, tasks: int = 1, cpu: float = 1.0, mem: float = 0.1) -> JobSpec:
    return JobSpec(jid, 0.0, work=100.0, nodes=tasks, cpu_need=cpu, mem=mem)


def estimated(y: dict[int, float], flow: dict[int, float], vt: dict[int, float]) -> dict:
    return {j: (flow[j] + T) / (vt[j] + y[j] * T) for j in y}


def five_jobs() -> tuple[Placement, dict[int, float], dict[int, float]]:
    # Node 0: jobs 1 and 2 (flow 5400, no progress); node 1: jobs 3 and 4; node 2: job 5, half
    # a core. All need a full core per task.
    p = Placement(3)
    for jid, node, cpu in ((1, 0, 1.0), (2, 0, 1.0), (3, 1, 1.0), (4, 1, 1.0), (5, 2, 0.5)):
        p.add(spec(jid, cpu=cpu), np.array([node]))
    flow = {1: 5400.0, 2: 5400.0, 3: 300.0, 4: 3000.0, 5: 100.0}
    vt = {1: 0.0, 2: 0.0, 3: 60.0, 4: 120.0, 5: 50.0}
    return p, flow, vt


def test_hand_computed_average_stretch_yields() -> None:
    p, flow, vt = five_jobs()
    y = avg_stretch_yields(p, flow, vt, T)
    # Node 0 decides the max: 6000 / (600 y) with y1 + y2 = 1 is lowest at y = 1/2 (stretch
    # 20); that is also the floor, so node 0 stays at (1/2, 1/2).
    # Node 1: minimize 900 / (60 + 600 y3) + 3600 / (120 + 600 y4) with y3 + y4 = 1. The
    # optimum has 60 + 600 y_j proportional to sqrt(ft_j + T): c * 30 - 60 + c * 60 - 120 = 600
    # gives c = 78/9, so 600 y3 = 200 and 600 y4 = 400 (both above the floor of stretch 20).
    # Job 5 alone at need 1/2: yield 1.
    assert y[1] == pytest.approx(0.5, abs=1e-6)
    assert y[2] == pytest.approx(0.5, abs=1e-6)
    assert y[3] == pytest.approx(1 / 3, abs=1e-4)
    assert y[4] == pytest.approx(2 / 3, abs=1e-4)
    assert y[5] == pytest.approx(1.0)
    s = estimated(y, flow, vt)
    assert s[3] + s[4] == pytest.approx(900 / 260 + 3600 / 520, rel=1e-6)
    # opt=max equalizes node 1 instead: 900 / (60 + 600 y3) = 3600 / (120 + 600 y4), y3 = 0.16,
    # both at 900 / 156; a larger sum (11.54 vs 10.38) and a lower max on that node.
    m = stretch_yields(p, flow, vt, T)
    assert m[3] == pytest.approx(0.16, abs=1e-6) and m[4] == pytest.approx(0.84, abs=1e-6)
    sm = estimated(m, flow, vt)
    assert sm[3] + sm[4] > s[3] + s[4] + 1.0
    assert max(sm[3], sm[4]) < max(s[3], s[4])


def test_floor_is_the_minimized_max() -> None:
    # One node, two jobs: no room above the common level, so opt=avg equals opt=max there.
    p = Placement(1)
    p.add(spec(1), np.array([0]))
    p.add(spec(2), np.array([0]))
    flow, vt = {1: 1000.0, 2: 0.0}, {1: 100.0, 2: 0.0}
    y = avg_stretch_yields(p, flow, vt, T)
    # 1600 / (100 + 600 y1) = 600 / (600 y2), y1 + y2 = 1: y2 = 7/22.
    assert y[2] == pytest.approx(7 / 22, abs=1e-6)
    assert y[1] + y[2] == pytest.approx(1.0, abs=1e-9)
    _, mat = load_matrix(p)
    floor = min_max_floor(mat, np.array([1600.0, 600.0]), np.array([100.0, 0.0]), T)
    assert floor.tolist() == pytest.approx([15 / 22, 7 / 22], abs=1e-6)


def test_matches_a_general_convex_solver_on_shared_multi_task_jobs() -> None:
    from scipy.optimize import minimize

    rng = np.random.default_rng(4)
    p = Placement(3)
    layout = {1: [0, 1], 2: [1, 2], 3: [0], 4: [2, 2], 5: [1]}
    for jid, nodes in layout.items():
        p.add(spec(jid, tasks=len(nodes), cpu=float(rng.uniform(0.3, 1.0))), np.array(nodes))
    flow = {j: float(rng.uniform(0, 5000)) for j in layout}
    vt = {j: float(rng.uniform(0, 0.5)) * flow[j] for j in layout}
    y = avg_stretch_yields(p, flow, vt, T)
    ids, mat = load_matrix(p)
    a = np.array([flow[j] + T for j in ids])
    v = np.array([vt[j] for j in ids])
    got = np.array([y[j] for j in ids])
    assert (mat @ got <= 1.0 + 1e-9).all()
    floor = min_max_floor(mat, a, v, T)
    assert (got >= floor - 1e-12).all()
    ref = minimize(
        lambda x: float((a / (v + x * T)).sum()),
        floor,
        jac=lambda x: -a * T / (v + x * T) ** 2,
        bounds=list(zip(floor, np.ones(len(ids)), strict=True)),
        constraints=[{"type": "ineq", "fun": lambda x: 1.0 - mat @ x, "jac": lambda x: -mat}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert ref.success
    assert float((a / (v + got * T)).sum()) == pytest.approx(ref.fun, rel=1e-7)


def test_stretch_per_opt_avg_runs_on_the_engine() -> None:
    cfg = parse_name("/stretch-per/opt=avg/minvt=600")
    assert (cfg.periodic, cfg.opt) == ("mcb8-stretch", "avg")
    assert parse_name(cfg.name) == cfg
    assert make("dfrs", config="/stretch-per/opt=avg").config.opt == "avg"
    jobs = [
        JobSpec(1, 0.0, work=3000.0, nodes=1, cpu_need=1.0, mem=0.6),
        JobSpec(2, 50.0, work=600.0, nodes=1, cpu_need=1.0, mem=0.3),
        JobSpec(3, 70.0, work=200.0, nodes=2, cpu_need=0.25, mem=0.3),
    ]
    name = "/stretch-per/opt=avg"
    specs, config = dfrs_setup(jobs, name)
    sim = Simulator(Platform.single(2, cores=4), specs, config)
    DFRSScheduler(name).run(sim)
    assert sim.done and sim.counts["completed"] == 3
    # Nothing starts before the first tick; at 600 s all three fit on the two nodes.
    assert {sim.jobs[j].start_time for j in (1, 2, 3)} == {600.0}
