"""DFRS schedulers on the engine: hand-computed timelines with the 300 s penalty."""

from __future__ import annotations

import pytest

from hpcgym.baselines.dfrs import DFRSScheduler, dfrs_setup
from hpcgym.errors import SpecError
from hpcgym.sim import EventType, JobSpec, Platform, SimConfig, Simulator


def job(jid: int, submit: float, work: float, mem: float, tasks: int = 1, cpu: float = 1.0):
    return JobSpec(jid, submit, work=work, nodes=tasks, cpu_need=cpu, mem=mem)


def run(name: str, jobs: list[JobSpec], nodes: int = 2) -> tuple[Simulator, DFRSScheduler]:
    specs, config = dfrs_setup(jobs, name)
    sim = Simulator(Platform.single(nodes, cores=4), specs, config)
    sched = DFRSScheduler(name)
    sched.run(sim)
    return sim, sched


def test_greedy_shares_a_node_with_maxmin_yields() -> None:
    # J1 on node 0; J2 on node 1 (less loaded); J3 (memory 0.6) only fits beside J2 (0.3).
    # Max-min: node 1 carries J2 and J3 at yield 1/2, J1 keeps yield 1.
    jobs = [job(1, 0, 1000, 0.6), job(2, 100, 300, 0.3), job(3, 200, 100, 0.6)]
    specs, config = dfrs_setup(jobs, "Greedy */opt=min")
    sim = Simulator(Platform.single(2), specs, config)
    sched = DFRSScheduler("Greedy */opt=min")
    while sim.advance():
        sched.schedule(sim)
        if sim.now == 200:
            assert sim.jobs[3].nodes.tolist() == [1]
            assert sim.jobs[1].yield_ == 1.0
            assert sim.jobs[2].yield_ == pytest.approx(0.5)
            assert sim.jobs[3].yield_ == pytest.approx(0.5)
    ends = {j: sim.jobs[j].end_time for j in (1, 2, 3)}
    # J3: 100 s of work at 1/2 -> 400. J2: 100 done by 200, 100 more by 400, last 100 alone.
    assert ends == pytest.approx({1: 1000.0, 2: 500.0, 3: 400.0})
    assert sim.result().summary["preemptions"] == 0


def test_greedy_queues_what_does_not_fit_until_a_completion() -> None:
    jobs = [job(1, 0, 1000, 0.6), job(2, 100, 300, 0.6), job(3, 200, 100, 0.6)]
    sim, _ = run("Greedy */opt=min", jobs)
    assert sim.jobs[3].start_time == 400.0 and sim.jobs[3].end_time == 500.0


def test_greedyp_pauses_the_lowest_priority_job_and_pays_the_penalty() -> None:
    # At 200, J3 needs a node. Priorities: J1 200/200^2 = 0.005 < J2 100/100^2 = 0.01: J1 is
    # paused; J3 runs on node 0 from 200 to 300; at 300 J1 resumes there, pays 300 s, and
    # finishes its last 800 s at 1400.
    jobs = [job(1, 0, 1000, 0.6), job(2, 100, 300, 0.6), job(3, 200, 100, 0.6)]
    sim, sched = run("GreedyP */opt=min", jobs)
    assert sim.jobs[3].start_time == 200.0 and sim.jobs[3].end_time == 300.0
    assert sim.jobs[1].end_time == pytest.approx(1400.0)
    assert sim.jobs[1].preemptions == 1 and sim.jobs[2].preemptions == 0
    assert sim.jobs[1].virtual_time == pytest.approx(1000.0)
    assert sched.stats.suspends == 1 and sched.stats.resumes == 1


def test_greedypm_moves_instead_of_pausing() -> None:
    # J1 on node 0, J2 on node 1 (memory 0.5 each). J3 (memory 0.9) needs a whole node's
    # memory: J1 (lowest priority) is marked, J3 goes on node 0, and J1 moves beside J2.
    jobs = [job(1, 0, 1000, 0.5), job(2, 10, 1000, 0.5), job(3, 100, 100, 0.9)]
    specs, config = dfrs_setup(jobs, "GreedyPM */opt=min")
    sim = Simulator(Platform.single(2), specs, config)
    sched = DFRSScheduler("GreedyPM */opt=min")
    while sim.advance():
        sched.schedule(sim)
        if sim.now == 100:
            assert sim.jobs[3].nodes.tolist() == [0]
            assert sim.jobs[1].nodes.tolist() == [1]
            assert sim.jobs[1].busy_until == 400.0
            assert sim.jobs[2].yield_ == pytest.approx(0.5)
    assert sim.jobs[3].end_time == 200.0
    assert sim.jobs[1].migrations == 1 and sim.jobs[1].preemptions == 0


def test_mcb8_on_submission_remaps_everything() -> None:
    # Two nodes; J1 and J2 (memory 0.5, full CPU) then J3 (memory 0.5). At Y = 1 three full
    # CPUs do not fit two nodes; at 1/2 the items (0.5, 0.5) pack in submission order: J1 and J2
    # share a bin, J3 has the other. The bins are named after the nodes holding most of their
    # tasks, yet J1 and J2 ran on different nodes: one of them migrates. Nothing is paused.
    jobs = [job(1, 0, 1000, 0.5), job(2, 0, 1000, 0.5), job(3, 100, 1000, 0.5)]
    specs, config = dfrs_setup(jobs, "MCB8 */opt=min")
    sim = Simulator(Platform.single(2), specs, config)
    sched = DFRSScheduler("MCB8 */opt=min")
    while sim.advance():
        sched.schedule(sim)
        if sim.now == 100:
            assert sorted(sim.node_cpu_used.tolist()) == pytest.approx([1.0, 1.0])
            assert sim.jobs[1].nodes.tolist() == sim.jobs[2].nodes.tolist()
            assert sim.jobs[1].migrations + sim.jobs[2].migrations == 1
            shares = [float(sim.jobs[j].cpu[0]) for j in (1, 2, 3)]
            assert shares == pytest.approx([0.5, 0.5, 1.0])
    assert sim.result().summary["preemptions"] == 0


def test_periodic_mcb8_ticks_and_minvt_pins_young_jobs() -> None:
    jobs = [job(1, 0, 5000, 0.3), job(2, 0, 5000, 0.3), job(3, 0, 5000, 0.3)]
    sim, _ = run("/per/opt=min/minvt=600", jobs, nodes=3)
    # Nothing runs before the first tick at 600; then one job per node, never moved again.
    assert {sim.jobs[j].start_time for j in (1, 2, 3)} == {600.0}
    assert sim.result().summary["migrations"] == 0
    assert all(sim.jobs[j].end_time == 5600.0 for j in (1, 2, 3))


def test_stretch_per_runs_to_completion() -> None:
    jobs = [job(1, 0, 3000, 0.6), job(2, 50, 600, 0.6), job(3, 70, 200, 0.3, tasks=2, cpu=0.25)]
    sim, _ = run("/stretch-per/opt=max", jobs, nodes=1)
    assert sim.done and sim.counts["completed"] == 3


@pytest.mark.parametrize(
    "name",
    [
        "Greedy */per/opt=avg/minft=300",
        "GreedyP/per/opt=min/minvt=300",
        "GreedyPM */per/opt=min/minvt=600",
        "MCB8 */per/opt=min",
        "MCB8/per/opt=avg/minvt=600",
    ],
)
def test_every_job_completes(name: str) -> None:
    jobs = [
        job(i, 37.0 * i, 200.0 + 97 * (i % 7), 0.1 * (1 + i % 9), tasks=1 + i % 3, cpu=1.0)
        for i in range(1, 25)
    ]
    sim, _ = run(name, jobs, nodes=4)
    assert sim.counts["completed"] == 24
    events = {e for e, _ in sim.happened}
    assert EventType.KILLED not in events


def test_setup_and_tick_check() -> None:
    from hpcgym.errors import SpecError
    from hpcgym.sim import FixedCost, SimConfig

    specs, config = dfrs_setup([job(1, 0, 100, 0.1)], "GreedyPM */per/opt=min/minvt=600")
    assert specs[0].reconfig == FixedCost(300.0)
    assert config.tick == 600.0 and not config.kill_on_walltime
    assert dfrs_setup(specs, "GreedyP */opt=min")[1].tick is None
    sim = Simulator(Platform.single(1), specs, SimConfig())
    with pytest.raises(SpecError, match="tick=600"):
        DFRSScheduler("/per/opt=min").run(sim)


# ----------------------------------------------------------------------------- penalty accounting
def _record(name: str, jobs: list[JobSpec], nodes: int, **kw: object):
    sched = DFRSScheduler(name, **kw)  # type: ignore[arg-type]
    specs, config = sched.setting(jobs, SimConfig())
    sim = Simulator(Platform.single(nodes, cores=4), specs, config)
    seen: dict[float, dict[int, list[int]]] = {}
    while sim.advance():
        sched.schedule(sim)
        seen[sim.now] = {j: job.nodes.tolist() for j, job in sim.running.items()}
    return sim, sched, seen


def test_a_penalty_on_the_nodes_holds_them_and_a_released_one_frees_them() -> None:
    # One node; A (memory 0.6, 1000 s) runs; B (0.6, 200 s) arrives at 100 with infinite
    # priority: A is paused; B ends at 300 and A is resumed.
    # hold: A sits on the node paying 300 s, so C (0.6, 50 s) arriving at 400 does not fit and
    # pauses A again (C outranks it) from 400; A resumes at 450, pays again, ends 750 + 900.
    # release: A is in transit from 300 to 600 holding nothing; C starts at 400 on the free node
    # and ends at 450; at 600 Greedy places A, whose resume is free: it ends 600 + 900 = 1500.
    jobs = [job(1, 0, 1000, 0.6), job(2, 100, 200, 0.6), job(3, 400, 50, 0.6)]
    sim, _, seen = _record("GreedyP */opt=min", jobs, 1)
    assert seen[300.0] == {1: [0]} and seen[400.0] == {3: [0]}
    assert sim.jobs[1].end_time == pytest.approx(1650.0) and sim.jobs[1].preemptions == 2
    sim, sched, seen = _record("GreedyP */opt=min", jobs, 1, penalty="release")
    assert seen[300.0] == {} and seen[400.0] == {3: [0]}
    assert {j: sim.jobs[j].end_time for j in (1, 2, 3)} == pytest.approx(
        {1: 1500.0, 2: 300.0, 3: 450.0}
    )
    assert sim.jobs[1].start_time == 0.0 and sim.jobs[1].preemptions == 1
    assert sched.stats.released_moves == 0


def test_a_released_migration_lands_wherever_greedy_finds_room() -> None:
    # A (memory 0.5) on node 0, B (0.5) on node 1; C (0.9) arrives at 100 and GreedyPM moves
    # A (lowest priority) beside B. Released, A leaves node 0 at once and B keeps node 1 to
    # itself; C ends at 200; at 400 A's transit ends and Greedy puts it on the least-loaded
    # node with room: node 0, not the node the move aimed at. A: 100 done, 900 left: ends 1300.
    jobs = [job(1, 0, 1000, 0.5), job(2, 10, 1000, 0.5), job(3, 100, 100, 0.9)]
    sim, sched, seen = _record("GreedyPM */opt=min", jobs, 2, penalty="release")
    assert seen[100.0] == {2: [1], 3: [0]}
    assert seen[400.0] == {1: [0], 2: [1]}
    assert {j: sim.jobs[j].end_time for j in (1, 2, 3)} == pytest.approx(
        {1: 1300.0, 2: 1010.0, 3: 200.0}
    )
    assert sched.stats.released_moves == 1
    assert sim.result().summary["migrations"] == 0  # the engine saw a suspension


def test_penalty_accounting_is_checked() -> None:
    with pytest.raises(SpecError):
        DFRSScheduler("GreedyP */opt=min", penalty="free")
    with pytest.raises(SpecError):
        DFRSScheduler("GreedyP */opt=min", penalty_seconds=-1.0)
