"""RLScheduler's setting as scenarios: episodes fixed by (seed, start), drawn as documented."""

from __future__ import annotations

import pytest

from hpcgym.bench import scenarios
from hpcgym.bench.episode import run_episode
from hpcgym.bench.papers.rlscheduler import reserve_bsld
from hpcgym.envs.episodes import episode_for, splits_of
from hpcgym.errors import SpecError
from hpcgym.workloads import load
from hpcgym.workloads.registry import resolve_file
from hpcgym.workloads.rlsched import (
    read_rlscheduler_trace,
    rlscheduler_starts,
    split_starts,
)

RLSCHED = [n for n in scenarios.names() if n.startswith("rlsched-")]
WINDOWS = [n for n in RLSCHED if "synlublin" not in n]


def test_the_family() -> None:
    assert set(RLSCHED) == {
        f"rlsched-{trace}{bf}{test}-v0"
        for trace, test in (
            ("lublin", ""),
            ("lublin", "-test"),
            ("sdsc-sp2", ""),
            ("hpc2n", ""),
            ("synlublin", "-test"),
            ("synlublin", "-large"),
            ("sdsc-sp2", "-cross"),
        )
        for bf in ("", "-bf")
    }
    for name in RLSCHED:
        kw = scenarios.get(name).env_kwargs
        # the cross-trace tests play 256-job windows, the agents' training length
        n_jobs = 256 if name.endswith("-cross-v0") else 1024
        assert kw["selection"] == "reserve" and kw["n_jobs"] == n_jobs
        assert kw["queue_slots"] == 128 and kw["kill_on_walltime"] is False
        assert kw["reserve_backfill"] == ("-bf" in name)


def test_seeds_for_starts_pick_each_start() -> None:
    starts = (7, 3, 7, 11)
    seeds = scenarios.seeds_for_starts(starts, first=50)
    assert len(set(seeds)) == len(seeds) and min(seeds) >= 50
    assert seeds == scenarios.seeds_for_starts(starts, first=50)
    with pytest.raises(SpecError):
        scenarios.seeds_for_starts(())


@pytest.mark.parametrize("name", ["rlsched-synlublin-test-v0", "rlsched-synlublin-bf-test-v0"])
def test_fresh_model_traces_are_independent_and_never_trained_on(name: str) -> None:
    sc = scenarios.get(name)
    eps = [episode_for(sc.env_id, sc.env_kwargs, seed) for seed in sc.seeds]
    seeds = [e.workload_seed for e in eps]
    # 60 distinct generated traces, all from the test share [1,000,000, 1,250,000) of the seeds
    # (the score-synlublin agents trained on seeds below 100,000).
    assert len(set(seeds)) == len(seeds) == 60
    assert min(seeds) >= 1_000_000 and max(seeds) < 1_250_000
    assert {len(e.jobs) for e in eps} == {1024} and {e.start for e in eps} == {0}
    assert eps[0].platform.clusters[0].nodes == 256
    again = episode_for(sc.env_id, sc.env_kwargs, sc.seeds[0])
    assert again.jobs == eps[0].jobs
    fresh = load("synthetic/lublin-256-v0", seed=seeds[0], n_jobs=1024, arrival_scale=0.83)
    assert [j.submit for j in fresh.jobs] == [j.submit for j in eps[0].jobs]


def test_fresh_seeds_skip_repeats_and_excluded_traces() -> None:
    n_seeds = 50  # a test share of 10 generator seeds: repeats come fast
    drawn = [scenarios.drawn_seed(s, n_seeds) for s in range(7, 40)]
    assert set(drawn) <= set(range(40, 50))
    seeds = scenarios.fresh_seeds(5, n_seeds, first=7, exclude=(drawn[0],))
    got = [scenarios.drawn_seed(s, n_seeds) for s in seeds]
    assert len(set(got)) == 5 and drawn[0] not in got and min(seeds) > 7
    # each kept seed is the first from 7 on whose draw is new
    firsts = {}
    for s, d in zip(range(7, 40), drawn, strict=True):
        firsts.setdefault(d, s)
    assert list(seeds) == sorted(s for d, s in firsts.items() if d != drawn[0])[:5]


@pytest.mark.parametrize("bf", ["", "-bf"])
def test_large_fresh_scenario_holds_1000_new_traces(bf: str) -> None:
    sc = scenarios.get(f"rlsched-synlublin{bf}-large-v0")
    assert sc.env_kwargs == scenarios.get(f"rlsched-synlublin{bf}-test-v0").env_kwargs
    drawn = [scenarios.drawn_seed(s, scenarios.SYNLUBLIN_SEEDS) for s in sc.seeds]
    assert len(set(drawn)) == len(drawn) == 1000
    assert min(drawn) >= 1_000_000 and max(drawn) < 1_250_000
    old = scenarios.get(f"rlsched-synlublin{bf}-test-v0")
    seen = {episode_for(old.env_id, old.env_kwargs, s).workload_seed for s in old.seeds}
    assert not seen & set(drawn) and not set(range(1_000_000, 1_000_060)) & set(drawn)
    for seed in sc.seeds[::250]:  # the draw is the env's
        assert episode_for(sc.env_id, sc.env_kwargs, seed).workload_seed == (
            scenarios.drawn_seed(seed, scenarios.SYNLUBLIN_SEEDS)
        )


@pytest.mark.parametrize("name", WINDOWS)
def test_fixed_seed_gives_fixed_start(name: str) -> None:
    sc = scenarios.get(name)
    starts = sc.env_kwargs["window_starts"]
    assert len(sc.seeds) == len(starts)
    got = [episode_for(sc.env_id, sc.env_kwargs, seed).start for seed in sc.seeds]
    assert got == list(starts)
    ep = episode_for(sc.env_id, sc.env_kwargs, sc.seeds[0])
    assert len(ep.jobs) == sc.env_kwargs["n_jobs"]


def test_starts_are_drawn_as_documented() -> None:
    lublin = load("rlsched/lublin256-v0")
    # The published Lublin-1 sequences: RLScheduler's evaluation script, seed 1.
    assert list(scenarios.RLSCHED_LUBLIN_STARTS) == rlscheduler_starts(len(lublin.jobs))
    # Test-split sequences: the same generator, inside the test split.
    test = splits_of(lublin)["test"]
    assert list(scenarios.RLSCHED_LUBLIN_TEST_STARTS) == split_starts(test.first, test.stop, 30)
    sdsc = splits_of(load("rlsched/sdsc-sp2-v0"))["test"]
    assert list(scenarios.RLSCHED_SDSC_TEST_STARTS) == split_starts(sdsc.first, sdsc.stop, 30)
    hpc2n = load("rlsched/hpc2n-v0")
    assert list(scenarios.RLSCHED_HPC2N_STARTS) == rlscheduler_starts(len(hpc2n.jobs), 30)
    # The test split of the HPC2N sample is too short for one sequence (why it is cross-trace).
    assert len(splits_of(hpc2n)["test"]) < 1024


def test_scenario_runs_the_published_sequence() -> None:
    """The bench's engine path on a scenario episode is the paper check's run of that sequence."""
    sc = scenarios.get("rlsched-lublin-v0")
    trace = read_rlscheduler_trace(resolve_file("lublin_256.swf.gz"))
    seed, start = sc.seeds[0], scenarios.RLSCHED_LUBLIN_STARTS[0]
    jobs = trace.jobs[start : start + 1024]
    for score, backfill in (("f1", False), ("sjf", True)):
        name = f"{score}-reserve" + ("-bf" if backfill else "")
        out = run_episode(name, sc.env_id, seed, sc.env_kwargs)
        assert out.summary["mean_bsld"] == reserve_bsld(trace, jobs, score, backfill)
        assert out.counts["unfinished"] == 0


def test_the_large_rigid_scenario_plays_1000_fresh_model_traces_none_played_before() -> None:
    from hpcgym.envs.episodes import env_config, episode_for

    sc = scenarios.get("rigid-synlublin-large-v0")
    assert sc.env_id == "hpcgym/Rigid-v0" and "easy-f1" in sc.policies
    # rigid-lublin-v1's preset: only the workload differs
    cfg, ref = (
        env_config(sc.env_id, sc.env_kwargs),
        env_config(sc.env_id, scenarios.get("rigid-lublin-v1").env_kwargs),
    )
    assert (cfg.n_jobs, cfg.platform, cfg.selection, cfg.queue_slots, cfg.split) == (
        ref.n_jobs,
        ref.platform,
        ref.selection,
        ref.queue_slots,
        "test",
    )
    drawn = [scenarios.drawn_seed(s, scenarios.SYNLUBLIN_SEEDS) for s in sc.seeds]
    assert len(set(drawn)) == len(drawn) == 1000
    assert min(drawn) >= 1_000_000 and max(drawn) < scenarios.SYNLUBLIN_SEEDS  # the test share
    before = set(scenarios.synlublin_seen()) | {
        scenarios.drawn_seed(s, scenarios.SYNLUBLIN_SEEDS) for s in scenarios.synlublin_large()
    }
    assert not before & set(drawn)
    for seed in sc.seeds[::250]:  # the draw is the env's, 256 jobs on 256 nodes
        ep = episode_for(sc.env_id, sc.env_kwargs, seed)
        assert ep.workload_seed == scenarios.drawn_seed(seed, scenarios.SYNLUBLIN_SEEDS)
        assert len(ep.jobs) == 256 and ep.platform.clusters[0].nodes == 256
