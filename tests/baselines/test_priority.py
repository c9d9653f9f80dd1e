"""RLScheduler's scores in reserve mode and in EASY: hand-computed schedules, equalities, rules."""

from __future__ import annotations

import math

import pytest
from baseline_helpers import rigid, run

from hpcgym.baselines import EasyPriority, PriorityReserve, make, names
from hpcgym.baselines.priority import REGISTERED_SCORES, SCORES
from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, SimConfig, Simulator
from hpcgym.workloads import load, transforms

# 4 nodes. J1 holds 3 nodes on [0, 10). J2 (2 nodes, 20 s) arrives at 1 and is chosen alone;
# J3 (2 nodes, 5 s) and J4 (1 node, 1 s) arrive while J2 waits.
WAITING = [rigid(1, 0, 10, 3), rigid(2, 1, 20, 2), rigid(3, 2, 5, 2), rigid(4, 3, 1, 1)]

# 4 nodes, F1 on the clock of a trace 10,000 s in (submit_offset): absolute s = 10000 + submit.
# J1 (3 nodes) runs on [0, 10); J5 (2 nodes) is chosen at 0.5 and waits; J2, J3, J4 queue.
# F1 = log10(r) * n + 870 * log10(s):
#   J2 (r 100, n 1, s 10001): 2 + 3480.0378 = 3482.04
#   J3 (r  10, n 4, s 10002): 4 + 3480.0755 = 3484.08
#   J4 (r   1, n 1, s 10003): 0 + 3480.1133 = 3480.11
# so F1 ranks J4, J2, J3; SJF ranks J4, J3, J2; FCFS J2, J3, J4.
RANKS = [
    rigid(1, 0, 10, 3),
    rigid(5, 0.5, 5, 2),
    rigid(2, 1, 100, 1),
    rigid(3, 2, 10, 4),
    rigid(4, 3, 1, 1),
]

# 4 nodes. J1 holds all on [0, 100); J2 is chosen at 1 and runs on [100, 110). At 100 the
# choice is between J3 (r 100, n 4, waited 98) and J4 (r 50, n 2, waited 50):
#   WFP3   = -(w/r)^3 n:       J3 -3.76, J4 -2    -> J3 first
#   UNICEP = -w/(log2(n) r):   J3 -0.49, J4 -1    -> J4 first
WAITED = [rigid(1, 0, 100, 4), rigid(2, 1, 10, 4), rigid(3, 2, 100, 4), rigid(4, 50, 50, 2)]

# 4 nodes, where reserve-mode backfilling and EASY differ. J1 (2 nodes) runs on [0, 10); J2
# (3 nodes) blocks at 1 with a reservation at 10 and 1 node to spare then.
# J3 (1 node, 8 s, from 2) would end exactly at 10; J4 (1 node, 100 s, from 3) after it.
SPARE = [rigid(1, 0, 10, 2), rigid(2, 1, 5, 3), rigid(3, 2, 8, 1), rigid(4, 3, 100, 1)]

# 4 nodes. J1 holds all on [0, 10); J2 (2 nodes, 50 s) queues at 1, J3 (3 nodes, 5 s) at 2.
REORDER = [rigid(1, 0, 10, 4), rigid(2, 1, 50, 2), rigid(3, 2, 5, 3)]


def test_registered_names() -> None:
    for score in REGISTERED_SCORES:
        assert {f"{score}-reserve", f"{score}-reserve-bf", f"easy-{score}"} <= set(names())
    assert make("f1-reserve-bf").backfill is True  # type: ignore[attr-defined]
    assert make("easy-wfp3").score == "wfp3"  # type: ignore[attr-defined]


def test_unknown_score_is_refused() -> None:
    with pytest.raises(SpecError, match="known: fcfs"):
        PriorityReserve(score="sjf3")
    with pytest.raises(SpecError, match="unknown score"):
        EasyPriority(score="")


def test_score_formulas() -> None:
    spec = JobSpec(1, 40.0, work=30.0, nodes=8, walltime=100.0)
    # r is the walltime (100), n 8, s = 40 + 960 = 1000, w = 140 - 40 = 100.
    assert SCORES["fcfs"](spec, 140.0, 960.0) == 1000.0
    assert SCORES["sjf"](spec, 140.0, 960.0) == 100.0
    assert SCORES["f1"](spec, 140.0, 960.0) == pytest.approx(2 * 8 + 870 * 3)
    assert SCORES["wfp3"](spec, 140.0, 960.0) == pytest.approx(-1.0 * 8)
    assert SCORES["unicep"](spec, 140.0, 960.0) == pytest.approx(-100 / (3 * 100))
    # As RLScheduler's code has it, the wait is -1 - s = -1001 whatever the time.
    assert SCORES["wfp3-as-coded"](spec, 140.0, 960.0) == pytest.approx(-((-10.01) ** 3) * 8)
    assert SCORES["unicep-as-coded"](spec, 0.0, 960.0) == pytest.approx(1001 / 300)
    # Edge cases: no estimate counts 0.1 s; F1 at s = 0 uses 0.1; one node floors log2(1).
    zero = JobSpec(2, 0.0, work=0.0, nodes=1)
    assert SCORES["f1"](zero, 0.0, 0.0) == pytest.approx(-1 + 870 * -1)
    assert SCORES["unicep"](zero, 5.0, 0.0) == pytest.approx(-5 / (1e-15 * 0.1))
    assert math.isfinite(SCORES["wfp3"](zero, 5.0, 0.0))


def test_sjf_reserve_waits_for_its_choice() -> None:
    # At 1 J2 is chosen (alone) and waits for nodes; J3 and J4 wait behind it, though J4
    # fits at 3. At 10 J2 starts; of J3 (5 s) and J4 (1 s) SJF picks J4, which fits; J3 then
    # waits for J4's end at 11.
    _, t = run(make("sjf-reserve"), WAITING, 4)
    assert t == {1: (0, 10), 2: (10, 30), 4: (10, 11), 3: (11, 16)}


def test_hpcgym_sjf_repicks_instead() -> None:
    # The engine's sjf re-picks at every event: J4 heads at 3 and fits; at 10 J3 goes first.
    _, t = run(make("sjf"), WAITING, 4)
    assert t == {1: (0, 10), 4: (3, 4), 3: (10, 15), 2: (10, 30)}


def test_sjf_reserve_bf_backfills_before_the_reservation() -> None:
    # J2's reservation at 1: J1's estimated end, 10. J3 needs 2 nodes (1 free): no. J4 ends at
    # 4 < 10: starts at 3. At 10 J2 starts, then J3 (alone in the queue) fits.
    sched = make("sjf-reserve-bf")
    _, t = run(sched, WAITING, 4)
    assert t == {1: (0, 10), 2: (10, 30), 3: (10, 15), 4: (3, 4)}


def test_fcfs_reserve() -> None:
    # At 10: J2, then J3 fill the machine; J4 waits for J3's end at 15.
    _, t = run(make("fcfs-reserve"), WAITING, 4)
    assert t == {1: (0, 10), 2: (10, 30), 3: (10, 15), 4: (15, 16)}


def test_f1_sjf_fcfs_rank_differently() -> None:
    # At 10 J5 starts (2 free left), then the ranking decides:
    # F1:   J4 [10, 11), J2 [10, 110); J3 (4 nodes) waits for J2: [110, 120).
    # SJF:  J4 [10, 11); J3 waits for J5's end: [15, 25); then J2 [25, 125).
    # FCFS: J2 [10, 110); J3 waits for J2: [110, 120); J4 after it: [120, 121).
    f1 = PriorityReserve(score="f1", submit_offset=10000.0)
    _, t = run(f1, RANKS, 4)
    assert t == {1: (0, 10), 5: (10, 15), 4: (10, 11), 2: (10, 110), 3: (110, 120)}
    _, t = run(make("sjf-reserve"), RANKS, 4)
    assert t == {1: (0, 10), 5: (10, 15), 4: (10, 11), 3: (15, 25), 2: (25, 125)}
    _, t = run(make("fcfs-reserve"), RANKS, 4)
    assert t == {1: (0, 10), 5: (10, 15), 2: (10, 110), 3: (110, 120), 4: (120, 121)}


def test_f1_reads_the_absolute_submit_time() -> None:
    # On the re-based clock (s = 1, 2, 3) the submit term dominates: 870 * log10(2) = 262 is
    # far more than the r, n terms, so F1 ranks like FCFS.
    _, t = run(make("f1-reserve"), RANKS, 4)
    _, fcfs = run(make("fcfs-reserve"), RANKS, 4)
    assert t == fcfs


def test_wfp3_and_unicep_use_the_wait_so_far() -> None:
    _, t = run(make("wfp3-reserve"), WAITED, 4)
    assert t == {1: (0, 100), 2: (100, 110), 3: (110, 210), 4: (210, 260)}
    _, t = run(make("unicep-reserve"), WAITED, 4)
    assert t == {1: (0, 100), 2: (100, 110), 4: (110, 160), 3: (160, 260)}


def test_reserve_bf_needs_an_end_strictly_before_the_reservation() -> None:
    # J3 would end at 10, the reservation: not strictly before, so it waits; J4 would use the
    # node J2 leaves spare, which reserve mode never does. At 10 J2 and J3 start; J4 is then
    # chosen and waits for J2's end (its reservation, 15).
    sched = make("fcfs-reserve-bf")
    _, t = run(sched, SPARE, 4)
    assert t == {1: (0, 10), 2: (10, 15), 3: (10, 18), 4: (15, 115)}


def test_easy_backfills_up_to_the_shadow_and_on_extra_nodes() -> None:
    # EASY (any score, here FCFS): J3 ends by the shadow time 10, J4 takes the extra node.
    for sched in (make("easy"), make("easy-fcfs")):
        _, t = run(sched, SPARE, 4)
        assert t == {1: (0, 10), 3: (2, 10), 4: (3, 103), 2: (10, 15)}


def test_easy_sjf_moves_the_reservation_to_a_better_ranked_arrival() -> None:
    # easy-sjf: J3 (5 s) arrives at 2 and outranks J2 (50 s): it takes the reservation and
    # starts at 10; J2 then waits for it.
    sched = make("easy-sjf")
    _, t = run(sched, REORDER, 4)
    assert t == {1: (0, 10), 3: (10, 15), 2: (15, 65)}
    # Reserve mode keeps its choice: J2 was chosen at 1, and J3 waits for it.
    _, t = run(make("sjf-reserve"), REORDER, 4)
    assert t == {1: (0, 10), 2: (10, 60), 3: (60, 65)}


def _starts(sched_name: str, jobs: list[JobSpec] | tuple[JobSpec, ...], platform) -> dict:  # type: ignore[no-untyped-def]
    sim = Simulator(platform, jobs, SimConfig(kill_on_walltime=False))
    make(sched_name).run(sim)
    assert sim.done
    return {jid: (j.start_time, j.end_time) for jid, j in sim.jobs.items()}


def _windows() -> list:  # type: ignore[type-arg]
    """Busy real windows: KTH and SDSC with user estimates, lublin with exact ones."""
    out = []
    for name, offset in (
        ("swf/kth-sp2-v0", 3000),
        ("swf/sdsc-sp2-v0", 20000),
        ("swf/lublin256-v0", 4000),
    ):
        w = load(name)
        w = transforms.first(w, offset + 400)
        w = transforms.window(w, w.jobs[offset].submit, w.jobs[-1].submit + 1)
        out.append(w)
    return out


@pytest.fixture(scope="module")
def windows() -> list:  # type: ignore[type-arg]
    return _windows()


def test_fcfs_reserve_is_fcfs(windows: list) -> None:  # type: ignore[type-arg]
    for w in windows:
        assert _starts("fcfs-reserve", w.jobs, w.platform) == _starts("fcfs", w.jobs, w.platform)


def test_easy_fcfs_is_easy(windows: list) -> None:  # type: ignore[type-arg]
    for w in windows:
        assert _starts("easy-fcfs", w.jobs, w.platform) == _starts("easy", w.jobs, w.platform)


def test_reserve_modes_differ_from_the_engine_classics(windows: list) -> None:  # type: ignore[type-arg]
    # Not a rule, but these windows are busy enough that the modes must part somewhere;
    # otherwise the equality tests above prove nothing about the other scores.
    w = windows[0]
    assert _starts("sjf-reserve", w.jobs, w.platform) != _starts("sjf", w.jobs, w.platform)
    assert _starts("fcfs-reserve-bf", w.jobs, w.platform) != _starts("easy", w.jobs, w.platform)


@pytest.mark.parametrize("name", [f"{s}-reserve-bf" for s in REGISTERED_SCORES])
def test_deterministic(name: str, windows: list) -> None:  # type: ignore[type-arg]
    w = windows[1]
    assert _starts(name, w.jobs, w.platform) == _starts(name, w.jobs, w.platform)


def test_one_instance_runs_two_episodes_alike(windows: list) -> None:  # type: ignore[type-arg]
    w = windows[2]
    sched = make("wfp3-reserve-bf")
    out = []
    for _ in range(2):
        sim = Simulator(w.platform, w.jobs)
        sched.run(sim)
        out.append([j.start_time for j in sim.jobs.values()])
    assert out[0] == out[1]
