"""Each menu entry does exactly what the layout says, and the mask allows exactly the legal ones.

The oracle below derives every entry's command from the engine's public state and the job
specs (``spec.sizes()``), independently of the env's own size arithmetic, then issues it on a
clone of the engine: the mask must be 1 exactly where the engine accepts the command, and
``step`` must leave the engine exactly where the direct command left the clone.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hpcgym.envs import ClusterEnv
from hpcgym.errors import CommandError
from hpcgym.sim import JobKind, Simulator


def windows(env: ClusterEnv) -> tuple[list[int], list[int], list[int]]:
    """Queue, running and suspended windows (job ids) by submission order (FCFS queue)."""
    sim = env.sim
    assert sim is not None
    order = {jid: i for i, jid in enumerate(sim.jobs)}
    cfg = env.config

    def by_submission(ids: Any) -> list[int]:
        return sorted(ids, key=order.__getitem__)

    return (
        by_submission(sim.queue)[: cfg.queue_slots],
        by_submission(sim.running)[: cfg.running_slots],
        by_submission(sim.suspended)[: cfg.suspended_slots],
    )


def shrink_target(sizes: np.ndarray, n: int, level: str) -> int | None:
    below = sizes[sizes < n]
    if level == "one":
        return int(below.max()) if below.size else None
    if level == "half":
        half = sizes[sizes <= n // 2]
        t = int(half.max()) if half.size else int(sizes.min())
    else:
        t = int(sizes.min())
    return t if t < n else None


def oracle(env: ClusterEnv, action: int, sim: Simulator) -> bool:
    """Issue on ``sim`` the command that ``action`` names; whether the engine accepted it."""
    name, slot, level = env.menu.decode(action)
    queue, running, suspended = windows(env)
    cfg = env.config
    try:
        if name in ("start", "coschedule"):
            if slot >= len(queue):
                return False
            spec = sim.jobs[queue[slot]].spec
            if name == "coschedule":
                sim.start(spec.id, cpu=spec.cpu_need * cfg.coschedule_levels[level])
                return True
            sizes = spec.sizes()
            lvl = cfg.start_levels[level]
            if spec.kind in (JobKind.RIGID, JobKind.EVOLVING) or lvl == "req":
                sim.start(spec.id, spec.nodes)
            elif lvl in ("min", "max"):
                sim.start(spec.id, int(sizes.min() if lvl == "min" else sizes.max()))
            else:
                return _first_ok(lambda t: sim.start(spec.id, t), sorted(sizes, reverse=True))
            return True
        if name in ("shrink", "expand", "grant", "suspend"):
            if slot >= len(running):
                return False
            job = sim.jobs[running[slot]]
            if name == "grant":
                sim.grant(job.id)
            elif name == "suspend":
                sim.suspend(job.id)
            elif job.spec.kind is not JobKind.MALLEABLE:
                return False
            elif name == "shrink":
                t = shrink_target(job.spec.sizes(), job.size, cfg.shrink_levels[level])
                if t is None:
                    return False
                sim.shrink(job.id, t)
            else:
                return _expand(sim, job.id, cfg.expand_levels[level])
            return True
        if slot >= len(suspended):
            return False
        sim.resume(suspended[slot])
        return True
    except CommandError:
        return False


def _first_ok(command: Any, sizes: list[Any]) -> bool:
    for t in sizes:
        try:
            command(int(t))
        except CommandError:
            continue
        return True
    return False


def _expand(sim: Simulator, job_id: int, level: str) -> bool:
    job = sim.jobs[job_id]
    n = job.size
    sizes = job.spec.sizes()
    if level == "one":
        above = sizes[sizes > n]
        if not above.size:
            return False
        sim.expand(job_id, int(above.min()))
        return True
    if level == "double":
        ok = sizes[sizes <= 2 * n]
        if not ok.size or ok.max() <= n:
            return False
        sim.expand(job_id, int(ok.max()))
        return True
    return _first_ok(lambda t: sim.expand(job_id, t), sorted(sizes[sizes > n], reverse=True))


def engine_state(sim: Simulator) -> tuple[Any, ...]:
    jobs = tuple(
        (jid, j.state.value, tuple(j.nodes.tolist()), tuple(j.cpu.tolist()), j.request)
        for jid, j in sim.jobs.items()
    )
    return (sim.now, tuple(sim.queue), tuple(sim.running), tuple(sim.suspended), jobs)


WORLDS = [
    "test/rigid-tiny-v0",
    "test/malleable-tiny-v0",
    "test/evolving-tiny-v0",
    "test/shared-tiny-v0",
    "test/multi-tiny-v0",
]


@pytest.mark.parametrize("world", WORLDS)
def test_mask_is_exactly_the_legal_commands_and_steps_do_them(
    world: str, worlds: SimpleNamespace
) -> None:
    check_menu(world, worlds, seed=7, states=14)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("world", WORLDS)
def test_mask_on_long_random_trajectories(world: str, seed: int, worlds: SimpleNamespace) -> None:
    check_menu(world, worlds, seed=seed, states=60)


def test_mask_of_plain_starts_on_shared_nodes(worlds: SimpleNamespace) -> None:
    # One start level and no co-scheduling, but fractional tasks: not the whole-node path.
    kwargs = {"coschedule_levels": [], "suspend": False, "suspended_slots": 0, "queue_slots": 6}
    env = worlds.make("test/shared-tiny-v0", skip_trivial=False, **kwargs)
    env.reset(seed=0)
    env.step(1)  # job 1: 2 tasks of half a node on nodes 0 and 1
    env.step(0)  # t=10
    env.step(0)  # t=20: job 6 (3 tasks of half a node) fits on 2 idle + 2 half-used nodes
    assert env.sim is not None and env.sim.now == 20.0 and env.sim.free_nodes() == 2
    slot = [env.ledger.jobs[r].spec.id for r in env._decision.queue_rows].index(6)
    assert env.action_masks()[1 + slot] == 1
    check_menu("test/shared-tiny-v0", worlds, seed=5, states=14, **kwargs)


def check_menu(world: str, worlds: SimpleNamespace, seed: int, states: int, **kwargs: Any) -> None:
    env = worlds.make(world, skip_trivial=False, **kwargs)
    rng = np.random.default_rng(seed)
    _obs, info = env.reset(seed=0)
    checked = 0
    for _ in range(states):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask[0] == 1
        assert np.array_equal(env.action_masks(), mask)
        # "Anything but advance is legal", as the env tracks it to skip trivial points.
        assert env.decision.choice == bool(mask[1:].any())
        for a in range(1, env.action_space.n):
            # The oracle commands a copy of the engine; ``stepped`` replays the episode.
            direct = worlds.engine_copy(env)
            legal = oracle(env, a, direct)
            assert bool(mask[a]) == legal, (world, env.action_labels()[a], env.sim.now)
            stepped = worlds.clone(env)
            _, _, _, _, step_info = stepped.step(a)
            assert stepped.sim is not None
            if legal:
                assert engine_state(stepped.sim) == engine_state(direct), env.action_labels()[a]
                assert step_info["invalid_actions"] == info["invalid_actions"]
            else:
                assert engine_state(stepped.sim) == engine_state(env.sim)
                assert step_info["invalid_actions"] == info["invalid_actions"] + 1
            checked += 1
        _, _, term, trunc, info = env.step(worlds.policy(info, rng))
        if term or trunc:
            _, info = env.reset()
    assert checked >= states * 4


def test_rigid_layout_and_start_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/rigid-tiny-v0")
    assert env.action_space.n == 1 + 4
    assert env.action_labels() == [
        "advance",
        "start[0]@req",
        "start[1]@req",
        "start[2]@req",
        "start[3]@req",
    ]
    obs, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [1, 1, 1, 0, 0]  # jobs 1 (2 nodes), 2 (3 nodes)
    obs, _r, _term, _trunc, info = env.step(1)
    sim = env.sim
    assert sim is not None
    assert sim.jobs[1].nodes.tolist() == [0, 1] and sim.free_nodes() == 2
    # Nothing else fits at t=0: the env advanced to t=10 (jobs 3 and 4 submitted).
    assert sim.now == 10.0
    assert [int(x) for x in env._decision.queue_rows] == [1, 2, 3]
    assert info["action_mask"].tolist() == [1, 0, 1, 0, 0]
    assert obs["queue"][:3, 12].tolist() == [0.0, 1.0, 0.0]  # fits-now flags


def test_invalid_action_is_a_penalized_no_op(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/rigid-tiny-v0", invalid_penalty=0.5)
    env.reset(seed=0)
    assert env.sim is not None
    before = engine_state(env.sim)
    _, r, _term, _trunc, info = env.step(4)
    assert engine_state(env.sim) == before
    assert info["invalid_actions"] == 1 and info["reward_parts"]["invalid"] == -0.5
    assert r == pytest.approx(-0.5)
    _, _, _, _, info = env.step(99)  # out of range: also a no-op, never an exception
    assert info["invalid_actions"] == 2


def test_malleable_levels_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    labels = env.action_labels()
    # Job 1: Amdahl, sizes 1..8, requested 4; 8 nodes idle: max and fit are 8.
    env.step(labels.index("start[0]@min"))
    assert sim.jobs[1].size == 1
    env.step(labels.index("expand[0]@fit"))
    assert sim.jobs[1].size == 8 and sim.jobs[1].state.value == "reconfiguring"
    # Job 2 (powers of two) cannot start: no node left; once job 1 is reconfigured, shrink it.
    env.step(0)
    assert sim.jobs[1].state.value == "running"
    env.step(labels.index("shrink[0]@half"))
    assert sim.jobs[1].size == 4
    env.step(labels.index("start[0]@fit"))  # job 2: largest power of two <= 4 idle nodes
    assert sim.jobs[2].size == 4


def test_evolving_grant_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/evolving-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    labels = env.action_labels()
    env.step(labels.index("start[0]@req"))  # job 1 on 2 nodes
    env.step(0)  # t=30: job 3 submitted
    env.step(0)  # t=100: job 1 asks for 4 nodes
    assert sim.now == 100.0 and sim.jobs[1].request == 4
    # Advance with the request pending and nothing else running: a stall, so the env grants.
    _, _, _, _, info = env.step(0)
    assert info["forced_commands"] == 1
    # Granted at t=100, its 100 s step ran on 4 nodes; at t=200 it stepped down to 1 node.
    assert sim.now == 200.0 and sim.jobs[1].step == 2 and sim.jobs[1].size == 1
    env2 = worlds.make("test/evolving-tiny-v0", skip_trivial=False)
    env2.reset(seed=0)
    env2.step(labels.index("start[0]@req"))
    env2.step(0)
    env2.step(0)
    assert env2.action_masks()[labels.index("grant[0]")] == 1
    env2.step(labels.index("grant[0]"))
    assert env2.sim is not None and env2.sim.jobs[1].size == 4 and env2.sim.jobs[1].request == 0


def test_coschedule_and_suspend_resume_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/shared-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    labels = env.action_labels()
    env.step(labels.index("coschedule[0]@0.5"))  # job 1: 2 tasks at 0.25 CPU each
    assert sim.jobs[1].cpu.tolist() == [0.25, 0.25]
    env.step(labels.index("suspend[0]"))
    assert sim.jobs[1].state.value == "suspended" and sim.free_nodes() == 4
    _, _, _, _, info = env.step(0)
    assert info["action_mask"][labels.index("resume[0]")] == 1
    env.step(labels.index("resume[0]"))
    assert sim.jobs[1].size == 2


def test_stalled_advance_forces_the_earliest_job(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/rigid-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    for _ in range(3):
        _, _, _, _, info = env.step(0)  # t=10, t=30, then nothing more can happen by itself
    assert info["forced_commands"] == 1
    assert sim.jobs[1].state.value in ("running", "completed")


def test_evolving_deadlock_is_broken(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/evolving-tiny-v0", skip_trivial=False)
    env.reset(seed=0)
    labels = env.action_labels()
    env.step(labels.index("start[0]@req"))  # job 1: 2 nodes, later asks for 4
    env.step(labels.index("start[0]@req"))  # job 2: 3 nodes, later asks for 5
    term = trunc = False
    info: dict[str, Any] = {}
    while not (term or trunc):
        _, _, term, trunc, info = env.step(0)  # never grant: the env must untie the knot
    assert term and info["forced_commands"] >= 2
    assert info["metrics"]["completed"] == 3
