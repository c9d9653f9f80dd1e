"""Per-job and per-episode metrics on hand-computed worlds (tau = 10 s)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from hpcgym.sim import (
    FixedCost,
    JobKind,
    JobSpec,
    Platform,
    SimConfig,
    Simulator,
    bounded_slowdown,
)

REL = 1e-12


def _fcfs_world(build):
    # The FCFS world of test_engine_worlds: on 4 nodes,
    #   J1 2 nodes, 10 s, submit 0 -> runs 0..10
    #   J2 3 nodes,  5 s, submit 1 -> runs 10..15
    #   J3 1 node,   4 s, submit 2 -> runs 10..14
    #   J4 4 nodes,  2 s, submit 3 -> runs 15..17
    return [
        build.rigid(1, 0.0, 10.0, 2),
        build.rigid(2, 1.0, 5.0, 3),
        build.rigid(3, 2.0, 4.0, 1),
        build.rigid(4, 3.0, 2.0, 4),
    ]


def test_per_job_metrics(build, fcfs):
    # wait = start - submit, response = end - submit, run = end - start,
    # slowdown = response / max(run, 1), bsld = max(1, response / max(run, 10)),
    # stretch = response / work, bounded_stretch = max(response, 10) / max(work, 10).
    #   J1: wait 0,  response 10, run 10: slowdown 1,  bsld 1,   stretch 1,   bstretch 1
    #   J2: wait 9,  response 14, run 5:  slowdown 2.8, bsld 1.4, stretch 2.8, bstretch 1.4
    #   J3: wait 8,  response 12, run 4:  slowdown 3,  bsld 1.2, stretch 3,   bstretch 1.2
    #   J4: wait 12, response 14, run 2:  slowdown 7,  bsld 1.4, stretch 7,   bstretch 1.4
    sim, _ = fcfs(Platform.single(4), _fcfs_world(build))
    t = sim.result().jobs.set_index("id")
    expected = {
        "wait": [0, 9, 8, 12],
        "response": [10, 14, 12, 14],
        "run": [10, 5, 4, 2],
        "slowdown": [1, 2.8, 3, 7],
        "bsld": [1, 1.4, 1.2, 1.4],
        "stretch": [1, 2.8, 3, 7],
        "bounded_stretch": [1, 1.4, 1.2, 1.4],
        "waste": [0, 0, 0, 0],
        "reconfigurations": [0, 0, 0, 0],
        "preemptions": [0, 0, 0, 0],
        "migrations": [0, 0, 0, 0],
        "requested_nodes": [2, 3, 1, 4],
        "max_nodes_held": [2, 3, 1, 4],
    }
    for name, values in expected.items():
        np.testing.assert_allclose(t.loc[[1, 2, 3, 4], name].to_numpy(float), values, rtol=REL)
    assert list(t["state"]) == ["completed"] * 4
    assert list(t["kind"]) == ["rigid"] * 4


def test_episode_metrics(build, fcfs):
    # makespan = 17 - 0. Allocated CPU-s: 2x10 + 3x5 + 1x4 + 4x2 = 47, all of it progress.
    # Capacity x makespan = 4 x 17 = 68: utilization = effective utilization = 47/68.
    # Energy = 100 W x 68 node-s + (250 - 100) W x 47 = 13850 J.
    # Underutilization, integral of min(4, demand) - useful (demand = nodes of queued and
    # running jobs): [1,2) min(4,5) - 2 = 2; [2,3) min(4,6) - 2 = 2; [3,10) 4 - 2 = 2 for 7 s;
    # [14,15) min(4, 3+4) - 3 = 1; zero elsewhere -> 19 CPU-s, over 47 of work: 19/47.
    sim, _ = fcfs(Platform.single(4), _fcfs_world(build))
    s = sim.result().summary
    assert s["makespan"] == 17.0
    assert s["utilization"] == pytest.approx(47 / 68, rel=REL)
    assert s["effective_utilization"] == pytest.approx(47 / 68, rel=REL)
    assert s["energy"] == pytest.approx(13850.0, rel=REL)
    assert s["normalized_underutilization"] == pytest.approx(19 / 47, rel=REL)
    assert (s["jobs"], s["completed"], s["killed"], s["rejected"]) == (4.0, 4.0, 0.0, 0.0)
    assert s["mean_wait"] == pytest.approx(29 / 4, rel=REL) and s["max_wait"] == 12.0
    assert s["mean_bsld"] == pytest.approx(5 / 4, rel=REL) and s["max_bsld"] == 1.4
    assert s["mean_slowdown"] == pytest.approx(13.8 / 4, rel=REL) and s["max_slowdown"] == 7.0
    assert s["mean_response"] == pytest.approx(50 / 4, rel=REL)
    assert s["mean_run"] == pytest.approx(21 / 4, rel=REL) and s["max_run"] == 10.0
    assert s["mean_waste"] == 0.0


def test_power_model_is_configurable(build, fcfs):
    # Same world, idle 50 W, busy 300 W: 50 x 68 + 250 x 47 = 15150 J.
    sim, _ = fcfs(
        Platform.single(4), _fcfs_world(build), SimConfig(idle_power=50.0, busy_power=300.0)
    )
    assert sim.result().summary["energy"] == pytest.approx(15150.0, rel=REL)


def test_bsld_tau_is_configurable(build, fcfs):
    # tau = 2: J2 bsld = 14 / max(5, 2) = 2.8; J4 = 14 / max(2, 2) = 7; J1 stays 1.
    sim, _ = fcfs(Platform.single(4), _fcfs_world(build), SimConfig(bsld_tau=2.0))
    t = sim.result().jobs.set_index("id")
    np.testing.assert_allclose(t.loc[[1, 2, 3, 4], "bsld"], [1, 2.8, 3, 7], rtol=REL)
    np.testing.assert_allclose(t.loc[[1, 2, 3, 4], "bounded_stretch"], [1, 2.8, 3, 7], rtol=REL)


def test_bounded_slowdown_function():
    wait = np.array([0.0, 9.0, 5.0, 0.0])
    run = np.array([10.0, 5.0, 20.0, 0.0])
    # max(1, (w+r)/max(r, 10)): 1, 14/10, 25/20, max(1, 0/10) = 1.
    np.testing.assert_allclose(bounded_slowdown(wait, run), [1.0, 1.4, 1.25, 1.0], rtol=REL)
    np.testing.assert_allclose(bounded_slowdown(wait, run, tau=5.0), [1.0, 2.8, 1.25, 1.0])


def _malleable_run(build) -> Simulator:
    # The FixedCost(5) malleable world of test_engine_worlds: J1 (100 s at 2 nodes) runs
    # 0..10 on 2 nodes, reconfigures 10..15 on 1, runs 15..30 on 1, reconfigures 30..35 on 4,
    # runs 35..76.25 on 4. J2 (3 nodes) runs 10..30.
    jobs = [
        build.malleable(1, 0.0, 100.0, 2, 1, 4, reconfig=FixedCost(5.0)),
        build.rigid(2, 10.0, 20.0, 3),
    ]
    sim = Simulator(Platform.single(4), jobs)
    while sim.advance():
        if sim.now == 0.0:
            sim.start(1)
        elif sim.now == 10.0:
            sim.shrink(1, 1)
            sim.start(2)
        elif sim.now == 30.0:
            sim.expand(1, 4)
    return sim


def test_utilization_counts_reconfiguration_as_allocated_not_useful(build):
    # Allocated: 2x10 + 4x5 + 4x15 + 4x5 + 4x41.25 = 285 CPU-s. Useful (progress): the same
    # minus the reconfigurations (1x5 and 4x5): 260. Capacity x makespan = 4 x 76.25 = 305.
    # Energy = 100 x 305 + 150 x 285 = 73250 J. Waste 25 CPU-s, 2 reconfigurations.
    sim = _malleable_run(build)
    s = sim.result().summary
    assert s["makespan"] == 76.25
    assert s["utilization"] == pytest.approx(285 / 305, rel=REL)
    assert s["effective_utilization"] == pytest.approx(260 / 305, rel=REL)
    assert s["energy"] == pytest.approx(73250.0, rel=REL)
    assert s["reconfigurations"] == 2.0
    assert s["mean_waste"] == pytest.approx(25 / 2, rel=REL) and s["max_waste"] == 25.0
    # J1: response 76.25, run 76.25, stretch 76.25 / 100.
    row = sim.result().jobs.set_index("id").loc[1]
    assert row["stretch"] == pytest.approx(0.7625, rel=REL)
    assert row["bsld"] == 1.0


def test_underutilization_with_a_resized_job(build):
    # DFRS: integral of min(capacity, demand) - useful over the workload's work. A job's demand
    # is max(requested, held) x cpu_need (found by this suite: counting only the requested
    # size made this negative; fixed in e58a149). J1 requests 2, J2 3; capacity 4.
    #   0..10   J1 holds 2:                   min(4, 2) - 2 = 0
    #   10..15  J1 1 reconfiguring, J2 3:     min(4, 2 + 3) - 3 = 1  -> 5
    #   15..30  both progress:                min(4, 5) - 4 = 0
    #   30..35  J1 4 reconfiguring:           min(4, 4) - 0 = 4  -> 20
    #   35..76.25 J1 4 progressing:           4 - 4 = 0
    # 25 CPU-s over 100 x 2 + 20 x 3 = 260 CPU-s of work.
    sim = _malleable_run(build)
    assert sim.result().summary["normalized_underutilization"] == pytest.approx(25 / 260, rel=REL)


def test_outcomes_are_all_counted(build, fcfs):
    # 2 nodes: J1 killed at its walltime (20), J2 completes, J3 is rejected (3 nodes), J4 runs
    # 20..25 after the kill. completed + killed + rejected == submitted == 4.
    jobs = [
        build.rigid(1, 0.0, 30.0, 1, walltime=20.0),
        build.rigid(2, 0.0, 10.0, 1),
        build.rigid(3, 0.0, 10.0, 3),
        build.rigid(4, 0.0, 5.0, 2),
    ]
    sim, _ = fcfs(Platform.single(2), jobs)
    c = sim.counts
    assert c["completed"] + c["killed"] + c["rejected"] == c["submitted"] == c["total"] == 4
    assert (c["completed"], c["killed"], c["rejected"]) == (2, 1, 1)
    res = sim.result()
    t = res.jobs.set_index("id")
    assert list(t["state"]) == ["killed", "completed", "rejected", "completed"]
    # The killed job's row: run 20, response 20; the rejected one has no start, wait or run.
    assert (t.loc[1, "run"], t.loc[1, "response"]) == (20.0, 20.0)
    assert all(math.isnan(t.loc[3, c]) for c in ("start", "wait", "run", "bsld", "stretch"))
    # Means are over started jobs: waits 0, 0, 20 -> 20/3; the rejected job is left out.
    assert res.summary["mean_wait"] == pytest.approx(20 / 3, rel=REL)
    assert (res.summary["killed"], res.summary["rejected"]) == (1.0, 1.0)
    assert res.summary["makespan"] == 25.0


def test_zero_work_job_gives_no_numpy_warning(build, fcfs):
    # Found by this suite (metrics silenced only invalid-value warnings); fixed in the engine.
    # A zero-work job waits 5 s behind another: response 5, work 0. Its stretch is infinite
    # (5 / 0) and its bounded stretch max(5, 10) / max(0, 10) = 1; neither should warn.
    jobs = [build.rigid(1, 0.0, 5.0, 1), build.rigid(2, 0.0, 0.0, 1)]
    sim, _ = fcfs(Platform.single(1), jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = sim.result().jobs.set_index("id")
    assert table.loc[2, "bounded_stretch"] == 1.0


def test_rejected_row_has_no_times(build, fcfs):
    # The metrics docstring: rejected jobs have NaN times (found by this suite, fixed in f879c37).
    sim, _ = fcfs(Platform.single(1), [build.rigid(1, 0.0, 1.0, 1), build.rigid(2, 3.0, 1.0, 2)])
    row = sim.result().jobs.set_index("id").loc[2]
    assert row["state"] == "rejected"
    assert all(math.isnan(row[c]) for c in ("start", "end", "wait", "response", "run"))


def _evolving_run(build, fcfs):
    # The evolving world of test_engine_worlds on 4 nodes: J1 steps (10 s, 1), (20 s, 3),
    # (5 s, 2); J2 rigid 3 nodes x 15 s. J1 runs 0..10 on 1 node, waits 10..15 holding 1,
    # runs 15..35 on 3 and 35..40 on 2; J2 runs 0..15.
    jobs = [build.evolving(1, 0.0, [(10.0, 1), (20.0, 3), (5.0, 2)]), build.rigid(2, 0.0, 15.0, 3)]
    sim, _ = fcfs(Platform.single(4), jobs)
    return sim


def test_episode_metrics_with_an_evolving_job(build, fcfs):
    # Allocated: 4 x 10 + 4 x 5 + 3 x 20 + 2 x 5 = 130 CPU-s; progress: the same minus the
    # 1 x 5 held while waiting = 125. Capacity x makespan = 4 x 40 = 160.
    # Energy = 100 x 160 + 150 x 130 = 35500 J.
    s = _evolving_run(build, fcfs).result().summary
    assert s["makespan"] == 40.0
    assert s["utilization"] == pytest.approx(130 / 160, rel=REL)
    assert s["effective_utilization"] == pytest.approx(125 / 160, rel=REL)
    assert s["energy"] == pytest.approx(35500.0, rel=REL)
    assert s["mean_waste"] == pytest.approx(5 / 2, rel=REL)


def test_underutilization_normalizes_by_evolving_steps_work(build, fcfs):
    # Found by this suite (the first step's size was used for every step); fixed in f879c37.
    # Underutilization: only 10..15 counts, J1 waiting (demand max(3 requested, 1 held) = 3)
    # plus J2's 3 -> min(4, 6) - 3 useful = 1 for 5 s = 5 CPU-s. The workload's CPU-seconds:
    # J1 10 x 1 + 20 x 3 + 5 x 2 = 80, J2 15 x 3 = 45 -> 125. Normalized: 5 / 125.
    sim = _evolving_run(build, fcfs)
    assert sim.underutilization == pytest.approx(5.0, rel=REL)
    assert sim.result().summary["normalized_underutilization"] == pytest.approx(5 / 125, rel=REL)


def test_share_above_need_is_allocated_but_not_useful(build, drive_sim):
    # cpu_need 0.5 given a whole node for 10 s: allocated 10 CPU-s, useful 5 CPU-s over a
    # 1-node x 10 s capacity. Demand 0.5 is fully served: no underutilization.
    sim = Simulator(Platform.single(1), [build.rigid(1, 0.0, 10.0, 1, cpu_need=0.5)])
    drive_sim(sim, {0.0: lambda s: s.start(1, nodes=[0], cpu=1.0)})
    s = sim.result().summary
    assert sim.jobs[1].end_time == 10.0
    assert (s["utilization"], s["effective_utilization"]) == (1.0, 0.5)
    assert s["normalized_underutilization"] == 0.0
    assert s["energy"] == pytest.approx(100 * 10 + 150 * 10, rel=REL)


@pytest.mark.parametrize("explicit", [False, True], ids=["automatic", "explicit nodes"])
def test_moldable_above_requested_size_is_not_negative_underutilization(build, drive_sim, explicit):
    # Moldable 40 s at 2 nodes started on all 4 (rate 2, 20 s): its demand is what it holds,
    # 4, fully used -> underutilization 0 (not 2 - 4 < 0), whichever start path is taken.
    sim = Simulator(Platform.single(4), [build.moldable(1, 0.0, 40.0, 2, 1, 4)])
    kw = {"nodes": [0, 1, 2, 3]} if explicit else {}
    drive_sim(sim, {0.0: lambda s: s.start(1, 4, **kw)})
    assert sim.jobs[1].end_time == 20.0
    assert sim.result().summary["normalized_underutilization"] == 0.0


def test_lost_work_is_the_progress_of_killed_jobs_in_cpu_seconds() -> None:
    # 4 nodes. J1: rigid, 2 tasks, 30 s, walltime 20 -> killed at 20 having done 20 s x 2 tasks.
    # J2: evolving, steps (10 s x 1 task, 10 s x 2 tasks), walltime 15, granted at once -> killed
    # at 15: 10 x 1 + 5 x 2 = 20 CPU-s.
    jobs = [
        JobSpec(1, 0.0, work=30.0, nodes=2, walltime=20.0),
        JobSpec(
            2,
            0.0,
            work=0.0,
            nodes=1,
            kind=JobKind.EVOLVING,
            evolution=((10.0, 1), (10.0, 2)),
            walltime=15.0,
        ),
    ]
    sim = Simulator(Platform.single(4), jobs)
    while sim.advance():
        for job_id in list(sim.queue):
            sim.start(job_id)
        for job in list(sim.running.values()):
            if job.request:
                sim.grant(job.id)
    res = sim.result()
    lost = dict(zip(res.columns["id"].tolist(), res.columns["lost_work"].tolist(), strict=True))
    assert lost == {1: 40.0, 2: 20.0}
    assert res.summary["lost_work"] == 60.0
    # The workload's CPU-seconds: 30 x 2 + (10 x 1 + 10 x 2) = 90.
    assert sim.total_demand_work == 90.0
    assert res.summary["normalized_lost_work"] == pytest.approx(60.0 / 90.0)


def test_completed_jobs_lose_no_work() -> None:
    sim = Simulator(Platform.single(2), [JobSpec(1, 0.0, work=5.0, nodes=2, walltime=10.0)])
    while sim.advance():
        for job_id in list(sim.queue):
            sim.start(job_id)
    res = sim.result()
    assert res.columns["lost_work"].tolist() == [0.0]
    assert (res.summary["lost_work"], res.summary["normalized_lost_work"]) == (0.0, 0.0)
