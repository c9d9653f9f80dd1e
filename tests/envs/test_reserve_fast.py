"""Reserve mode's fast paths against the plain ones they replace, on played episodes.

- ``ReserveSelection.decide`` (the decision point built without the menu's mask, the mask
  cached by the window's length) against ``ActionMenu.decide`` followed by
  ``ReserveSelection.mask``, at every decision point, also with a machine smaller than the
  largest job (the uncached mask);
- the backfilling pass (over ``EngineCore.queued_jobs``) against the pass it replaced, a copy
  of which is played here through the env: the same observations, masks and rewards;
- the observation's C row filler (``_batchcore.fill_rows``) against the numpy path the encoder
  takes without it, bit for bit.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hpcgym  # noqa: F401
from hpcgym.envs.reserve import ReserveSelection
from hpcgym.sim.planning import estimated_end, runtime_estimate, shadow

RESERVE = {"n_jobs": 128, "queue_slots": 64, "selection": "reserve", "kill_on_walltime": False}


def _random_play(env: gym.Env[Any, Any], steps: int, seed: int, each: Any = None) -> list[Any]:
    """``steps`` random legal steps (resets inside); what ``each(obs, reward, info)`` returns."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [each(obs, 0.0, info)] if each else []
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(legal[int(rng.random() * legal.size)])
        if each:
            out.append(each(obs, r, info))
        if term or trunc:
            obs, info = env.reset()
    return out


def _same_decision(a: Any, b: Any) -> None:
    assert a.queue_rows == b.queue_rows
    assert a.run_rows == b.run_rows
    assert a.susp_rows == b.susp_rows
    assert list(a.start) == list(b.start)
    assert list(a.fits) == list(b.fits)
    assert a.holding == b.holding
    assert a.choice == b.choice
    assert a.mask.dtype == b.mask.dtype
    assert np.array_equal(a.mask, b.mask)
    for name in ("cosched", "shrink", "expand", "grant", "suspend", "resume", "lend", "reclaim"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("machine_cut", [0, 40])
def test_fast_decision_equals_menu_decision_and_mask(backfill: bool, machine_cut: int) -> None:
    env = gym.make("hpcgym/Rigid-v0", reserve_backfill=backfill, **RESERVE)
    u = env.unwrapped
    checked = {"cached": 0, "uncached": 0}

    def check(obs: Any, r: float, info: Any) -> None:
        reserve = u.reserve
        machine = reserve.machine - machine_cut
        fresh = ReserveSelection(reserve.backfill, reserve.offset, machine)
        fast, choice = fresh.decide(u.menu, u.ledger, u.capacity)
        slow = u.menu.decide(u.ledger, u.capacity)
        slow.mask = slow.mask.copy()
        slow_choice = fresh.mask(slow.mask, slow.queue_rows, u.ledger)
        _same_decision(fast, slow)
        assert choice == slow_choice
        checked["cached" if fresh._all_fit else "uncached"] += 1
        # The env's own decision (cached masks reused across steps) is the same too.
        if machine_cut == 0:
            _same_decision(u.decision, fast)
            assert u.decision.mask is not fast.mask

    _random_play(env, 600, seed=3, each=check)
    assert checked["cached" if machine_cut == 0 else "uncached"] > 500


class _ReferenceReserve:
    """Reserve mode's commit and backfilling pass as they were before the fast pass."""

    def __init__(self, real: ReserveSelection) -> None:
        self.real = real
        self.backfill = real.backfill
        self.offset = real.offset
        self.machine = real.machine

    def decide(self, menu: Any, ledger: Any, cap: Any) -> Any:
        d = menu.decide(ledger, cap)
        d.mask = d.mask.copy()
        return d, self.real.mask(d.mask, d.queue_rows, ledger)

    def settle(self, menu: Any, ledger: Any, cap: Any, sim: Any, cmd: Any, skip: bool) -> Any:
        while True:
            d, choice = self.decide(menu, ledger, cap)
            if choice or not skip or sim.done:
                return d
            cmd.advance()

    def commit(self, row: int, sim: Any, cmd: Any) -> None:
        job = cmd.ledger.jobs[row]
        jid = job.spec.id
        need = job.spec.nodes
        limit = None
        while True:
            free = sim.pool.free[0]
            if need <= free:
                cmd.start(row)
                return
            if self.backfill:
                if limit is None:
                    releases = sorted((estimated_end(sim, j), j.size) for j in sim.running.values())
                    limit = shadow(sim.now, free, need, releases)[0]
                self._backfill(jid, limit, sim, cmd)
            if not cmd.advance():
                return
            if jid not in sim.queue:
                return

    @staticmethod
    def _backfill(chosen: int, limit: float, sim: Any, cmd: Any) -> None:
        free = sim.pool.free[0]
        now = sim.now
        row_of = cmd.ledger.row_of
        for jid, job in list(sim.queue.items()):
            if free == 0:
                return
            n = job.spec.nodes
            if jid == chosen or n > free:
                continue
            if now + runtime_estimate(job.spec) < limit:
                cmd.start(row_of[jid])
                free -= n


def _trace(obs: Any, r: float, info: Any) -> tuple[Any, ...]:
    return (
        tuple(np.asarray(obs[k]).tobytes() for k in sorted(obs)),
        info["action_mask"].tobytes(),
        r,
        info["time"],
        tuple(sorted(info.get("metrics", {}).items())),
    )


@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_reserve_steps_equal_the_reference_pass(backfill: bool, seed: int) -> None:
    fast = gym.make("hpcgym/Rigid-v0", reserve_backfill=backfill, **RESERVE)
    ref = gym.make("hpcgym/Rigid-v0", reserve_backfill=backfill, **RESERVE)
    ref.unwrapped.reserve = _ReferenceReserve(ref.unwrapped.reserve)
    a = _random_play(fast, 1500, seed, _trace)
    b = _random_play(ref, 1500, seed, _trace)
    assert a == b


def test_queued_jobs_lists_the_queue_in_order() -> None:
    env = gym.make("hpcgym/Rigid-v0", **RESERVE)
    u = env.unwrapped
    seen = []

    def check(obs: Any, r: float, info: Any) -> None:
        jobs = u.sim.queued_jobs()
        assert jobs == list(u.sim.queue.values())
        seen.append(len(jobs))

    _random_play(env, 300, seed=2, each=check)
    assert max(seen) > 1


# ------------------------------------------------------------------ C row filler
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("hpcgym/Rigid-v0", RESERVE),
        ("hpcgym/Rigid-v0", {**RESERVE, "reserve_backfill": True, "observation": "flat"}),
        ("hpcgym/Rigid-v0", {}),
        ("hpcgym/Malleable-v1", {}),
        ("hpcgym/Shared-v1", {}),
    ],
)
def test_observations_are_the_same_without_the_c_helpers(env_id: str, kwargs: Any) -> None:
    fast = gym.make(env_id, **kwargs)
    if fast.unwrapped.encoder.fill_rows is None:
        pytest.skip("pure-Python install: only the numpy path exists")
    plain = gym.make(env_id, **kwargs)
    plain.unwrapped.encoder.fill_rows = None
    plain.unwrapped.encoder.put_floats = None

    def obs_bytes(obs: Any, r: float, info: Any) -> Any:
        if isinstance(obs, dict):
            return tuple((k, obs[k].dtype.str, obs[k].shape, obs[k].tobytes()) for k in obs)
        return (obs.dtype.str, obs.shape, obs.tobytes())

    assert _random_play(fast, 800, 5, obs_bytes) == _random_play(plain, 800, 5, obs_bytes)


_floats = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 20),
    width=st.integers(1, 16),
    data=st.data(),
    now=_floats,
    scale=st.sampled_from([3600.0, 86400.0, 1.0]),
)
def test_fill_rows_equals_numpy(n: int, width: int, data: Any, now: float, scale: float) -> None:
    core = pytest.importorskip("hpcgym.sim._batchcore")
    table = np.asarray(
        data.draw(st.lists(_floats, min_size=2 * n * width, max_size=2 * n * width)),
        dtype=np.float32,
    ).reshape(2 * n, width)
    slots = data.draw(st.integers(1, 12))
    rows = data.draw(st.lists(st.integers(0, n - 1), max_size=slots))
    fits = data.draw(st.none() | st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    since_values = data.draw(st.lists(_floats, min_size=n, max_size=n))
    until_values = data.draw(st.lists(_floats, min_size=n, max_size=n))
    since = data.draw(st.integers(-1, width - 1))
    until = data.draw(st.integers(-1, width - 1))
    # x / (x + scale) with x + scale == 0 raises in Python (the reference below); no time is so.
    assume(since < 0 or all(now - since_values[r] + scale != 0.0 for r in rows))
    out = np.zeros((slots, width), dtype=np.float32)
    core.fill_rows(
        out, table, width, rows, fits, n, now, scale, since, since_values, until, until_values
    )
    want = np.zeros((slots, width), dtype=np.float32)
    k = len(rows)
    if k:
        flags = fits if fits is not None else [True] * k
        want[:k] = table.take([r if f else r + n for r, f in zip(rows, flags, strict=True)], 0)
        with np.errstate(all="ignore"):
            if since >= 0:
                want[:k, since] = [(x := now - since_values[r]) / (x + scale) for r in rows]
            if until >= 0:
                want[:k, until] = [
                    y / (y + scale) if (y := until_values[r] - now) > 0 else 0.0 for r in rows
                ]
    assert out.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, -0.0]),
        max_size=12,
    ),
    data=st.data(),
)
def test_put_floats_equals_numpy(values: list[float], data: Any) -> None:
    core = pytest.importorskip("hpcgym.sim._batchcore")
    out = np.zeros((3, 12), dtype=np.float32)
    offset = data.draw(st.integers(0, 36 - len(values)))
    assert core.put_floats(out, offset, tuple(values)) is True
    want = np.zeros((3, 12), dtype=np.float32)
    with np.errstate(all="ignore"):
        want.reshape(-1)[offset : offset + len(values)] = values
    assert out.tobytes() == want.tobytes()


def test_put_floats_leaves_other_values_to_numpy() -> None:
    core = pytest.importorskip("hpcgym.sim._batchcore")
    out = np.zeros(4, dtype=np.float32)
    assert core.put_floats(out, 0, (1.0, 2)) is False
    assert core.put_floats(out, 0, (1.0, np.float64(2.0))) is False
    assert not out.any()
    with pytest.raises(IndexError):
        core.put_floats(out, 3, (1.0, 2.0))
    with pytest.raises(TypeError):
        core.put_floats(np.zeros(4), 0, (1.0,))


def test_fill_rows_refuses_bad_arguments() -> None:
    core = pytest.importorskip("hpcgym.sim._batchcore")
    table = np.ones((4, 3), dtype=np.float32)
    out = np.zeros((2, 3), dtype=np.float32)
    vals = [1.0, 2.0]

    def fill(*args: Any) -> None:
        core.fill_rows(*args)

    with pytest.raises(IndexError):
        fill(out, table, 3, [4], None, 0, 0.0, 1.0, -1, [], -1, [])
    with pytest.raises(IndexError):
        fill(out, table, 3, [1], [False], 3, 0.0, 1.0, -1, [], -1, [])
    with pytest.raises(ValueError, match="fewer rows"):
        fill(out, table, 3, [0, 1, 2], None, 0, 0.0, 1.0, -1, [], -1, [])
    with pytest.raises(ValueError, match="fits"):
        fill(out, table, 3, [0, 1], [True], 0, 0.0, 1.0, -1, [], -1, [])
    with pytest.raises(TypeError):
        fill(np.zeros((2, 3)), table, 3, [0], None, 0, 0.0, 1.0, -1, [], -1, [])
    with pytest.raises(ValueError):
        fill(out[:, :2], table, 3, [0], None, 0, 0.0, 1.0, -1, [], -1, [])  # not contiguous
    with pytest.raises(IndexError):
        fill(out, table, 3, [3], None, 0, 0.0, 1.0, 0, vals, -1, [])
    with pytest.raises(ValueError, match="width"):
        fill(out, table, 3, [0], None, 0, 0.0, 1.0, 3, vals, -1, [])
    with pytest.raises(TypeError, match="12 arguments"):
        core.fill_rows(out, table)


def _full_trace(env: gym.Env[Any, Any], steps: int, seed: int, plain: bool) -> list[Any]:
    """Every step's observation, reward, flags and info, as bytes and reprs; ``plain``: through
    the interpreted ``ClusterEnv.step`` (the compiled ``ReserveStep`` taken out at each reset).
    Actions: mostly legal ones, some illegal or out of range, of several integer types."""
    u = env.unwrapped
    rng = np.random.default_rng(seed)

    def reset(**kw: Any) -> Any:
        out = env.reset(**kw)
        if plain:
            u._fast = None
        else:
            assert u._fast is not None
        return out

    def record(obs: Any, r: Any, term: bool, trunc: bool, info: dict[str, Any]) -> Any:
        return (
            tuple((k, np.asarray(v).tobytes()) for k, v in obs.items()),
            repr(r),
            type(r),
            term,
            trunc,
            info["action_mask"].tobytes(),
            repr({k: v for k, v in info.items() if k != "action_mask"}),
        )

    obs, info = reset(seed=seed)
    out = [record(obs, 0.0, False, False, info)]
    for k in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        x = rng.random()
        if x < 0.03:
            action: Any = int(rng.integers(-2, env.action_space.n + 3))
        else:
            action = legal[int(rng.random() * legal.size)]
            if k % 7 == 0:
                action = np.array([action]) if k % 2 else np.int32(action)
        obs, r, term, trunc, info = env.step(action)
        out.append(record(obs, r, term, trunc, info))
        if term or trunc:
            obs, info = reset()
    return out


@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("extra", [{}, {"max_steps": 40, "invalid_penalty": 2}])
def test_compiled_reserve_step_equals_the_interpreted_step(
    backfill: bool, extra: dict[str, Any]
) -> None:
    kwargs = {**RESERVE, "reserve_backfill": backfill, **extra}
    fast = gym.make("hpcgym/Rigid-v0", **kwargs)
    plain = gym.make("hpcgym/Rigid-v0", **kwargs)
    assert _full_trace(fast, 1200, 5, False) == _full_trace(plain, 1200, 5, True)
