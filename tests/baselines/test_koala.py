"""KOALA on hand-computed worlds: placement, tries, PRA/PWA with FPSMA/EGS, accepted sizes."""

from __future__ import annotations

import dataclasses

import pytest

from hpcgym.baselines.koala.malleability import (
    Policy,
    accept_grow,
    accept_shrink,
    grow,
    shrink,
    shrinkable,
)
from hpcgym.baselines.koala.scheduler import KOALA_VARIANTS, Koala, KoalaConfig
from hpcgym.errors import SpecError
from hpcgym.sim import FixedCost, JobKind, JobSpec, JobState, Platform, Simulator, SizeRule
from hpcgym.workloads.koala import FT, GADGET2


def rigid(i: int, submit: float, work: float, n: int) -> JobSpec:
    return JobSpec(i, submit, work=work, nodes=n)


def mall(
    i: int, submit: float, work: float, n: int, lo: int, hi: int, rule: SizeRule = SizeRule.ANY
) -> JobSpec:
    """Malleable, linear speedup: ``work`` seconds at ``n`` processors."""
    return JobSpec(
        i,
        submit,
        work=work,
        nodes=n,
        kind=JobKind.MALLEABLE,
        min_nodes=lo,
        max_nodes=hi,
        size_rule=rule,
    )


def run(clusters: list[int], jobs: list[JobSpec], **kw: object) -> tuple[Simulator, Koala, dict]:
    """Run KOALA; record every running job's (cluster, size) after each decision point."""
    sim = Simulator(Platform.multi(clusters), jobs)
    pol = Koala(**kw)  # type: ignore[arg-type]
    seen: dict[float, dict[int, tuple[int, int]]] = {}
    while sim.advance():
        pol.schedule(sim)
        seen[sim.now] = {j: (job.cluster, job.size) for j, job in sim.running.items()}
    return sim, pol, seen


def times(sim: Simulator) -> dict[int, tuple[float, float]]:
    return {j: (job.start_time, job.end_time) for j, job in sim.jobs.items()}


# ----------------------------------------------------------------------------- policies
def test_applications_accept_what_their_size_rule_allows() -> None:
    ft = FT.job(1, 0.0, malleable=True)
    gadget = GADGET2.job(2, 0.0, malleable=True)
    assert accept_grow(ft, 2, 10) == 8  # 12 offered, keeps 8, releases 4
    assert accept_grow(ft, 16, 100) == 32
    assert accept_grow(gadget, 2, 10) == 12
    assert accept_grow(gadget, 40, 10) == 46
    assert accept_shrink(ft, 16, 3) == 8  # asked 3, releases 8
    assert accept_shrink(ft, 4, 3) == 2  # stops at its minimum
    assert accept_shrink(gadget, 10, 3) == 7
    assert shrinkable(ft, 16) == 14 and shrinkable(gadget, 2) == 0


def test_fpsma_grows_oldest_first_and_shrinks_newest_first() -> None:
    ft, g = FT.job(1, 0.0, True), GADGET2.job(2, 0.0, True)
    assert grow(Policy.FPSMA, [(ft, 2), (g, 2)], 7) == [8, 3]
    assert grow(Policy.FPSMA, [(g, 44), (g, 2)], 7) == [46, 7]
    assert shrink(Policy.FPSMA, [(g, 10), (ft, 8)], 3) == [10, 4]
    assert shrink(Policy.FPSMA, [(g, 10), (g, 3)], 3) == [8, 2]


def test_egs_spreads_with_bonus_to_oldest_and_malus_to_newest() -> None:
    g, ft = GADGET2.job(1, 0.0, True), FT.job(2, 0.0, True)
    # 7 over 3: 2 each, the oldest gets the bonus; FT keeps 4 of its 2 + 2.
    assert grow(Policy.EGS, [(g, 2), (ft, 2), (g, 2)], 7) == [5, 4, 4]
    # What a job declines is split again: FT at 4 declines 1, GADGET-2 takes it.
    assert grow(Policy.EGS, [(g, 2), (ft, 4)], 3) == [5, 4]
    # Reclaim 7 from 3 jobs, newest first: 3 (malus), 2 (FT releases 4), 2.
    assert shrink(Policy.EGS, [(g, 10), (ft, 8), (g, 10)], 7) == [8, 4, 7]
    # A job at its minimum is skipped; the rest is asked of the others.
    assert shrink(Policy.EGS, [(g, 6), (g, 2)], 3) == [3, 2]


# ----------------------------------------------------------------------------- placement
def test_worst_fit_picks_the_cluster_with_most_idle_processors() -> None:
    jobs = [rigid(1, 0, 10, 2), rigid(2, 0, 10, 2), rigid(3, 0, 10, 2)]
    _, _, seen = run([4, 6, 5], jobs, approach="none")
    # Idle (4, 6, 5) -> cluster 1; (4, 4, 5) -> 2; (4, 4, 3) -> 0 (tie to the lowest index).
    assert seen[0.0] == {1: (1, 2), 2: (2, 2), 3: (0, 2)}


def test_queue_is_scanned_head_to_tail() -> None:
    jobs = [rigid(1, 0, 100, 3), rigid(2, 1, 10, 2), rigid(3, 2, 10, 1)]
    sim, _, _ = run([4], jobs, approach="none")
    assert times(sim) == {1: (0, 100), 2: (100, 110), 3: (2, 12)}


def test_a_job_fails_after_max_tries() -> None:
    # Job 2 is tried at t=1, 2 and 3: the third unsuccessful scan exceeds max_tries=2.
    jobs = [rigid(1, 0, 100, 2), rigid(2, 1, 10, 2), rigid(3, 2, 10, 1), rigid(4, 3, 10, 1)]
    sim, pol, _ = run([2], jobs, approach="none", max_tries=2)
    assert pol.failed == [2]
    assert sim.jobs[2].state is JobState.REJECTED and sim.jobs[2].end_time == 3.0
    assert times(sim)[3] == (100, 110) and times(sim)[4] == (100, 110)


def test_static_approach_keeps_malleable_jobs_at_their_initial_size() -> None:
    sim, pol, _ = run([8], [mall(1, 0, 100, 2, 2, 8)], approach="none")
    assert times(sim) == {1: (0, 100)} and pol.grows == 0


# ----------------------------------------------------------------------------- PRA
def _pra_world() -> list[JobSpec]:
    # Rigid C holds 4 of 8 processors until t=100; A and B (2..6, 400 and 500 s at 2) start at 2.
    return [rigid(3, 0, 100, 4), mall(1, 0, 400, 2, 2, 6), mall(2, 0, 500, 2, 2, 6)]


def test_pra_fpsma_gives_freed_processors_to_the_oldest_job() -> None:
    # t=100: A grows to 6 (rate 3): 300 s of work left -> ends 200. Then B grows 2 -> 6 with
    # 500 - 200 = 300 left -> ends 300.
    sim, _, seen = run([8], sorted(_pra_world(), key=lambda s: s.id), policy="fpsma")
    assert seen[100.0] == {1: (0, 6), 2: (0, 2)}
    assert times(sim) == {1: (0, 200), 2: (0, 300), 3: (0, 100)}


def test_pra_egs_spreads_freed_processors() -> None:
    # t=100: A and B grow to 4 (rate 2). A: 300 left -> ends 250. B: 400 left, 300 done by 250
    # (100 left), then 6 processors (rate 3): ends 250 + 100 / 3.
    sim, _, seen = run([8], sorted(_pra_world(), key=lambda s: s.id), policy="egs")
    assert seen[100.0] == {1: (0, 4), 2: (0, 4)}
    assert seen[250.0] == {2: (0, 6)}
    assert times(sim)[1] == (0, 250)
    assert times(sim)[2][1] == pytest.approx(250 + 100 / 3)


def test_pra_grows_running_jobs_before_placing_waiting_ones() -> None:
    # A (2..6) takes 6 of 8 at t=0. B (malleable, 2..6) arrives at t=1 and gets the 2 left,
    # since A is at its maximum. At t=2, rigid C (2) waits: nothing is idle.
    jobs = [mall(1, 0, 600, 2, 2, 6), mall(2, 1, 200, 2, 2, 6), rigid(3, 2, 10, 2)]
    sim, _, seen = run([8], jobs)
    assert seen[0.0] == {1: (0, 6)}
    assert seen[1.0] == {1: (0, 6), 2: (0, 2)}
    # A ends at 200 (600 s at rate 3): PRA grows B first (2 -> 6 takes 4 of the 6 freed), then
    # places C on the remaining 2.
    assert seen[200.0] == {2: (0, 6), 3: (0, 2)}
    assert times(sim)[3] == (200, 210)


def test_ft_keeps_a_power_of_two_and_releases_the_rest() -> None:
    ft = mall(1, 0, 100, 2, 2, 32, SizeRule.POWER_OF_TWO)
    _, _, seen = run([12], [ft, rigid(2, 1, 10, 4)])
    assert seen[0.0] == {1: (0, 8)}  # offered 10 more, keeps 8
    assert seen[1.0] == {1: (0, 8), 2: (0, 4)}


def test_threshold_keeps_processors_free_for_local_users() -> None:
    _, _, seen = run([8], [mall(1, 0, 600, 2, 2, 8), rigid(2, 1, 10, 2)], keep_free=2)
    assert seen[0.0] == {1: (0, 6)}
    assert seen[1.0] == {1: (0, 6), 2: (0, 2)}


def test_the_manager_works_per_cluster() -> None:
    _, _, seen = run([4, 4], [mall(1, 0, 100, 1, 1, 8), rigid(2, 1, 10, 4)])
    assert seen[1.0] == {1: (0, 4), 2: (1, 4)}


# ----------------------------------------------------------------------------- PWA
def test_pwa_shrinks_running_jobs_to_place_the_head_then_grows_them_back() -> None:
    # A (2..8, 800 s at 2) grows to 8 (rate 4) at t=0; 40 done by t=10. Rigid B (4, 100 s)
    # arrives: A shrinks to 4 (rate 2). At 110 B ends and A grows back to 8 with
    # 800 - 40 - 200 = 560 left: ends 250.
    jobs = [mall(1, 0, 800, 2, 2, 8), rigid(2, 10, 100, 4)]
    for policy in ("fpsma", "egs"):
        sim, pol, seen = run([8], jobs, approach="pwa", policy=policy)
        assert seen[10.0] == {1: (0, 4), 2: (0, 4)}
        assert seen[110.0] == {1: (0, 8)}
        assert times(sim) == {1: (0, 250), 2: (10, 110)}
        assert (pol.grows, pol.shrinks) == (2, 1)


def test_pwa_places_the_job_when_the_shrunk_job_has_released_its_processors() -> None:
    # Resizes cost 5 s without progress. A grows to 8 at t=0 (busy until 5; 20 s of work done
    # by 10 at rate 4). B arrives at 10: A shrinks to 4 (busy until 15) and B starts at 15, on
    # the processors held for it; A grows back when B ends (115, busy until 120) with
    # 800 - 20 - 200 = 580 left at rate 4: ends 265.
    cost = FixedCost(5.0)
    jobs = [
        dataclasses.replace(mall(1, 0, 800, 2, 2, 8), reconfig=cost),
        rigid(2, 10, 100, 4),
    ]
    sim, pol, seen = run([8], jobs, approach="pwa")
    assert seen[10.0] == {1: (0, 4)} and pol.pending == {}
    assert times(sim) == {1: (0, 265), 2: (15, 115)}


def test_pwa_fpsma_and_egs_differ_in_whom_they_grow_and_shrink() -> None:
    jobs = [mall(1, 0, 900, 2, 2, 6), mall(2, 0, 900, 2, 2, 6), rigid(3, 10, 50, 4)]
    _, _, fp = run([8], jobs, approach="pwa", policy="fpsma")
    _, _, eq = run([8], jobs, approach="pwa", policy="egs")
    assert fp[0.0] == {1: (0, 6), 2: (0, 2)}
    assert eq[0.0] == {1: (0, 4), 2: (0, 4)}
    # C needs 4: FPSMA asks the newest (B, at its minimum) then A (6 -> 2); EGS takes 2 + 2.
    assert fp[10.0] == {1: (0, 2), 2: (0, 2), 3: (0, 4)}
    assert eq[10.0] == {1: (0, 2), 2: (0, 2), 3: (0, 4)}


def test_pwa_grows_instead_when_shrinking_cannot_make_room() -> None:
    # A can give back only 2 of 4: rigid B (4) waits for A's end; meanwhile A keeps 4.
    jobs = [mall(1, 0, 400, 2, 2, 4), rigid(2, 10, 10, 4)]
    sim, pol, seen = run([4], jobs, approach="pwa")
    assert seen[10.0] == {1: (0, 4)}
    assert times(sim) == {1: (0, 200), 2: (200, 210)} and pol.shrinks == 0


def test_config_validation_and_presets() -> None:
    with pytest.raises(SpecError, match="Close-to-Files"):
        KoalaConfig(placement="close-to-files")
    for bad in ({"approach": "both"}, {"max_tries": 0}, {"keep_free": -1}):
        with pytest.raises((SpecError, ValueError)):
            KoalaConfig(**bad)
    with pytest.raises(ValueError):
        KoalaConfig(policy="equipartition")
    for kwargs in KOALA_VARIANTS.values():
        Koala(**kwargs)


# ----------------------------------------------------------------------------- local users
def _local_world(cost: float = 0.0) -> list[JobSpec]:
    # A and B (2..8, 600 s at 2, linear) start at 0; local L (rigid 4, 100 s) arrives at 10.
    a, b = mall(1, 0, 600, 2, 2, 8), mall(2, 0, 600, 2, 2, 8)
    if cost:
        a, b = (dataclasses.replace(j, reconfig=FixedCost(cost)) for j in (a, b))
    return [a, b, rigid(3, 10, 100, 4)]


def test_a_local_job_preempts_grows_and_fpsma_and_egs_differ() -> None:
    # FPSMA: A grows to 6 at 0 (30 done by 10, B 10). L takes 4: B is at its minimum, so A
    # shrinks 6 -> 2. At 110 (A 130, B 110 done) A grows back to 6: 470 left at rate 3, ends
    # 266.67; B (490 - 156.67 = 333.33 left) then grows to 8: ends 266.67 + 83.33 = 350.
    # EGS: A and B at 4 (20 done each by 10), both shrink to 2 (120 done by 110), both grow
    # back to 4: 480 left at rate 2, both end at 350.
    sim, pol, seen = run([8], _local_world(), policy="fpsma", background={3: 0})
    assert seen[10.0] == {1: (0, 2), 2: (0, 2), 3: (0, 4)}
    assert seen[110.0] == {1: (0, 6), 2: (0, 2)}
    t = times(sim)
    assert t[1][1] == pytest.approx(110 + 470 / 3) and t[2][1] == pytest.approx(350)
    assert t[3] == (10, 110) and pol.preempted == 1
    sim, pol, seen = run([8], _local_world(), policy="egs", background={3: 0})
    assert seen[0.0] == {1: (0, 4), 2: (0, 4)}
    assert seen[110.0] == {1: (0, 4), 2: (0, 4)}
    assert {j: e for j, (_, e) in times(sim).items()} == {1: 350, 2: 350, 3: 110}
    assert pol.preempted == 2


def test_a_local_job_waits_for_the_shrunk_job_to_release_its_processors() -> None:
    # Resizes cost 5 s: A and B are busy until 5 after the grow at 0; at 10 FPSMA shrinks A
    # (busy until 15) and L starts at 15 on the processors held for it.
    sim, pol, seen = run([8], _local_world(5.0), policy="fpsma", background={3: 0})
    assert seen[10.0] == {1: (0, 2), 2: (0, 2)}
    assert seen[15.0] == {1: (0, 2), 2: (0, 2), 3: (0, 4)}
    assert times(sim)[3] == (15, 115) and pol.preempted == 1


def test_local_jobs_stay_on_their_cluster_and_koala_never_places_them() -> None:
    # KOALA's rigid job takes 5 of cluster 0's 6. Worst-Fit would put the local job on cluster
    # 1 (4 idle); it belongs to cluster 0 and waits there for the rigid job (never shrunk).
    jobs = [rigid(1, 0, 50, 5), rigid(2, 1, 10, 2)]
    sim, pol, seen = run([6, 4], jobs, background={2: 0})
    assert seen[1.0] == {1: (0, 5)} and seen[50.0] == {2: (0, 2)}
    assert times(sim)[2] == (50, 60)
    assert pol.tries == {}  # a local job is not in KOALA's placement queue


def test_background_jobs_are_reproducible_and_carry_the_asked_load() -> None:
    from hpcgym.baselines.koala.background import background_jobs

    plat = Platform.multi([64, 32])
    a, where = background_jobs(plat, load=0.5, span=200_000, seed=3, first_id=1000)
    b, _ = background_jobs(plat, load=0.5, span=200_000, seed=3, first_id=1000)
    assert a == b and [j.id for j in a] == list(range(1000, 1000 + len(a)))
    assert [j.submit for j in a] == sorted(j.submit for j in a)
    for k, size in enumerate((64, 32)):
        mine = [j for j in a if where[j.id] == k]
        demand = sum(j.nodes * j.work for j in mine) / 200_000 / size
        assert 0.4 < demand < 0.6 and max(j.nodes for j in mine) <= 16
    with pytest.raises(SpecError):
        background_jobs(plat, load=1.0, span=10, seed=0, first_id=1)
