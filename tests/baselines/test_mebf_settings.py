"""Hand-computed cases for MEBF's paper settings: phase-boundary resizes, cost scale, rho runtimes.

The common case: 8 nodes. J1 is malleable, work 100 s at its preferred 8 nodes, range [4, 8],
linear speedup, and starts at 0. J2 (rigid, 3 nodes, 10 s) arrives at 15, when no node is
free: MEBF shrinks J1 by floor(0.4 * 8) = 3 nodes to 5 (feasible: 85 s left > 0.5 * 100, and
15 + 85 * 8/5 = 151 <= 2 * 100). With 10 phases a phase is 10 s of work.
"""

from __future__ import annotations

import pytest
from baseline_helpers import malleable, rigid, run

from hpcgym.baselines import MEBF, make
from hpcgym.baselines.mebf.settings import PAPER_COST_SCALE, model_runtime, scale_reconfig
from hpcgym.errors import SpecError
from hpcgym.sim import JobKind, JobSpec, PowerLaw, RedistributionCost

CASE = [malleable(1, 0, 100, 8, 4, 8), rigid(2, 15, 10, 3)]


def test_immediate_resize_starts_the_head_at_once() -> None:
    sim, t = run(MEBF(policy="handoff"), CASE, 8)
    assert t[2] == (15, 25)
    # J1: 15 s done at 8 nodes, then 85 s of work at rate 5/8 (Handoff: 3 idle nodes at 25
    # are not more than the 5 held, so no expansion).
    assert t[1] == (0, pytest.approx(151))
    assert sim.jobs[1].reconfigurations == 1


def test_phase_resize_waits_for_the_next_boundary() -> None:
    sched = MEBF(policy="handoff", resize_at="phase", phases=10)
    _, t = run(sched, CASE, 8)
    # At 15 J1 has done 15 s, in phase 2: the shrink takes effect at the boundary, 20.
    assert t[2] == (20, 30)
    # J1: 20 s at 8 nodes, then 80 s at rate 5/8 = 128 s.
    assert t[1] == (0, pytest.approx(148))
    assert sched.stats["shrinks"] == 1


def test_phase_expansion_holds_its_nodes_until_the_boundary() -> None:
    sched = MEBF(policy="intensive", resize_at="phase", phases=10)
    held: list[tuple[float, int, int]] = []

    def record(sim) -> None:  # type: ignore[no-untyped-def]
        held.append((sim.now, int(sim.pool.free[0]), sched._free(sim)))

    sim, t = run(sched, CASE, 8, after=record)
    assert t[2] == (20, 30)
    # At 30 the queue is empty and 3 nodes idle: Intensive expands J1 to 8. J1 has done
    # 20 + 10 * 5/8 = 26.25 s, so its next boundary (30 s of work) comes 3.75 / (5/8) = 6 s
    # later, at 36; then 70 s are left at rate 1.
    assert t[1] == (0, pytest.approx(106))
    assert (30, 3, 0) in held  # the 3 idle nodes are held for J1, not free for others
    assert sim.jobs[1].max_size == 8 and sim.jobs[1].reconfigurations == 2


def test_phase_held_nodes_are_not_given_to_a_later_job() -> None:
    # J3 (rigid, 3 nodes) arrives at 32 while J1's expansion waits for its boundary at 36:
    # the held nodes are not free for it, and J1 (pending) is not shrunk for it then.
    jobs = [*CASE, rigid(3, 32, 5, 3)]
    sched = MEBF(policy="intensive", resize_at="phase", phases=10)
    _, t = run(sched, jobs, 8)
    assert t[3][0] >= 36
    # At 36 J1 is expanded to 8 (30 s done) and at once planned to shrink again for J3 at its
    # next boundary, 40 s of work, reached 10 s later at rate 1: J3 runs 46-51. At 51 the queue
    # is empty: J1 (43.125 s done at rate 5/8) expands again at its boundary of 50 s, at 62,
    # and ends 50 s later.
    assert t[3] == (46, 51)
    assert t[1] == (0, pytest.approx(112))


def test_no_resize_in_the_last_phase() -> None:
    # J2 arrives at 95: J1 is in its last phase, whose boundary is its end; with theta = 0 the
    # immediate mode shrinks (95 + 5 * 8/5 = 103 <= 200), the phase mode waits.
    jobs = [malleable(1, 0, 100, 8, 4, 8), rigid(2, 95, 10, 3)]
    _, t = run(MEBF(theta=0.0), jobs, 8)
    assert t[2] == (95, 105)
    _, t = run(MEBF(theta=0.0, resize_at="phase"), jobs, 8)
    assert t[2] == (100, 110)


def test_phase_settings_are_validated() -> None:
    with pytest.raises(SpecError, match="resize_at"):
        MEBF(resize_at="later")
    for bad in (0, 2.5, True):
        with pytest.raises(SpecError, match="phases"):
            MEBF(resize_at="phase", phases=bad)


def _costly(k: float) -> JobSpec:
    spec = JobSpec(
        1,
        0.0,
        work=100.0,
        nodes=8,
        kind=JobKind.MALLEABLE,
        min_nodes=4,
        max_nodes=8,
        reconfig=RedistributionCost(0.01, 0.04),
    )
    return scale_reconfig(spec, k)


def test_cost_scale_multiplies_the_redistribution_cost() -> None:
    # 8 -> 5: alpha * 3 + beta / 13 = 0.03 + 0.04 / 13 seconds, times the scale.
    one = 0.03 + 0.04 / 13
    assert _costly(1).reconfig.resize(8, 5) == pytest.approx(one)
    assert _costly(PAPER_COST_SCALE).reconfig.resize(8, 5) == pytest.approx(100 * one)
    assert _costly(0).reconfig.resize(8, 5) == 0
    with pytest.raises(SpecError, match="scale"):
        _costly(-1)
    # The cost delays the shrunk job by that much; the head still starts at once.
    _, t = run(MEBF(), [_costly(PAPER_COST_SCALE), rigid(2, 15, 10, 3)], 8)
    assert t[2] == (15, 25)
    assert t[1] == (0, pytest.approx(151 + 100 * one))


def test_model_runtime_is_the_power_law_from_one_node() -> None:
    # 100 s on 16 nodes with rho 0.25 is a load of T1 = 1600 s on one node; the model gives
    # T(16) = 1600 / 16**0.75 = 200 s, and T(8) = 1600 / 8**0.75.
    spec = JobSpec(
        1,
        0.0,
        work=100.0,
        nodes=16,
        walltime=150.0,
        kind=JobKind.MALLEABLE,
        min_nodes=8,
        max_nodes=32,
        speedup=PowerLaw(0.25),
    )
    paper = model_runtime(spec)
    assert paper.work == pytest.approx(200) and paper.walltime == pytest.approx(300)
    assert paper.runtime_at(8) == pytest.approx(1600 / 8**0.75)
    # EBF runs it at its preferred size: 200 s instead of 100 s.
    _, t = run(make("easy"), [paper], 16)
    assert t[1] == (0, pytest.approx(200))
    # A rigid job takes an explicit rho; rho 0 and a linear job stay as they are.
    rigid_spec = JobSpec(2, 0.0, work=10.0, nodes=4)
    assert model_runtime(rigid_spec).work == 10
    assert model_runtime(rigid_spec, rho=0.5).work == pytest.approx(20)
    with pytest.raises(SpecError, match="rho"):
        model_runtime(rigid_spec, rho=1.5)


def test_the_paper_check_gives_rigid_jobs_their_rho_too() -> None:
    from hpcgym.bench.papers.mebf import SET, Case, _model_runtimes
    from hpcgym.workloads import load

    kw = {"seed": 3, "n_jobs": 200, "scalability": "medium", "intensive": True}
    part = load(SET, malleable=0.4, **kw)
    full = load(SET, malleable=1.0, **kw)
    case = Case("ablation-40", 200, 3, True, "medium", 0.4, "easy", static="model")
    scaled = _model_runtimes(case, part.jobs)
    rigid_seen = 0
    for before, after, annotated in zip(part.jobs, scaled, full.jobs, strict=True):
        rho = annotated.speedup.rho if isinstance(annotated.speedup, PowerLaw) else 0.0
        if before.kind is JobKind.MALLEABLE:
            assert before.speedup == annotated.speedup  # the same draw whatever the share
        else:
            rigid_seen += rho > 0
        assert after.work == pytest.approx(before.work * before.nodes**rho)
    assert rigid_seen > 50
