from __future__ import annotations

from collections.abc import Callable, Sequence

from hpcgym.baselines import BaseScheduler
from hpcgym.sim import JobSpec, Platform, SimConfig, Simulator

Timeline = dict[int, tuple[float, float]]


def rigid(
    jid: int, submit: float, work: float, nodes: int, walltime: float | None = None
) -> JobSpec:
    return JobSpec(jid, submit, work=work, nodes=nodes, walltime=walltime)


def run(
    sched: BaseScheduler,
    jobs: Sequence[JobSpec],
    nodes: int,
    config: SimConfig | None = None,
    after: Callable[[Simulator], None] | None = None,
) -> tuple[Simulator, Timeline]:
    """Run ``sched`` to the end; ``after(sim)`` is called after every pass."""
    sim = Simulator(Platform.single(nodes), jobs, config)
    sched.reset()
    while sim.advance():
        sched.schedule(sim)
        if after is not None:
            after(sim)
    assert sim.done
    return sim, {j.id: (j.start_time, j.end_time) for j in sim.jobs.values()}


def malleable(
    jid: int,
    submit: float,
    work: float,
    nodes: int,
    lo: int,
    hi: int,
    *,
    rho: float | None = None,
    cost: float = 0.0,
    walltime: float | None = None,
) -> JobSpec:
    """A malleable job; linear speedup unless ``rho`` is given, fixed resize ``cost``."""
    from hpcgym.sim import FixedCost, JobKind, Linear, NoCost, PowerLaw

    return JobSpec(
        jid,
        submit,
        work=work,
        nodes=nodes,
        kind=JobKind.MALLEABLE,
        min_nodes=lo,
        max_nodes=hi,
        walltime=walltime,
        speedup=Linear() if rho is None else PowerLaw(rho),
        reconfig=FixedCost(cost) if cost else NoCost(),
    )
