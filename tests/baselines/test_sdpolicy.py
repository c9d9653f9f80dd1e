"""SD-Policy on hand-computed worlds: exact starts, ends and CPU-share changes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.baselines.node_timeline import NodeTimeline
from hpcgym.baselines.sdpolicy.runtime import (
    RuntimeModel,
    model_rate,
    predicted_end,
    runtime_increase,
)
from hpcgym.baselines.sdpolicy.scheduler import SD_VARIANTS, SDPolicy, SDPolicyConfig
from hpcgym.errors import SpecError, WorkloadError
from hpcgym.sim import JobKind, JobSpec, Platform, SimConfig, Simulator

NO_KILL = SimConfig(kill_on_walltime=False)


def mall(i: int, submit: float, req: float, nodes: int, work: float | None = None) -> JobSpec:
    return JobSpec(
        i,
        submit,
        work=req if work is None else work,
        nodes=nodes,
        kind=JobKind.MALLEABLE,
        min_nodes=1,
        max_nodes=nodes,
        walltime=req,
    )


def rigid(i: int, submit: float, req: float, nodes: int) -> JobSpec:
    return JobSpec(i, submit, work=req, nodes=nodes, walltime=req)


def run(nodes: int, jobs: list[JobSpec], **kw: object) -> tuple[Simulator, SDPolicy, dict]:
    """Run SD-Policy; record every job's CPU shares after each decision point."""
    sim = Simulator(Platform.single(nodes), jobs, NO_KILL)
    pol = SDPolicy(**kw)  # type: ignore[arg-type]
    shares: dict[float, dict[int, tuple[float, ...]]] = {}
    while sim.advance():
        pol.schedule(sim)
        shares[sim.now] = {j: tuple(float(c) for c in job.cpu) for j, job in sim.running.items()}
    return sim, pol, shares


def times(sim: Simulator) -> dict[int, tuple[float, float]]:
    return {j: (job.start_time, job.end_time) for j, job in sim.jobs.items()}


def test_single_mate_coscheduling_and_expand_back() -> None:
    # t=10: job 2 cannot start (0 free). static_end = 100 + 20 = 120, mall_end = 10 + 40 = 50.
    # Mate 1: p = (100 + 20 - 0) / 100 = 1.2 < 10. Job 2 runs at 0.5 until 50; job 1 has done
    # 10 + 20 = 30 by then and needs 70 more at full speed: ends 120.
    sim, pol, shares = run(4, [mall(1, 0, 100, 4), mall(2, 10, 20, 4)])
    assert times(sim) == {1: (0.0, 120.0), 2: (10.0, 50.0)}
    assert pol.coscheduled == [(10.0, 2, (1,))]
    assert shares[10.0] == {1: (0.5,) * 4, 2: (0.5,) * 4}
    assert shares[50.0] == {1: (1.0,) * 4}
    assert not pol.guests and not pol.mate_of


def test_static_backfill_gives_the_easy_schedule() -> None:
    sim, pol, _ = run(4, [mall(1, 0, 100, 4), mall(2, 10, 20, 4)], coschedule=False)
    assert times(sim) == {1: (0.0, 100.0), 2: (100.0, 120.0)}
    assert pol.coscheduled == []


def test_easy_backfilling_rules() -> None:
    # Head job 2 reserves t=100 with 0 extra nodes; job 3 ends by 52 <= 100 and backfills;
    # job 4 would not fit now. Rigid jobs are never co-scheduled.
    jobs = [rigid(1, 0, 100, 2), rigid(2, 1, 50, 4), rigid(3, 2, 50, 2), rigid(4, 3, 200, 1)]
    for cs in (True, False):
        sim, pol, _ = run(4, jobs, coschedule=cs)
        assert times(sim) == {1: (0, 100), 2: (100, 150), 3: (2, 52), 4: (150, 350)}
        assert pol.coscheduled == []


def test_no_coscheduling_when_the_static_end_is_sooner() -> None:
    # t=50: static_end = 100 + 60 = 160, mall_end = 50 + 120 = 170: stays static.
    sim, pol, _ = run(4, [mall(1, 0, 100, 4), mall(2, 50, 60, 4)])
    assert times(sim) == {1: (0, 100), 2: (100, 160)}
    assert pol.coscheduled == []


def test_rigid_jobs_are_not_mates_and_sizes_must_sum_exactly() -> None:
    # Job 3 (4 nodes) could only pair rigid job 1 with malleable job 2: it waits for t=1000.
    jobs = [rigid(1, 0, 1000, 2), mall(2, 0, 100, 2), mall(3, 10, 30, 4)]
    sim, pol, _ = run(4, jobs)
    assert times(sim) == {1: (0, 1000), 2: (0, 100), 3: (1000, 1030)}
    assert pol.coscheduled == []


def test_two_mates_share_the_guest() -> None:
    # t=10: static_end = 300 + 40 = 340, mall_end = 90. Mates 1 and 2 (2 + 2 = 4 nodes),
    # p = 1.2 and 1.133. Job 1 has done 10 + 40 = 50 of 200 at t=90: ends 240. Job 2 has done
    # 50 of 300: ends 340.
    jobs = [mall(1, 0, 200, 2), mall(2, 0, 300, 2), mall(3, 10, 40, 4)]
    sim, pol, shares = run(4, jobs)
    assert times(sim) == {1: (0, 240), 2: (0, 340), 3: (10, 90)}
    assert pol.coscheduled == [(10.0, 3, (1, 2))]
    assert shares[10.0][3] == (0.5,) * 4
    assert shares[90.0] == {1: (1.0, 1.0), 2: (1.0, 1.0)}


def test_one_mate_beats_a_pair() -> None:
    # Job 4 (4 nodes, 20 s, +20 s for its mates) could pair 1 and 2 (p 1.1 + 1.1) or take 3
    # alone (p 420 / 400 = 1.05): takes 3.
    jobs = [mall(1, 0, 200, 2), mall(2, 0, 200, 2), mall(3, 0, 400, 4), mall(4, 10, 20, 4)]
    sim, pol, _ = run(8, jobs)
    assert pol.coscheduled == [(10.0, 4, (3,))]
    assert times(sim)[4] == (10, 50)


def test_guest_takes_the_cpu_of_a_mate_that_ends_first() -> None:
    # Job 1 requests 100 but works 25: at 0.5 from t=10 it ends at 40. The guest then has
    # 20 - 15 = 5 left at share 1: ends 45.
    sim, _pol, shares = run(4, [mall(1, 0, 100, 4, work=25), mall(2, 10, 20, 4)])
    assert times(sim) == {1: (0, 40), 2: (10, 45)}
    assert shares[40.0] == {2: (1.0,) * 4}


@pytest.mark.parametrize(("cutoff", "shared"), [(1.2, False), (1.21, True), (math.inf, True)])
def test_static_max_slowdown_cuts_off_strictly(cutoff: float, shared: bool) -> None:
    # The only mate's penalty is (100 + 20) / 100 = 1.2; it needs p < MAX_SLOWDOWN.
    sim, pol, _ = run(4, [mall(1, 0, 100, 4), mall(2, 10, 20, 4)], max_slowdown=cutoff)
    assert bool(pol.coscheduled) is shared
    assert times(sim)[2] == ((10, 50) if shared else (100, 120))


def _dynamic_world() -> list[JobSpec]:
    # Job 9 blocks the machine until 50; jobs 0 (rigid, 2 nodes, 20 s) and 1 (malleable, 4 nodes,
    # 100 s) start at 50. At t=60 their predicted slowdowns are 70/20 = 3.5 and 150/100 = 1.5.
    return [rigid(9, 0, 50, 6), rigid(0, 0, 20, 2), mall(1, 0, 100, 4), mall(2, 60, 20, 4)]


def test_dynamic_cutoff_is_the_mean_running_slowdown() -> None:
    # DynAVGSD = (3.5 + 1.5) / 2 = 2.5 > p(job 1) = (150 + 20) / 100 = 1.7: co-scheduled.
    sim, pol, _ = run(6, _dynamic_world(), max_slowdown="dynamic")
    assert pol.coscheduled == [(60.0, 2, (1,))]
    assert times(sim) == {9: (0, 50), 0: (50, 70), 1: (50, 170), 2: (60, 100)}
    # A static cut-off of 1.6 refuses the same mate: job 2 waits for job 1 (t=150).
    sim, pol, _ = run(6, _dynamic_world(), max_slowdown=1.6)
    assert pol.coscheduled == []
    assert times(sim)[2] == (150, 170)


def test_dynamic_cutoff_refuses_when_all_running_jobs_are_equal() -> None:
    # One running job: the mean is its own predicted slowdown 1.0 < its penalty 1.2.
    _sim, pol, _ = run(4, [mall(1, 0, 100, 4), mall(2, 10, 20, 4)], max_slowdown="dynamic")
    assert pol.coscheduled == []


def test_mate_must_outlast_the_guest() -> None:
    # A guest of 30 s runs 60 s at share 0.5; a mate must have >= 30 s of work left (done at
    # half speed in those 60 s) so that the guest ends first. Job 1 has 90 s left at t=10.
    sim, pol, _ = run(4, [mall(1, 0, 100, 4), mall(2, 10, 30, 4)])
    assert pol.coscheduled == [(10.0, 2, (1,))]
    assert times(sim) == {1: (0, 130), 2: (10, 70)}
    # A pair where job 1 has only 25 s left: no mates, job 3 waits for job 2 (t=400).
    jobs = [mall(1, 0, 35, 2), mall(2, 0, 400, 2), mall(3, 10, 30, 4)]
    sim, pol, _ = run(4, jobs)
    assert pol.coscheduled == []
    assert times(sim)[3] == (400, 430)


def test_runtime_models() -> None:
    cpu = np.array([1.0, 1.0, 0.5, 0.5])
    assert model_rate(cpu, 1.0, RuntimeModel.WORST) == 0.5
    assert model_rate(cpu, 1.0, RuntimeModel.IDEAL) == 0.75
    assert model_rate(np.array([0.25]), 0.5, RuntimeModel.WORST) == 0.5
    # Eq. 5/6 as the excess over the static time: 40 s at half speed add 40 s.
    assert runtime_increase([(60.0, 1.0), (40.0, 0.5)]) == 40.0
    assert runtime_increase([(30.0, 0.75)]) == pytest.approx(10.0)


def test_predicted_end_of_a_guest_with_one_mate_gone() -> None:
    # Guest 3 shares with mates 1 (2 nodes, ends by its work at 30) and 2. At t=30 the guest
    # holds shares (1, 1, .5, .5) and has done 10 of its 40 s: worst case 30 / 0.5 = 60 s
    # more, ideal 30 / 0.75 = 40 s.
    jobs = [mall(1, 0, 200, 2, work=20), mall(2, 0, 300, 2), mall(3, 10, 40, 4)]
    sim = Simulator(Platform.single(4), jobs, NO_KILL)
    pol = SDPolicy()
    while sim.advance():
        pol.schedule(sim)
        if sim.now == 30.0:
            break
    guest = sim.jobs[3]
    assert tuple(guest.cpu) == (1.0, 1.0, 0.5, 0.5)
    assert predicted_end(sim, guest, RuntimeModel.WORST) == 90.0
    assert predicted_end(sim, guest, RuntimeModel.IDEAL) == 70.0


def test_timeline() -> None:
    tl = NodeTimeline(5.0, 1, [(3.0, 1), (10.0, 2), (20.0, 1)])
    assert tl.free_at(5.0) == 2 and tl.free_at(10.0) == 4 and tl.free_at(25.0) == 5
    assert tl.earliest(3, 100.0) == 10.0
    tl.reserve(10.0, 30.0, 2)
    assert tl.earliest(3, 5.0) == 20.0
    assert tl.earliest(6, 1.0) == math.inf
    tl.release(10.0, 30.0, 2)
    assert tl.earliest(3, 5.0) == 10.0


def test_config_validation_and_presets() -> None:
    for bad in (
        {"max_slowdown": 1.0},
        {"max_slowdown": "avg"},
        {"sharing_factor": 1.0},
        {"max_mates": 3},
        {"runtime_model": "best"},
        {"map_depth": 0},
    ):
        with pytest.raises(SpecError):
            SDPolicyConfig(**bad)
    for kwargs in SD_VARIANTS.values():
        SDPolicy(**kwargs)
    with pytest.raises(SpecError):
        Simulator(Platform.multi([2, 2]), [mall(1, 0, 10, 2)]).run(SDPolicy())


def test_static_variant_matches_the_projects_easy_on_a_trace() -> None:
    from hpcgym.baselines import EasyBackfill
    from hpcgym.workloads import load, transforms

    w = transforms.first(load("swf/kth-sp2-v0"), 300)
    starts = []
    for sched in (SDPolicy(coschedule=False), EasyBackfill()):
        sim = Simulator(w.platform, w.jobs)
        sched.run(sim)
        starts.append([j.start_time for j in sim.jobs.values()])
    assert starts[0] == starts[1]


def test_coscheduling_on_a_malleable_trace_completes_every_job() -> None:
    from hpcgym.workloads import ElasticConfig, annotate_elastic, load, transforms

    w = annotate_elastic(transforms.first(load("swf/kth-sp2-v0"), 400), ElasticConfig(), 0)
    sim = Simulator(w.platform, w.jobs, NO_KILL)
    pol = SDPolicy(max_slowdown=math.inf)
    pol.run(sim)
    assert sim.counts["completed"] == len(w.jobs)
    assert pol.coscheduled and not pol.guests and not pol.mate_of


@pytest.mark.parametrize(
    ("model", "progress", "ends"),
    [
        # Worst case: from 30 the guest holds (1, 1, .5, .5) and runs at 0.5: 30 s of work
        # left take 60 s, so it ends at 90; mate 2 ran at 0.5 from 10 to 90 (40 s of work),
        # then 250 s at full speed: 340.
        ("worst", "worst", {1: (0, 30), 2: (0, 340), 3: (10, 90)}),
        # Ideal: the guest runs at the mean, 0.75, from 30: 30 / 0.75 = 40 s, ends at 70; mate 2
        # did 10 + 30 s of work by 70, then 260 s: 330.
        ("ideal", "mean", {1: (0, 30), 2: (0, 330), 3: (10, 70)}),
    ],
)
def test_the_engine_simulates_the_policys_runtime_model(
    model: str, progress: str, ends: dict[int, tuple[float, float]]
) -> None:
    # Guest 3 (4 nodes, 40 s) shares from 10 with mates 1 (2 nodes, works 20 s of its 200 s
    # request) and 2 (2 nodes, 300 s); mate 1 runs at 0.5 from 10 and ends at 30.
    jobs = [mall(1, 0, 200, 2, work=20), mall(2, 0, 300, 2), mall(3, 10, 40, 4)]
    assert SDPolicy(runtime_model=model).setting(jobs, SimConfig())[1].progress == "worst"
    pol = SDPolicy(runtime_model=model, simulate_model=True)
    jobs2, config = pol.setting(jobs, SimConfig())
    assert config.progress == progress and not config.kill_on_walltime
    sim = Simulator(Platform.single(4), jobs2, config)
    pol.run(sim)
    assert pol.coscheduled == [(10.0, 3, (1, 2))]
    assert times(sim) == ends


def test_the_paper_check_can_keep_the_primary_partition_alone() -> None:
    from hpcgym.bench.papers.sdpolicy import PRIMARY_NODES, partition
    from hpcgym.workloads import read_workload
    from hpcgym.workloads.registry import resolve_file
    from hpcgym.workloads.swf import COL

    w = read_workload(
        resolve_file("CEA-Curie-2011-sample.swf.gz"), procs_per_node=16, allocation="node"
    )
    p10 = partition(w, 10, PRIMARY_NODES)
    assert p10.platform.total_nodes == 5040 and w.platform.total_nodes == 5832
    assert len(p10) == int((w.rows[:, COL["partition"]] == 10).sum()) == 22187
    assert (p10.rows[:, COL["partition"]] == 10).all()
    kept = [j for j, r in zip(w.jobs, w.rows, strict=True) if r[COL["partition"]] == 10]
    assert list(p10.jobs) == kept  # the same jobs, submit times not re-based
    with pytest.raises(WorkloadError, match="need more than 100 nodes"):
        partition(w, 10, 100)
