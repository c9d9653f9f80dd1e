"""Every refused command: the right error class, a message naming the job, and no change at all.

The refusal world (built fresh for every case) is a decision point at t = 0 on two clusters,
cluster 0 = nodes 0-3 and cluster 1 = nodes 4-5:

- 11 rigid, 1 node, memory 0.6, co-scheduled on node 0 at share 0.5 (rate 1/2)
- 24 rigid, 1 node, on node 0 at share 0.25 -> node 0 uses CPU 0.75 and memory 0.6
- 12 malleable 2 tasks, sizes 1, 2, 4 (power of two), running on nodes [1, 2]
- 13 malleable 1 task, sizes 1..2, FixedCost(50): started on [4] and expanded onto [5],
  so it is reconfiguring until t = 50 and cluster 1 is full
- 21 rigid, 1 node, started on node 3 and suspended: node 3 is idle
- 22 rigid, no work, completed at t = 0
- 14 moldable, sizes 1, 2, 4 (power of two), queued
- 15 moldable, sizes 2, 4, 6 (multiple of 2), queued
- 16 evolving (1 then 2 tasks), queued
- 17 rigid, 1 node, memory 0.5, queued
- 19 rigid, 2 nodes, queued
- 23 malleable, sizes 1..4, queued
- 18 rigid, submitted at t = 1000 (pending)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable

import pytest

from hpcgym.errors import CapacityError, CommandError, JobStateError, SizeError, SpecError
from hpcgym.sim import FixedCost, JobSpec, JobState, Platform, SimConfig, Simulator, SizeRule


def refusal_world(build) -> Simulator:
    p2 = SizeRule.POWER_OF_TWO
    jobs = [
        build.rigid(11, 0.0, 100.0, 1, mem=0.6),
        build.rigid(24, 0.0, 100.0, 1),
        build.malleable(12, 0.0, 100.0, 2, 1, 4, size_rule=p2),
        build.malleable(13, 0.0, 100.0, 1, 1, 2, reconfig=FixedCost(50.0)),
        build.rigid(21, 0.0, 100.0, 1),
        build.rigid(22, 0.0, 0.0, 1),
        build.moldable(14, 0.0, 100.0, 2, 1, 4, size_rule=p2),
        build.moldable(15, 0.0, 100.0, 2, 2, 6, size_rule=SizeRule.MULTIPLE, size_multiple=2),
        build.evolving(16, 0.0, [(10.0, 1), (10.0, 2)]),
        build.rigid(17, 0.0, 100.0, 1, mem=0.5),
        build.rigid(19, 0.0, 100.0, 2),
        build.malleable(23, 0.0, 100.0, 2, 1, 4),
        build.rigid(18, 1000.0, 100.0, 1),
    ]
    sim = Simulator(Platform.multi([4, 2]), jobs)
    assert sim.advance() and sim.now == 0.0
    sim.start(22, nodes=[3])
    assert sim.advance() and sim.now == 0.0  # 22 completes at once
    sim.start(11, nodes=[0], cpu=0.5)
    sim.start(24, nodes=[0], cpu=0.25)
    sim.start(12)
    sim.start(13, cluster=1)
    sim.expand(13, 2)
    sim.start(21, nodes=[3])
    sim.suspend(21)
    assert sim.jobs[12].nodes.tolist() == [1, 2]
    assert sim.jobs[13].state is JobState.RECONFIGURING
    assert sim.jobs[22].state is JobState.COMPLETED
    assert sim.node_cpu_used.tolist() == [0.75, 1.0, 1.0, 0.0, 1.0, 1.0]
    return sim


Case = tuple[str, Callable[[Simulator], object], type[Exception], int]

CASES: list[Case] = [
    # start
    ("start unknown id", lambda s: s.start(99), CommandError, 99),
    ("start running", lambda s: s.start(12), JobStateError, 12),
    ("start reconfiguring", lambda s: s.start(13), JobStateError, 13),
    ("start pending", lambda s: s.start(18), JobStateError, 18),
    ("start completed", lambda s: s.start(22), JobStateError, 22),
    ("start suspended", lambda s: s.start(21), JobStateError, 21),
    ("start rigid at other size", lambda s: s.start(17, 2), SizeError, 17),
    ("start evolving at other size", lambda s: s.start(16, 2), SizeError, 16),
    ("start below min", lambda s: s.start(15, 1), SizeError, 15),
    ("start above max", lambda s: s.start(14, 8), SizeError, 14),
    ("start breaking power of two", lambda s: s.start(14, 3), SizeError, 14),
    ("start breaking multiple of 2", lambda s: s.start(15, 3), SizeError, 15),
    ("start zero size", lambda s: s.start(14, 0), SizeError, 14),
    ("start without idle nodes", lambda s: s.start(19), CapacityError, 19),
    ("start on a full cluster", lambda s: s.start(17, cluster=1), CapacityError, 17),
    ("start on no such cluster", lambda s: s.start(17, cluster=5), CommandError, 17),
    ("start onto a busy node", lambda s: s.start(17, nodes=[1]), CapacityError, 17),
    ("start over CPU by share", lambda s: s.start(17, nodes=[0], cpu=0.5), CapacityError, 17),
    ("start over memory", lambda s: s.start(17, nodes=[0], cpu=0.25), CapacityError, 17),
    ("start two whole tasks on a node", lambda s: s.start(19, nodes=[3, 3]), CapacityError, 19),
    ("start spanning clusters", lambda s: s.start(19, nodes=[3, 4]), CommandError, 19),
    ("start on a node out of range", lambda s: s.start(17, nodes=[6]), CommandError, 17),
    ("start on a negative node", lambda s: s.start(17, nodes=[-1]), CommandError, 17),
    ("start with too few nodes", lambda s: s.start(19, nodes=[3]), SizeError, 19),
    ("start per-task shares, no nodes", lambda s: s.start(17, cpu=[0.5]), CommandError, 17),
    ("start zero share", lambda s: s.start(17, cpu=0.0), CommandError, 17),
    ("start share above 1", lambda s: s.start(17, cpu=1.5), CommandError, 17),
    ("start explicit share above 1", lambda s: s.start(17, nodes=[3], cpu=1.5), CommandError, 17),
    # resize, shrink, expand
    ("resize unknown id", lambda s: s.resize(99, 1), CommandError, 99),
    ("resize rigid", lambda s: s.resize(11, 2), JobStateError, 11),
    ("shrink rigid", lambda s: s.shrink(11, 0), JobStateError, 11),
    ("resize queued moldable", lambda s: s.resize(14, 1), JobStateError, 14),
    ("resize queued malleable", lambda s: s.resize(23, 1), JobStateError, 23),
    ("expand queued malleable", lambda s: s.expand(23, 3), JobStateError, 23),
    ("resize reconfiguring", lambda s: s.resize(13, 1), JobStateError, 13),
    ("resize suspended rigid", lambda s: s.resize(21, 2), JobStateError, 21),
    ("resize to same size", lambda s: s.resize(12, 2), SizeError, 12),
    ("resize breaking power of two", lambda s: s.resize(12, 3), SizeError, 12),
    ("resize above max", lambda s: s.resize(12, 8), SizeError, 12),
    ("resize to zero", lambda s: s.resize(12, 0), SizeError, 12),
    ("shrink to a larger size", lambda s: s.shrink(12, 4), SizeError, 12),
    ("expand to a smaller size", lambda s: s.expand(12, 1), SizeError, 12),
    ("expand without room", lambda s: s.expand(12, 4), CapacityError, 12),
    ("expand onto busy nodes", lambda s: s.expand(12, 4, nodes=[0, 3]), CapacityError, 12),
    ("expand spanning clusters", lambda s: s.expand(12, 4, nodes=[3, 4]), CommandError, 12),
    ("expand too few nodes", lambda s: s.expand(12, 4, nodes=[3]), SizeError, 12),
    ("shrink releasing a foreign node", lambda s: s.shrink(12, 1, release=[0]), CommandError, 12),
    ("shrink releasing too many", lambda s: s.shrink(12, 1, release=[1, 2]), SizeError, 12),
    ("shrink given nodes", lambda s: s.resize(12, 1, nodes=[1]), CommandError, 12),
    ("expand given release", lambda s: s.resize(12, 4, release=[1]), CommandError, 12),
    # grant
    ("grant unknown id", lambda s: s.grant(99), CommandError, 99),
    ("grant without request", lambda s: s.grant(12), JobStateError, 12),
    ("grant queued evolving", lambda s: s.grant(16), JobStateError, 16),
    # suspend
    ("suspend unknown id", lambda s: s.suspend(99), CommandError, 99),
    ("suspend queued", lambda s: s.suspend(14), JobStateError, 14),
    ("suspend suspended", lambda s: s.suspend(21), JobStateError, 21),
    ("suspend completed", lambda s: s.suspend(22), JobStateError, 22),
    ("suspend pending", lambda s: s.suspend(18), JobStateError, 18),
    # resume
    ("resume unknown id", lambda s: s.resume(99), CommandError, 99),
    ("resume running", lambda s: s.resume(12), JobStateError, 12),
    ("resume queued", lambda s: s.resume(14), JobStateError, 14),
    ("resume on a full cluster", lambda s: s.resume(21, cluster=1), CapacityError, 21),
    ("resume onto a busy node", lambda s: s.resume(21, nodes=[1]), CapacityError, 21),
    ("resume with too many nodes", lambda s: s.resume(21, nodes=[3, 3]), SizeError, 21),
    # migrate
    ("migrate unknown id", lambda s: s.migrate(99, [3]), CommandError, 99),
    ("migrate queued", lambda s: s.migrate(14, [3, 3]), JobStateError, 14),
    ("migrate suspended", lambda s: s.migrate(21, [3]), JobStateError, 21),
    ("migrate reconfiguring", lambda s: s.migrate(13, [1, 2]), JobStateError, 13),
    ("migrate onto a busy node", lambda s: s.migrate(12, [0, 3]), CapacityError, 12),
    ("migrate spanning clusters", lambda s: s.migrate(12, [3, 4]), CommandError, 12),
    ("migrate with too few nodes", lambda s: s.migrate(12, [3]), SizeError, 12),
    ("migrate out of range", lambda s: s.migrate(12, [3, 9]), CommandError, 12),
    # Issue 39, L5: a move onto the nodes a job holds moves nothing (it was counted).
    ("migrate onto its own nodes", lambda s: s.migrate(12, [1, 2]), CommandError, 12),
    ("migrate onto its own nodes reordered", lambda s: s.migrate(12, [2, 1]), CommandError, 12),
    (
        "migrate onto its own node, new share",
        lambda s: s.migrate(11, [0], cpu=0.25),
        CommandError,
        11,
    ),
    # set_shares
    ("set_shares unknown id", lambda s: s.set_shares(99, 0.5), CommandError, 99),
    ("set_shares queued", lambda s: s.set_shares(14, 0.5), JobStateError, 14),
    ("set_shares suspended", lambda s: s.set_shares(21, 0.5), JobStateError, 21),
    ("set_shares over CPU", lambda s: s.set_shares(11, 0.8), CapacityError, 11),
    ("set_shares zero", lambda s: s.set_shares(12, [1.0, 0.0]), CommandError, 12),
    ("set_shares above 1", lambda s: s.set_shares(12, 1.5), CommandError, 12),
    # reject
    ("reject unknown id", lambda s: s.reject(99), CommandError, 99),
    ("reject running", lambda s: s.reject(12), JobStateError, 12),
    ("reject suspended", lambda s: s.reject(21), JobStateError, 21),
    ("reject completed", lambda s: s.reject(22), JobStateError, 22),
    # Found by this suite and fixed in the engine (e58a149): state is checked before size,
    # per-task share lists must match the task count, and NaN shares are refused.
    ("shrink queued malleable", lambda s: s.shrink(23, 1), JobStateError, 23),
    ("start shares wrong count", lambda s: s.start(17, nodes=[3], cpu=[0.5] * 2), CommandError, 17),
    ("set_shares wrong count", lambda s: s.set_shares(12, [0.5] * 3), CommandError, 12),
    ("start NaN share", lambda s: s.start(17, nodes=[3], cpu=float("nan")), CommandError, 17),
    ("set_shares NaN", lambda s: s.set_shares(12, float("nan")), CommandError, 12),
    ("start auto NaN share", lambda s: s.start(17, cpu=float("nan")), CommandError, 17),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in CASES])
def test_refused_command_changes_nothing(build, state, case: Case):
    _, command, error, job_id = case
    sim = refusal_world(build)
    before = state.snapshot(sim)
    with pytest.raises(CommandError) as info:
        command(sim)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert re.search(rf"\b{job_id}\b", str(info.value)), str(info.value)
    after = state.snapshot(sim)
    assert state.same(before, after), {
        k: (before[k], after[k]) for k in before if not state.same(before[k], after[k])
    }
    state.check(sim)


def test_the_refusal_world_still_runs_to_the_end(build, state):
    # After a refusal the simulation goes on normally: every refused case above leaves a
    # world that a simple scheduler can still finish.
    sim = refusal_world(build)
    for _, command, _, _ in CASES:
        try:
            command(sim)
        except CommandError:
            pass
        else:  # pragma: no cover - a case that is not refused is a test bug
            pytest.fail("a refusal case was accepted")
    while True:
        for jid in list(sim.suspended):
            with contextlib.suppress(CapacityError):
                sim.resume(jid)
        for job in list(sim.running.values()):
            if job.request:
                with contextlib.suppress(CapacityError):
                    sim.grant(job.id)
        for jid in list(sim.queue):
            with contextlib.suppress(CapacityError):
                sim.start(jid, sim.jobs[jid].spec.min_nodes)
        state.check(sim)
        if not sim.advance():
            break
    c = sim.counts
    assert c["completed"] == 13 and c["killed"] == c["rejected"] == 0


def _grant_world(build) -> Simulator:
    # Clusters of 2 and 1 nodes (ids 0-1, 2). Evolving 31 (1 then 2 tasks) on node 0 and rigid
    # 32 on node 1: at t = 10, 31 asks for a second node that its cluster cannot give.
    jobs = [
        build.evolving(31, 0.0, [(10.0, 1), (10.0, 2)]),
        build.rigid(32, 0.0, 100.0, 1),
    ]
    sim = Simulator(Platform.multi([2, 1]), jobs)
    sim.advance()
    sim.start(31, nodes=[0])
    sim.start(32, nodes=[1])
    assert sim.advance() and sim.now == 10.0 and sim.jobs[31].request == 2
    return sim


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (lambda s: s.grant(31), CapacityError),
        (lambda s: s.grant(31, nodes=[1]), CapacityError),
        (lambda s: s.grant(31, nodes=[2]), CommandError),
        (lambda s: s.grant(31, nodes=[0]), CapacityError),
        (lambda s: s.grant(31, nodes=[]), SizeError),
        (lambda s: s.resize(31, 2), JobStateError),
        (lambda s: s.start(31), JobStateError),
        (lambda s: s.grant(32), JobStateError),
    ],
    ids=[
        "grant without room",
        "grant onto a busy node",
        "grant on another cluster",
        "grant onto its own full node",
        "grant with no nodes",
        "resize evolving",
        "start running evolving",
        "grant rigid",
    ],
)
def test_refused_grant_changes_nothing(build, state, command, error):
    sim = _grant_world(build)
    before = state.snapshot(sim)
    with pytest.raises(CommandError) as info:
        command(sim)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert re.search(r"\b3[12]\b", str(info.value)), str(info.value)
    assert state.same(before, state.snapshot(sim))
    state.check(sim)


def test_grant_on_the_waiting_job_works_once_room_exists(build):
    # Control for the grant refusals: the same world with node 1 free accepts the grant.
    sim = _grant_world(build)
    sim.suspend(32)
    sim.grant(31)
    assert sim.jobs[31].nodes.tolist() == [0, 1]
    assert sim.jobs[31].request == 0


def test_snapshot_sees_an_accepted_command(build, state):
    # Control: the comparison used above does notice a change when a command is accepted.
    sim = refusal_world(build)
    before = state.snapshot(sim)
    sim.start(17, nodes=[3])
    assert not state.same(before, state.snapshot(sim))
    sim2 = refusal_world(build)
    before = state.snapshot(sim2)
    sim2.set_shares(11, 0.25)
    after = state.snapshot(sim2)
    assert not state.same(before["jobs"], after["jobs"])
    assert not state.same(before["heap"], after["heap"])


def test_scheduler_views_are_read_only(build):
    # Schedulers read the state through views; writing through them must fail, not corrupt.
    sim = refusal_world(build)
    with pytest.raises(ValueError):
        sim.node_cpu_used[3] = 1.0
    with pytest.raises(ValueError):
        sim.node_mem_used[3] = 1.0
    with pytest.raises(ValueError):
        sim.jobs[12].nodes[0] = 3
    with pytest.raises(ValueError):
        sim.jobs[12].cpu[0] = 0.5
    with pytest.raises(TypeError):
        sim.queue[99] = sim.jobs[14]  # type: ignore[index]
    with pytest.raises(TypeError):
        del sim.running[12]  # type: ignore[attr-defined]
    assert sim.node_cpu_used.tolist() == [0.75, 1.0, 1.0, 0.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- bad descriptions
@pytest.mark.parametrize(
    "make",
    [
        lambda b: b.rigid(5, 0.0, 1.0, 0),
        lambda b: b.rigid(5, -1.0, 1.0, 1),
        lambda b: b.rigid(5, 0.0, -1.0, 1),
        lambda b: b.rigid(5, 0.0, 1.0, 1, walltime=0.0),
        lambda b: b.rigid(5, 0.0, 1.0, 1, cpu_need=0.0),
        lambda b: b.rigid(5, 0.0, 1.0, 1, cpu_need=1.5),
        lambda b: b.rigid(5, 0.0, 1.0, 1, mem=1.5),
        lambda b: b.rigid(5, 0.0, 1.0, 2, min_nodes=1, max_nodes=2),
        lambda b: b.moldable(5, 0.0, 1.0, 2, 3, 4),
        lambda b: b.moldable(5, 0.0, 1.0, 3, 1, 4, size_rule=SizeRule.POWER_OF_TWO),
        lambda b: b.malleable(5, 0.0, 1.0, 3, 2, 4, size_rule=SizeRule.MULTIPLE, size_multiple=2),
        lambda b: b.malleable(5, 0.0, 1.0, 2, 1, 4, size_multiple=0),
        lambda b: b.evolving(5, 0.0, []),
        lambda b: b.evolving(5, 0.0, [(1.0, 0)]),
        lambda b: b.evolving(5, 0.0, [(-1.0, 1)]),
        lambda b: JobSpec(5, 0.0, work=1.0, evolution=((1.0, 1),)),
    ],
)
def test_inconsistent_job_specs_are_refused(build, make):
    with pytest.raises(SpecError, match=r"\b5\b"):
        make(build)


def test_duplicate_job_ids_are_refused(build):
    with pytest.raises(SpecError, match=r"\b4\b"):
        Simulator(Platform.single(1), [build.rigid(4, 0.0, 1.0, 1), build.rigid(4, 1.0, 1.0, 1)])


@pytest.mark.parametrize(
    "make",
    [
        lambda: SimConfig(tick=0.0),
        lambda: SimConfig(bsld_tau=0.0),
        lambda: SimConfig(idle_power=300.0, busy_power=250.0),
        lambda: Platform(()),
        lambda: Platform.single(0),
        lambda: FixedCost(-1.0),
    ],
)
def test_inconsistent_settings_are_refused(make):
    with pytest.raises(SpecError):
        make()


@pytest.mark.parametrize(
    "command",
    [lambda s: s.start(14, 2.5), lambda s: s.start(23, 1.5), lambda s: s.resize(12, 1.5)],
    ids=["start moldable", "start malleable", "resize"],
)
def test_non_integer_sizes_are_refused(build, state, command):
    sim = refusal_world(build)
    before = state.snapshot(sim)
    with pytest.raises(SizeError):
        command(sim)
    assert state.same(before, state.snapshot(sim))
