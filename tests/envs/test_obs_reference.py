"""The fast observation path against a slow one computed from the engine's state alone.

The encoder gathers cached per-row features that the ledger refreshes lazily; here every
feature is recomputed from the engine's jobs at each step (a different order of floating-point
operations, hence a tolerance). Also: rollouts are bitwise deterministic, and observations the
env returned are never changed by later steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import hpcgym  # noqa: F401
from hpcgym.envs import PRESETS, ClusterEnv
from hpcgym.envs.table import KINDS
from hpcgym.sim.job import JobState
from hpcgym.sim.spec import JobKind

HOUR = 3600.0
DAY = 86400.0


def _squash(x: float, c: float) -> float:
    return x / (x + c)


def reference_observation(env: ClusterEnv) -> dict[str, np.ndarray]:
    """The observation of ``env``'s current decision point, from the engine's state."""
    cfg, sim, d = env.config, env.sim, env._decision
    assert sim is not None
    led = env.ledger
    now = sim.now
    nodes = [c.nodes for c in sim.platform.clusters]
    largest = float(max(nodes))

    def size(x: float) -> float:
        return min(1.0, x / largest)

    queue = np.zeros((cfg.queue_slots, 15))
    for i, r in enumerate(d.queue_rows):
        spec = led.jobs[r].spec
        est = spec.walltime if spec.walltime is not None else spec.work
        row = queue[i]
        row[:6] = (
            1.0,
            _squash(now - spec.submit, HOUR),
            _squash(est, HOUR),
            size(spec.nodes),
            size(spec.min_nodes),
            size(spec.max_nodes),
        )
        row[6 + KINDS.index(spec.kind)] = 1.0
        row[10] = min(1.0, spec.rate(spec.max_nodes) * spec.nodes / spec.max_nodes)
        row[11] = size(spec.evolution[1].nodes if len(spec.evolution) > 1 else 0)
        row[12] = float(d.fits[i])
        row[13:] = (spec.cpu_need, spec.mem)

    def held(rows: list[int], slots: int) -> np.ndarray:
        out = np.zeros((slots, 12))
        for i, r in enumerate(rows):
            job = led.jobs[r]
            spec = job.spec
            n = job.suspended_size if job.state is JobState.SUSPENDED else job.size
            est = spec.walltime if spec.walltime is not None else spec.work
            left = sim.remaining_work(job)
            if spec.evolution:
                done = sum(s.duration for s in spec.evolution[: job.step + 1]) - left
            else:
                done = spec.work - left
            eta = max(est - done, 0.0) / job.rate if job.rate > 0 else None
            c = job.reconfigurations
            out[i] = (
                1.0,
                size(n),
                size(spec.min_nodes),
                size(spec.max_nodes),
                job.yield_,
                _squash(now - job.start_time, HOUR),
                1.0 if eta is None else (_squash(eta, HOUR) if eta > 0 else 0.0),
                min(1.0, spec.rate(n) * spec.nodes / n) if n else 0.0,
                c / (c + 1.0),
                size(job.request),
                1.0 if job.state is JobState.RECONFIGURING else 0.0,
                1.0 if spec.kind is JobKind.MALLEABLE else 0.0,
            )
        return out

    offsets = [*sim.platform.offsets, sim.node_cpu_used.size]
    cluster = np.zeros((len(nodes), 4))
    for c, n in enumerate(nodes):
        cpu = sim.node_cpu_used[offsets[c] : offsets[c + 1]]
        mem = sim.node_mem_used[offsets[c] : offsets[c + 1]]
        cluster[c] = (
            np.count_nonzero(cpu == 0.0) / n,
            1.0 - cpu.sum() / n,
            1.0 - mem.sum() / n,
            np.count_nonzero((cpu > 0.0) & (cpu < 1.0)) / n,
        )
    counts = sim.counts
    jobs = max(counts["total"], 1)
    ended = counts["completed"] + counts["killed"] + counts["rejected"]
    queued, holding = counts["queued"], len(led.holding)
    gap = sim.next_submission - now
    t0 = sim.jobs[next(iter(sim.jobs))].spec.submit if sim.jobs else 0.0
    clock = max(now - t0, 0.0)
    out = {
        "cluster": np.clip(cluster, 0.0, 1.0),
        "queue": queue,
        "running": held(d.run_rows, cfg.running_slots),
    }
    if cfg.suspend:
        out["suspended"] = held(d.susp_rows, cfg.suspended_slots)
    out["time"] = np.array(
        (
            _squash(clock, DAY),
            counts["submitted"] / jobs,
            ended / jobs,
            _squash(queued, cfg.queue_slots),
            _squash(holding, cfg.running_slots),
            _squash(gap, HOUR) if np.isfinite(gap) else 1.0,
        )
    )
    return out


def _rollout(env: Any, seed: int, steps: int) -> list[tuple[Any, dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [(obs, info)]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        out.append((obs, info))
        if term or trunc:
            obs, info = env.reset()
            out.append((obs, info))
    return out


@pytest.mark.parametrize("env_id", list(PRESETS))
def test_fast_observation_matches_the_engine(env_id: str) -> None:
    env = gym.make(env_id, max_steps=150)
    rng = np.random.default_rng(7)
    u = env.unwrapped
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        for _ in range(200):
            ref = reference_observation(u)
            assert obs.keys() == ref.keys()
            for key, value in ref.items():
                np.testing.assert_allclose(obs[key], value, rtol=2e-6, atol=1e-6, err_msg=key)
            if u.config.queue_order == "fcfs":
                ids = [u.ledger.jobs[r].spec.id for r in u._decision.queue_rows]
                assert ids == list(u.sim.queue)[: u.config.queue_slots]
            legal = np.flatnonzero(info["action_mask"])
            obs, _, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
            if term or trunc:
                break


@pytest.mark.parametrize("env_id", ["hpcgym/Rigid-v0", "hpcgym/Shared-v0"])
def test_rollouts_are_bitwise_deterministic_and_returned_arrays_stay_put(env_id: str) -> None:
    a = _rollout(gym.make(env_id, max_steps=300), 3, 700)
    copies = [
        ({k: v.copy() for k, v in obs.items()}, info["action_mask"].copy()) for obs, info in a
    ]
    b = _rollout(gym.make(env_id, max_steps=300), 3, 700)
    assert len(a) == len(b)
    for (obs, info), (obs_b, info_b), (obs_c, mask_c) in zip(a, b, copies, strict=True):
        for key in obs:
            assert obs[key].tobytes() == obs_b[key].tobytes() == obs_c[key].tobytes()
        assert info["action_mask"].tobytes() == info_b["action_mask"].tobytes() == mask_c.tobytes()
