"""Hand-computed MEBF schedules for each step, policy and variant.

Speedups are linear unless said otherwise, so a malleable job of work W at preferred size p
runs W * p / n seconds on n nodes. The runtime estimate is the work (no walltimes).
"""

from __future__ import annotations

import pytest
from baseline_helpers import malleable, rigid, run

from hpcgym.baselines import MEBF, make
from hpcgym.baselines.mebf.scheduler import MEBFConfig, scalability
from hpcgym.errors import SpecError
from hpcgym.sim import Amdahl, JobKind, JobSpec, PowerLaw


def sizes(sim, jid: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(largest size held, reconfigurations) of a job."""
    job = sim.jobs[jid]
    return job.max_size, job.reconfigurations


# --- step 1 and step 5: start down to the minimum, expand into idle nodes --------------------
# 8 nodes. J1 (rigid, 6 nodes) runs 0-10. J2 (malleable, W=12 at 4, range [2, 8]) starts at 0
# on the 2 free nodes (rate 0.5). At 10 the queue is empty and 6 nodes idle; J2 has done 5 of
# its 12 work-seconds, so 7 are left.
START_EXPAND = [rigid(1, 0, 10, 6), malleable(2, 0, 12, 4, 2, 8)]


@pytest.mark.parametrize(
    ("policy", "size_after", "end"),
    [
        # Handoff: GetResources gives 6 > 2 nodes held, so it expands to 8: 7 / 2 = 3.5 s.
        ("handoff", 8, 13.5),
        # Intensive: to the maximum the idle nodes allow, 8.
        ("intensive", 8, 13.5),
        # Spare: at most floor(0.5 * 6) = 3 nodes, and 3 > 0.5 * 2: to 5, 7 / 1.25 = 5.6 s.
        ("spare", 5, 15.6),
    ],
)
def test_start_at_what_fits_then_expand(policy: str, size_after: int, end: float) -> None:
    sim, t = run(MEBF(policy=policy), START_EXPAND, 8)  # type: ignore[arg-type]
    assert t[1] == (0, 10)
    assert t[2] == (0, pytest.approx(end))
    assert sizes(sim, 2) == (size_after, 1)


def test_handoff_needs_more_than_the_current_size() -> None:
    # J2's range is [2, 4]: GetResources gives 2 nodes, not more than the 2 it holds.
    jobs = [rigid(1, 0, 10, 6), malleable(2, 0, 12, 4, 2, 4)]
    sim, t = run(make("mebf-handoff"), jobs, 8)
    assert t[2] == (0, 24) and sizes(sim, 2) == (2, 0)
    # Intensive takes them: 7 left at rate 1 from 10.
    sim, t = run(make("mebf-intensive"), jobs, 8)
    assert t[2] == (0, 17) and sizes(sim, 2) == (4, 1)


def test_ebf_runs_the_same_jobs_rigidly() -> None:
    _, t = run(make("easy"), START_EXPAND, 8)
    assert t == {1: (0, 10), 2: (10, 22)}


# --- step 2: shrink when nothing is free -----------------------------------------------------
# 5 nodes. J1 (malleable, W=100 at 5, range [2, 5]) holds everything. J2 (rigid, 2 nodes, 5 s)
# arrives at 10. J1 gives floor(0.4 * 5) = 2 nodes: 3 left. Feasible: 90 s left > 0.5 * 100,
# and 10 + 90 * 5 / 3 = 160 <= 2 * 100.
def shrink_world(arrival: float = 10, cost: float = 0.0) -> list[JobSpec]:
    return [malleable(1, 0, 100, 5, 2, 5, cost=cost), rigid(2, arrival, 5, 2)]


def test_shrink_least_work_then_handoff_keeps_size() -> None:
    sim, t = run(make("mebf-handoff"), shrink_world(), 5)
    assert t[2] == (10, 15)
    # At 15: 2 idle nodes, not more than the 3 held: no expansion. 150 s at 3 nodes from 10.
    assert t[1] == (0, pytest.approx(160))
    assert sizes(sim, 1) == (5, 1)


def test_shrink_then_intensive_expands_back() -> None:
    sim, t = run(make("mebf-intensive"), shrink_world(), 5)
    # At 15 J1 has done 10 + 5 * 0.6 = 13: 87 s left at 5 nodes.
    assert t[2] == (10, 15)
    assert t[1] == (0, pytest.approx(102))
    assert sim.jobs[1].reconfigurations == 2


def test_shrink_with_reconfiguration_cost() -> None:
    # Cost 2 s per resize: J1 stalls on [10, 12] while J2 runs on the released nodes; then at
    # 15 it has done 10 + 3 * 0.6 = 11.8 and expands (stalls [15, 17]) to run 88.2 s at 5.
    sim, t = run(make("mebf-intensive"), shrink_world(cost=2.0), 5)
    assert t[2] == (10, 15)
    assert t[1] == (0, pytest.approx(17 + 88.2))
    assert sim.jobs[1].waste == pytest.approx(2 * 3 + 2 * 5)


def test_theta_blocks_a_shrink_late_in_the_run() -> None:
    # At 60, 40 s are left: not more than 0.5 * 100. J2 waits for J1's end.
    _, t = run(make("mebf"), shrink_world(arrival=60), 5)
    assert t == {1: (0, 100), 2: (100, 105)}


def test_gamma_blocks_a_costly_shrink() -> None:
    # A 60 s resize: 10 + 60 + 150 = 220 > 200.
    _, t = run(make("mebf"), shrink_world(cost=60.0), 5)
    assert t == {1: (0, 100), 2: (100, 105)}


def test_gamma_parameter() -> None:
    # With gamma 1.5 the plain shrink (160 > 150) is refused too.
    _, t = run(MEBF(gamma=1.5), shrink_world(), 5)
    assert t[2] == (100, 105)


def test_shrink_is_all_or_nothing() -> None:
    # J1 on 4 nodes can give floor(1.6) = 1 node; J2 needs 2: nothing is shrunk.
    jobs = [malleable(1, 0, 100, 4, 2, 4), rigid(2, 10, 5, 2)]
    sim, t = run(make("mebf"), jobs, 4)
    assert t == {1: (0, 100), 2: (100, 105)}
    assert sizes(sim, 1) == (4, 0)


def test_least_scalable_is_shrunk_first() -> None:
    # Two malleable jobs on 5 nodes each; J3 needs 2. J1 (rho 0.3) scales worse than J2 (0.05).
    jobs = [
        malleable(1, 0, 1000, 5, 2, 5, rho=0.3),
        malleable(2, 0, 1000, 5, 2, 5, rho=0.05),
        rigid(3, 10, 5, 2),
    ]
    sizes_at_11 = {}

    def probe(sim):  # type: ignore[no-untyped-def]
        if sim.now == 10:
            sizes_at_11.update({j: sim.jobs[j].size for j in (1, 2, 3)})

    run(make("mebf"), jobs, 10, after=probe)
    assert sizes_at_11 == {1: 3, 2: 5, 3: 2}


def test_a_job_is_shrunk_once_per_pass() -> None:
    # J1 (10 nodes) could release 4; J2 needs 6 and J1 is the only malleable job: the second
    # shrink J1 would need is not allowed in the same pass, so nothing is shrunk.
    jobs = [malleable(1, 0, 1000, 10, 2, 10), rigid(2, 10, 5, 6)]
    sim, t = run(make("mebf"), jobs, 10)
    assert sizes(sim, 1) == (10, 0)
    assert t[2] == (1000, 1005)


# --- step 3: EASY backfill with elastic start sizes ------------------------------------------
def test_backfill_at_an_elastic_size() -> None:
    # 8 nodes. J1 (rigid 6) runs 0-10; J2 (rigid 8) waits, shadow 10, no extra node.
    # J3 (W=8 at 4) on the 2 free nodes would end at 16 > 10: refused. J4 (W=4 at 4) on 2
    # nodes ends at 8: backfilled. J3 starts at its preferred 4 nodes when J2 ends.
    jobs = [
        rigid(1, 0, 10, 6),
        rigid(2, 0, 5, 8),
        malleable(3, 0, 8, 4, 1, 4),
        malleable(4, 0, 4, 4, 2, 4),
    ]
    mebf = make("mebf")
    sim, t = run(mebf, jobs, 8)
    assert t == {1: (0, 10), 2: (10, 15), 3: (15, 23), 4: (0, 8)}
    assert sizes(sim, 4) == (2, 0)
    assert mebf.stats["backfills"] == 1  # type: ignore[attr-defined]


# --- step 4: the variants --------------------------------------------------------------------
def test_shrink_plus_shrinks_although_nodes_are_free() -> None:
    # 6 nodes. J1 (W=100 at 5, [2, 5]) leaves 1 node free; J2 (rigid 3) arrives at 10 and
    # nothing backfills. Basic leaves the gap; shrink+ takes 2 nodes from J1 (to 3).
    jobs = [malleable(1, 0, 100, 5, 2, 5), rigid(2, 10, 5, 3)]
    _, t = run(make("mebf"), jobs, 6)
    assert t == {1: (0, 100), 2: (100, 105)}
    _, t = run(make("mebf-shrink+"), jobs, 6)
    assert t == {1: (0, pytest.approx(160)), 2: (10, 15)}


def test_expand_plus_expands_although_jobs_wait() -> None:
    # 6 nodes. J1 (rigid 4) runs 0-100; J2 (W=40 at 1, [1, 3]) starts on 1 node; J3 (rigid 6)
    # waits for J1. One node stays idle: expand+ (Intensive) gives it to J2 at 0.
    jobs = [rigid(1, 0, 100, 4), malleable(2, 0, 40, 1, 1, 3), rigid(3, 0, 10, 6)]
    _, t = run(make("mebf-intensive"), jobs, 6)
    assert t == {1: (0, 100), 2: (0, 40), 3: (100, 110)}
    sim, t = run(make("mebf-expand+", policy="intensive"), jobs, 6)
    assert t == {1: (0, 100), 2: (0, 20), 3: (100, 110)}
    assert sizes(sim, 2) == (2, 1)


# --- parts -----------------------------------------------------------------------------------
def test_scalability_measure() -> None:
    def spec(model, lo=2, hi=8):  # type: ignore[no-untyped-def]
        return JobSpec(
            1, 0, work=1, nodes=4, kind=JobKind.MALLEABLE, min_nodes=lo, max_nodes=hi, speedup=model
        )

    assert scalability(spec(PowerLaw(0.25))) == pytest.approx(0.75)
    assert scalability(spec(Amdahl(0.0))) == pytest.approx(1.0)
    assert 0 < scalability(spec(Amdahl(0.1))) < 1


def test_config_is_checked() -> None:
    assert MEBFConfig().share_factor == 0.4
    with pytest.raises(SpecError, match="variant"):
        MEBF(variant="fast")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="policy"):
        MEBF(policy="greedy")  # type: ignore[arg-type]


def test_registry_presets() -> None:
    assert make("mebf-spare").config.policy == "spare"  # type: ignore[attr-defined]
    assert make("mebf-shrink+").config.variant == "shrink+"  # type: ignore[attr-defined]
    assert make("mebf-expand+", policy="spare").config.policy == "spare"  # type: ignore[attr-defined]


def test_model_error_changes_the_shrink_order() -> None:
    # As test_least_scalable_is_shrunk_first, but MEBF believes J1 scales better than J2.
    jobs = [
        malleable(1, 0, 1000, 5, 2, 5, rho=0.3),
        malleable(2, 0, 1000, 5, 2, 5, rho=0.05),
        rigid(3, 10, 5, 2),
    ]
    seen = {}

    def probe(sim):  # type: ignore[no-untyped-def]
        if sim.now == 10:
            seen.update({j: sim.jobs[j].size for j in (1, 2)})

    run(MEBF(model={1: PowerLaw(0.0), 2: PowerLaw(0.4)}), jobs, 10, after=probe)
    assert seen == {1: 5, 2: 3}
