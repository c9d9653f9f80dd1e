"""selection="reserve": an agent that picks the best-ranked job gives the reserve baselines'
schedule, job for job; the chosen job waits, and backfilling never delays it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import hpcgym.envs  # noqa: F401
from hpcgym.agents.rl.imitation import make_ranker
from hpcgym.baselines.priority import PriorityReserve
from hpcgym.errors import SpecError
from hpcgym.sim import SimConfig, Simulator

RESERVE = {"n_jobs": 128, "queue_slots": 128, "selection": "reserve", "kill_on_walltime": False}


def play(score: str, backfill: bool, start: int) -> tuple[dict[int, float], object]:
    env = gym.make("hpcgym/Rigid-v0", reserve_backfill=backfill, **RESERVE)
    env.reset(seed=0, options={"start": start})
    ranker = make_ranker(f"rank-{score}", env)  # the imitation expert is the baseline
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        a = ranker(mask)
        assert mask[a]
        _, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert term
    table = env.unwrapped.sim.result().jobs
    return dict(zip(table["id"], table["start"], strict=True)), env.unwrapped.episode


@pytest.mark.parametrize("score", ["fcfs", "sjf", "f1", "wfp3"])
@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("start", [0, 4000])
def test_a_ranking_agent_gives_the_reserve_baseline_schedule(score, backfill, start):
    starts, episode = play(score, backfill, start)
    sim = Simulator(episode.platform, episode.jobs, SimConfig(kill_on_walltime=False))
    PriorityReserve(score, backfill).run(sim)
    table = sim.result().jobs
    expected = dict(zip(table["id"], table["start"], strict=True))
    assert starts == expected


def test_the_chosen_job_waits_and_nothing_else_starts_without_backfill():
    env = gym.make("hpcgym/Rigid-v0", **RESERVE)
    env.reset(seed=0, options={"start": 0})
    u = env.unwrapped
    # Step until some queued job does not fit, then choose it.
    for _ in range(500):
        d = u.decision
        free = u.sim.pool.free[0]
        blocked = [q for q, r in enumerate(d.queue_rows) if u.ledger.req_list[r] > free]
        if blocked:
            break
        env.step(u.reserve.offset)
    q = blocked[0]
    row = d.queue_rows[q]
    chosen = u.ledger.jobs[row].spec.id
    assert u.action_masks()[u.reserve.offset + q]  # choosable although it does not fit
    running_before = set(u.sim.running)
    env.step(u.reserve.offset + q)
    job = u.ledger.jobs[row]
    assert (job.start_time is not None and chosen in u.sim.running) or u.sim.done
    started_meanwhile = set(u.sim.running) - running_before - {chosen}
    assert not started_meanwhile  # no backfilling: only the chosen job started


def test_reserve_mode_is_refused_where_it_does_not_apply():
    with pytest.raises(SpecError, match="reserve"):
        gym.make("hpcgym/Malleable-v0", selection="reserve")
    with pytest.raises(SpecError, match="reserve_backfill"):
        gym.make("hpcgym/Rigid-v0", reserve_backfill=True)
    with pytest.raises(SpecError, match="selection"):
        gym.make("hpcgym/Rigid-v0", selection="pick")


def test_reserve_masks_only_jobs_that_can_ever_fit():
    env = gym.make("hpcgym/Rigid-v0", **RESERVE)
    env.reset(seed=1)
    u = env.unwrapped
    mask = u.action_masks()
    rows = u.decision.queue_rows
    off = u.reserve.offset
    assert mask[0] == 0  # a job can be chosen: the agent must choose one, as in RLScheduler
    assert np.array_equal(mask[off : off + len(rows)], np.ones(len(rows), dtype=mask.dtype))
    assert not mask[off + len(rows) : off + 128].any()


def test_advance_is_legal_only_when_no_job_can_be_chosen():
    env = gym.make("hpcgym/Rigid-v0", skip_trivial=False, **RESERVE)
    env.reset(seed=1, options={"start": 0})
    u = env.unwrapped
    seen = {True: 0, False: 0}
    for _ in range(400):
        mask = u.action_masks()
        any_job = bool(mask[1:].any())
        assert mask[0] == (not any_job)
        seen[any_job] += 1
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(mask)[0]))
        if term or trunc:
            break
    assert seen[True] and seen[False]  # both kinds of decision point were met


def test_a_ranker_needs_reserve_mode_and_a_known_score():
    with pytest.raises(SpecError, match="reserve mode"):
        make_ranker("rank-sjf", gym.make("hpcgym/Rigid-v0", n_jobs=16))
    with pytest.raises(SpecError, match="unknown ranking expert"):
        make_ranker("rank-nope", gym.make("hpcgym/Rigid-v0", **RESERVE))
