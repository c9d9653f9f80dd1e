"""The opt-in levels: ``cut<f>``, ``spare<f>`` (resizes), ``<size>@<k>`` and ``ebf`` (starts).

As in ``test_menu.py``, an oracle derives each entry's command from the engine's public state
and ``spec.sizes()``, independently of ``hpcgym.envs.sizes``: the mask must allow exactly the
commands the engine accepts, and a step must do exactly that command.
"""

from __future__ import annotations

import math
import pickle
from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_menu import engine_state, oracle, windows

from hpcgym.envs import ClusterEnv
from hpcgym.envs.config import EnvConfig, exact_size
from hpcgym.errors import CommandError, SpecError
from hpcgym.sim import JobKind, JobSpec, JobState, Simulator
from hpcgym.sim.nodes import EPS
from hpcgym.sim.planning import estimated_end

LEVELS: dict[str, Any] = {
    "shrink_levels": ["cut0.4", "one", "cut0.75"],
    "expand_levels": ["spare0.5", "fit", "spare1.0"],
}


def level_oracle(env: ClusterEnv, action: int, sim: Simulator) -> bool:
    """``test_menu.oracle``, with the opt-in levels and the ``lend`` and ``reclaim`` blocks."""
    name, slot, level = env.menu.decode(action)
    cfg = env.config
    lvl = ""
    if name in ("lend", "reclaim"):
        return _share_oracle(env, name, slot, level, sim)
    if name == "coschedule" and cfg.coschedule_placement == "packed":
        return _packed_oracle(env, slot, level, sim)
    if name == "start":
        return _start(env, slot, cfg.start_levels[level], sim)
    if name == "shrink":
        lvl = cfg.shrink_levels[level]
    elif name == "expand":
        lvl = cfg.expand_levels[level]
    exact = exact_size(lvl)
    if not (lvl.startswith("cut") or lvl.startswith("spare") or exact is not None):
        return oracle(env, action, sim)
    running = windows(env)[1]
    if slot >= len(running):
        return False
    job = sim.jobs[running[slot]]
    if job.spec.kind is not JobKind.MALLEABLE:
        return False
    sizes = job.spec.sizes()
    n = job.size
    if exact is not None:  # exactly ``exact`` tasks, if the engine takes it
        if (name == "shrink") != (exact < n) or exact == n:
            return False
        target = exact
    elif lvl.startswith("cut"):
        f = float(lvl[3:])
        ok = sizes[sizes <= n - max(1, math.floor(f * n))]
        if not ok.size:
            return False
        target = int(ok.max())
    else:
        f = float(lvl[5:])
        ok = sizes[sizes <= n + math.floor(f * sim.free_nodes(job.cluster))]
        if not ok.size or ok.max() <= n:
            return False
        target = int(ok.max())
    try:
        sim.resize(job.id, target)
    except CommandError:
        return False
    return True


def _start(env: ClusterEnv, slot: int, lvl: str, sim: Simulator) -> bool:
    """Start queue slot ``slot`` at ``lvl``; the window (in any ``queue_order``) is the env's."""
    queue = [env.ledger.jobs[r].spec.id for r in env._decision.queue_rows]
    if slot >= len(queue):
        return False
    spec = sim.jobs[queue[slot]].spec
    size, _, at = lvl.partition("@")
    cluster = int(at) if at else None
    sizes = spec.sizes()
    if exact_size(size) is not None:
        try:
            sim.start(spec.id, exact_size(size), cluster=cluster)
        except CommandError:
            return False
        return True
    if size == "ebf":
        t = ebf_oracle(sim, spec)
        if not t:
            return False
        sim.start(spec.id, t)
        return True
    if spec.kind in (JobKind.RIGID, JobKind.EVOLVING) or size == "req":
        order = [spec.nodes]
    elif size in ("min", "max"):
        order = [int(sizes.min() if size == "min" else sizes.max())]
    else:
        order = sorted(sizes, reverse=True)
    for t in order:
        try:
            sim.start(spec.id, int(t), cluster=cluster)
        except CommandError:
            continue
        return True
    return False


def _share_oracle(env: ClusterEnv, name: str, slot: int, level: int, sim: Simulator) -> bool:
    """Lend ``f`` of a malleable job's full CPU need, or take back its nodes' idle CPU."""
    running = windows(env)[1]
    if slot >= len(running):
        return False
    job = sim.jobs[running[slot]]
    if job.state is not JobState.RUNNING:
        return False
    need = job.spec.cpu_need
    cpu = job.cpu
    if name == "lend":
        if job.spec.kind is not JobKind.MALLEABLE or not np.all(cpu == need):
            return False
        sim.set_shares(job.id, need * (1.0 - env.config.lend_levels[level]))
        return True
    if len(set(job.nodes.tolist())) != job.nodes.size:
        return False
    new = [
        need
        if c + max(0.0, 1.0 - sim.node_cpu_used[n]) >= need - EPS
        else c + 1.0 - sim.node_cpu_used[n]
        for c, n in zip(cpu.tolist(), job.nodes.tolist(), strict=True)
    ]
    if not any(x > c + EPS for x, c in zip(new, cpu.tolist(), strict=True)):
        return False
    sim.set_shares(job.id, np.array(new))
    return True


def _packed_oracle(env: ClusterEnv, slot: int, level: int, sim: Simulator) -> bool:
    """Co-schedule on the nodes with the most CPU in use that have room, lowest ids first."""
    queue = windows(env)[0]
    if slot >= len(queue):
        return False
    spec = sim.jobs[queue[slot]].spec
    share = spec.cpu_need * env.config.coschedule_levels[level]
    for k, lo in enumerate(sim.platform.offsets):
        n = sim.platform.clusters[k].nodes
        room = [
            (-sim.node_cpu_used[i], i)
            for i in range(lo, lo + n)
            if sim.node_cpu_used[i] <= 1.0 - share + EPS
            and (spec.mem <= 0 or sim.node_mem_used[i] <= 1.0 - spec.mem + EPS)
        ]
        if len(room) >= spec.nodes:
            nodes = sorted(i for _, i in sorted(room)[: spec.nodes])
            try:
                sim.start(spec.id, nodes=np.array(nodes), cpu=share)
            except CommandError:
                return False
            return True
    return False


def _first_fit(env: ClusterEnv, action: int) -> Simulator:
    """The engine after the co-scheduled start of ``action`` placed by the engine itself."""
    sim = pickle.loads(pickle.dumps(env.sim))
    _, slot, level = env.menu.decode(action)
    spec = sim.jobs[windows(env)[0][slot]].spec
    sim.start(spec.id, cpu=spec.cpu_need * env.config.coschedule_levels[level])
    return sim


def _head_start(sim: Simulator, need: int) -> float:
    """When ``need`` nodes are idle at the earliest, by the running jobs' estimated ends."""
    idle = sim.free_nodes()
    if idle >= need:
        return sim.now
    for t, n in sorted((estimated_end(sim, j), j.size) for j in sim.running.values()):
        idle += n
        if idle >= need:
            return t
    return math.inf


def ebf_oracle(sim: Simulator, spec: JobSpec) -> int:
    """The ``ebf`` size by its definition: EASY never delays the queue head's reservation.

    The preferred size (else, elastic jobs, the largest that fits) if starting the job there
    leaves the head's earliest start (at its smallest size) where it was; else the same rule
    within the nodes idle at that time beyond the head's need. Checked by starting the job on a
    copy of the engine, not by the env's arithmetic.
    """
    sizes = spec.sizes()

    def fit(limit: int) -> int:
        if spec.nodes <= limit:
            return spec.nodes
        if spec.kind in (JobKind.MALLEABLE, JobKind.MOLDABLE):
            ok = sizes[sizes <= limit]
            return int(ok.max()) if ok.size else 0
        return 0

    size = fit(sim.free_nodes())
    head = sim.jobs[next(iter(sim.queue))]
    if not size or head.id == spec.id:
        return size
    need = int(head.spec.sizes().min())
    before = _head_start(sim, need)
    trial = pickle.loads(pickle.dumps(sim))
    trial.start(spec.id, size)
    if _head_start(trial, need) <= before:
        return size
    idle_then = sim.free_nodes() + sum(
        j.size for j in sim.running.values() if estimated_end(sim, j) <= before
    )
    return fit(idle_then - need)


def check_levels(
    world: str, worlds: SimpleNamespace, seed: int, states: int, **kwargs: Any
) -> Counter[str]:
    """Walk a random legal trajectory; at each state check every entry.

    Returns how often each opt-in entry was legal: ``resize`` (``cut``, ``spare``, ``@k``),
    ``ebf`` (whose target differs from ``fit``), ``exact`` (``n<k>``), ``lend``, ``reclaim``
    and ``packed`` (a co-scheduled start whose nodes differ from the lowest-numbered ones).
    """
    env = worlds.make(world, skip_trivial=False, **{**LEVELS, **kwargs})
    rng = np.random.default_rng(seed)
    _obs, info = env.reset(seed=0)
    seen: Counter[str] = Counter()
    for _ in range(states):
        mask = info["action_mask"]
        assert np.array_equal(env.action_masks(), mask)
        for a in range(1, env.action_space.n):
            # The oracle commands a copy of the engine; ``stepped`` replays the episode.
            direct = worlds.engine_copy(env)
            legal = level_oracle(env, a, direct)
            label = env.action_labels()[a]
            assert bool(mask[a]) == legal, (world, label, env.sim.now)
            stepped = worlds.clone(env)
            stepped.step(a)
            expected = direct if legal else env.sim
            assert engine_state(stepped.sim) == engine_state(expected), label
            if not legal:
                continue
            if "@cut" in label or "@spare" in label or label.count("@") == 2:
                seen["resize"] += 1
            if "@n" in label:
                seen["exact"] += 1
            if label.endswith("@ebf") and _ebf_differs(env, a):
                seen["ebf"] += 1
            block = label.partition("[")[0]
            if block in ("lend", "reclaim"):
                seen[block] += 1
            if block == "coschedule" and engine_state(direct) != engine_state(_first_fit(env, a)):
                seen["packed"] += 1
        _, _, term, trunc, info = env.step(worlds.policy(info, rng))
        if term or trunc:
            _, info = env.reset()
    return seen


@pytest.mark.parametrize("seed", [3, 7])
def test_mask_is_exactly_the_legal_commands_with_share_levels(
    seed: int, worlds: SimpleNamespace
) -> None:
    assert check_levels("test/malleable-tiny-v0", worlds, seed, states=16)["resize"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 4, 5])
def test_share_levels_on_long_random_trajectories(seed: int, worlds: SimpleNamespace) -> None:
    check_levels("test/malleable-tiny-v0", worlds, seed, states=60)


@pytest.mark.parametrize(
    ("world", "seed"),
    [("test/multi-tiny-v0", 5), ("test/malleable-tiny-v0", 3), ("test/evolving-tiny-v0", 2)],
)
def test_mask_is_exactly_the_legal_commands_with_exact_sizes(
    world: str, seed: int, worlds: SimpleNamespace
) -> None:
    levels = {
        "start_levels": ["req", "n*@*", "n*", "n3"],
        "shrink_levels": ["n*", "one"],
        "expand_levels": ["n2", "n*"],
    }
    assert check_levels(world, worlds, seed, 14, **levels)["exact"] > 0


def test_wildcards_are_spelled_out_for_the_platform(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/multi-tiny-v0", start_levels=["fit@*", "n*@1"], shrink_levels=["n*"])
    cfg = env.config
    assert cfg.start_levels == ("fit@0", "fit@1", "n1@1", "n2@1", "n3@1", "n4@1")
    assert cfg.shrink_levels == ("n1", "n2", "n3", "n4")  # clusters of 4 and 2 nodes
    assert env.action_labels()[1:3] == ["start[0]@fit@0", "start[0]@fit@1"]
    for bad in ({"start_levels": ["n0"]}, {"shrink_levels": ["n"]}, {"expand_levels": ["nx"]}):
        with pytest.raises(SpecError):
            EnvConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="single cluster"):
        EnvConfig(start_levels=["ebf@*"])


SHARES: dict[str, Any] = {
    "coschedule_levels": [0.5, 0.25],
    "coschedule_placement": "packed",
    "lend_levels": [0.5, 0.25],
    "reclaim": True,
}


@pytest.mark.parametrize(
    ("world", "seed", "blocks"),
    [
        ("test/shared-tiny-v0", 4, ("reclaim", "packed")),
        ("test/malleable-tiny-v0", 3, ("lend", "reclaim")),
    ],
)
def test_mask_is_exactly_the_legal_commands_with_lend_and_reclaim(
    world: str, seed: int, blocks: tuple[str, ...], worlds: SimpleNamespace
) -> None:
    # 20 states reach every block here; the walk's cost grows with the jobs in flight (40
    # states take 3-4 times as long), so the longer walks run with the slow tests.
    seen = check_levels(world, worlds, seed, 20, **SHARES)
    assert all(seen[b] > 0 for b in blocks), seen


@pytest.mark.slow
@pytest.mark.parametrize("world", ["test/shared-tiny-v0", "test/malleable-tiny-v0"])
@pytest.mark.parametrize("seed", [1])
def test_lend_and_reclaim_on_long_random_trajectories(
    world: str, seed: int, worlds: SimpleNamespace
) -> None:
    check_levels(world, worlds, seed, 60, **SHARES)


def _ebf_differs(env: ClusterEnv, action: int) -> bool:
    """Whether an ``ebf`` entry's target differs from the same slot's ``fit`` target."""
    _, slot, level = env.menu.decode(action)
    targets = [int(x) for x in env._decision.start[slot]]
    return targets[level] != targets[env.config.start_levels.index("fit")]


@pytest.mark.parametrize("seed", [3, 7])
@pytest.mark.parametrize("order", ["fcfs", "sjf"])
def test_mask_is_exactly_the_legal_commands_with_the_ebf_level(
    seed: int, order: str, worlds: SimpleNamespace
) -> None:
    # sjf takes the general (numpy) path of the start block, fcfs the plain-Python one.
    levels = ["req", "fit", "ebf"]
    n = check_levels(
        "test/malleable-tiny-v0", worlds, seed, 30, start_levels=levels, queue_order=order
    )
    assert n["ebf"] > 0


@pytest.mark.parametrize("order", ["fcfs", "sjf"])
def test_mask_is_exactly_the_legal_commands_with_cluster_levels(
    order: str, worlds: SimpleNamespace
) -> None:
    # Clusters of 4 and 2 nodes; sjf takes the general (numpy) path of the start block.
    levels = ["req", "fit@1", "req@0", "min@1", "max@0", "fit@0", "req@1"]
    n = check_levels("test/multi-tiny-v0", worlds, 5, 14, start_levels=levels, queue_order=order)
    assert n["resize"] > 0


def test_cluster_levels_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/multi-tiny-v0", skip_trivial=False, start_levels=["req", "fit@1"])
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    labels = env.action_labels()
    # Job 1 (3 nodes, sizes 1..4) at t=0: "fit@1" is 2 nodes in cluster 1 (2 nodes).
    assert [int(x) for x in env._decision.start[0]] == [3, 2]
    env.step(labels.index("start[0]@fit@1"))
    assert sim.jobs[1].size == 2 and sim.jobs[1].cluster == 1
    with pytest.raises(SpecError):
        EnvConfig(start_levels=["req@x"])
    with pytest.raises(SpecError):
        EnvConfig(start_levels=["req@2"], platform=[4, 2])


def test_ebf_is_refused_on_several_clusters(worlds: SimpleNamespace) -> None:
    for bad in ({"start_levels": ["ebf@0"]}, {"start_levels": ["ebf"], "platform": [4, 2]}):
        with pytest.raises(SpecError, match="single cluster"):
            EnvConfig(**bad)  # type: ignore[arg-type]
    # The workload's own platform has two clusters: refused when the env first decides.
    env = worlds.make("test/multi-tiny-v0", start_levels=["req", "ebf"])
    with pytest.raises(SpecError, match="plan on one cluster; this platform has 2"):
        env.reset(seed=0)


def test_share_levels_by_hand(worlds: SimpleNamespace) -> None:
    env = worlds.make("test/malleable-tiny-v0", skip_trivial=False, **LEVELS)
    env.reset(seed=0)
    sim = env.sim
    assert sim is not None
    labels = env.action_labels()
    assert "shrink[0]@cut0.4" in labels and "expand[3]@spare1.0" in labels
    # Job 1: sizes 1..8, requested 4, on 8 idle nodes.
    env.step(labels.index("start[0]@min"))
    assert sim.jobs[1].size == 1
    # 7 idle: spare0.5 grows by floor(3.5) = 3 tasks.
    d = env._decision
    assert list(d.expand[0]) == [4, 8, 8]
    env.step(labels.index("expand[0]@spare0.5"))
    assert sim.jobs[1].size == 4
    env.step(0)  # reconfigured
    d = env._decision
    # Size 4: cut0.4 releases max(1, floor(1.6)) = 1 task, cut0.75 releases 3.
    assert list(d.shrink[0]) == [3, 3, 1]
    env.step(labels.index("shrink[0]@cut0.75"))
    assert sim.jobs[1].size == 1


def test_share_level_names_are_checked() -> None:
    cfg = EnvConfig(shrink_levels=["cut0.4"], expand_levels=["spare1", "fit"])
    assert cfg.shrink_levels == ("cut0.4",) and cfg.expand_levels == ("spare1", "fit")
    for bad in (
        {"shrink_levels": ["cut1"]},
        {"shrink_levels": ["cut"]},
        {"shrink_levels": ["cutx"]},
        {"expand_levels": ["spare0"]},
        {"expand_levels": ["spare1.5"]},
        {"shrink_levels": ["spare0.5"]},
        {"expand_levels": ["cut0.4"]},
    ):
        with pytest.raises(SpecError):
            EnvConfig(**bad)


def test_presets_keep_their_layout() -> None:
    import gymnasium as gym

    import hpcgym  # noqa: F401

    env = gym.make("hpcgym/Malleable-v0")
    cfg = env.unwrapped.config
    assert cfg.shrink_levels == ("one", "half", "min")
    assert cfg.expand_levels == ("one", "double", "fit")
    assert env.action_space.n == 1 + 16 * 4 + 16 * 3 + 16 * 3
