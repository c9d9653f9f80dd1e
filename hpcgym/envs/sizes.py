"""Size arithmetic under a job's size rule, and the resize and grant targets of running jobs.

Rule codes follow ``hpcgym.envs.ledger.RULES``: 0 any size, 1 powers of two, 2 multiples of k.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from hpcgym.envs.capacity import Capacity
from hpcgym.envs.config import EXPAND_SPARE, SHRINK_CUT, EnvConfig, exact_size, level_fraction
from hpcgym.envs.ledger import JobLedger
from hpcgym.sim.job import JobState

_RUNNING: Final = JobState.RUNNING
_MALLEABLE: Final = 2
_NO_GRANTS: Final = np.zeros(0, dtype=bool)
_NO_GRANTS.flags.writeable = False


def accepted_floor(rule: int, multiple: int, lo: int, hi: int, x: int) -> int:
    """Largest size in ``[lo, min(hi, x)]`` that the size rule accepts, or 0."""
    x = min(hi, x)
    if x < lo or x < 1:
        return 0
    if rule == 1:
        x = 1 << (x.bit_length() - 1)
    elif rule == 2:
        x -= x % multiple
    return x if x >= lo else 0


def accepted_ceil(rule: int, multiple: int, lo: int, hi: int, x: int) -> int:
    """Smallest size in ``[max(lo, x), hi]`` that the size rule accepts, or 0."""
    x = max(lo, x, 1)
    if x > hi:
        return 0
    if rule == 1:
        x = 1 << (x - 1).bit_length()
    elif rule == 2:
        x = multiple * math.ceil(x / multiple)
    return x if x <= hi else 0


def floor_sizes(
    rule: np.ndarray, multiple: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """Vectorized :func:`accepted_floor`."""
    x = np.minimum(hi, x)
    safe = np.maximum(x, 1)
    pow2 = np.left_shift(1, np.floor(np.log2(safe)).astype(np.int64))
    out = np.where(rule == 1, pow2, np.where(rule == 2, x - x % multiple, x))
    return np.where((x >= lo) & (x >= 1) & (out >= lo), out, 0)


_SIZE_PLANS: dict[tuple[object, ...], tuple[list[int], list[int]]] = {}
"""Room-independent resize targets by (levels, rule, multiple, min, max, size): see below."""

_FIT: Final = -1
_SPARE: Final = -2
"""``_FIT`` and ``_SPARE``: expand targets that depend on the room left in the job's cluster
(kept symbolic)."""


_Plan = tuple[object, list[float | None], list[float | None], list[int | None], list[int | None]]
_LEVELS: dict[object, _Plan] = {}
"""Parsed levels by (shrink levels, expand levels): see ``_level_plan``."""


def _level_plan(cfg: EnvConfig) -> _Plan:
    """The levels' cache key, ``cut``/``spare`` fractions and exact sizes (``n<k>``).

    Parsed once per config, for the shrink and expand levels.
    """
    key = (cfg.shrink_levels, cfg.expand_levels)
    plan = _LEVELS.get(key)
    if plan is None:
        cuts = [level_fraction(level, SHRINK_CUT) for level in cfg.shrink_levels]
        spares = [level_fraction(level, EXPAND_SPARE) for level in cfg.expand_levels]
        shrink_n = [exact_size(level) for level in cfg.shrink_levels]
        expand_n = [exact_size(level) for level in cfg.expand_levels]
        plan = _LEVELS[key] = (key, cuts, spares, shrink_n, expand_n)
    return plan


def _size_plan(
    cfg: EnvConfig, rule: int, mult: int, lo: int, hi: int, n: int
) -> tuple[list[int], list[int]]:
    """Shrink targets (0: none) and expand targets of a job of ``n`` tasks before room is known.

    Expand entries are a size (legal if it fits the room), ``_FIT`` or ``_SPARE``. They depend
    only on the levels, the size rule and ``n``, so they are computed once per combination.
    """
    key, cuts, spares, shrink_n, expand_n = _level_plan(cfg)
    full = (key, rule, mult, lo, hi, n)
    plan = _SIZE_PLANS.get(full)
    if plan is not None:
        return plan
    shrink = []
    for k, level in enumerate(cfg.shrink_levels):
        cut, exact = cuts[k], shrink_n[k]
        if exact is not None:
            t = exact if accepted_floor(rule, mult, lo, hi, exact) == exact else 0
        elif cut is not None:
            t = accepted_floor(rule, mult, lo, hi, n - max(1, math.floor(cut * n)))
        elif level == "one":
            t = accepted_floor(rule, mult, lo, hi, n - 1)
        elif level == "half":
            t = accepted_floor(rule, mult, lo, hi, n // 2) or accepted_ceil(rule, mult, lo, hi, lo)
        else:
            t = accepted_ceil(rule, mult, lo, hi, lo)
        shrink.append(t if 0 < t < n else 0)
    expand = []
    for k, level in enumerate(cfg.expand_levels):
        exact = expand_n[k]
        if exact is not None:
            expand.append(exact if accepted_floor(rule, mult, lo, hi, exact) == exact else 0)
        elif spares[k] is not None:
            expand.append(_SPARE)
        elif level == "one":
            expand.append(accepted_ceil(rule, mult, lo, hi, n + 1))
        elif level == "double":
            expand.append(accepted_floor(rule, mult, lo, hi, 2 * n))
        else:
            expand.append(_FIT)
    if len(_SIZE_PLANS) > 65536:
        _SIZE_PLANS.clear()
    plan = _SIZE_PLANS[full] = (shrink, expand)
    return plan


_TARGETS: dict[tuple[object, ...], tuple[list[int], list[int], bool]] = {}
"""Shrink and expand targets by (levels, rule, multiple, min, max, size, room): see below."""


def _targets(
    cfg: EnvConfig, key: object, rule: int, mult: int, lo: int, hi: int, n: int, room: int
) -> tuple[list[int], list[int], bool]:
    """Shrink and expand targets (0: not legal) of a running malleable job, and whether any is.

    They depend only on the levels, the size rule, the size ``n`` and the ``room`` left in the
    job's cluster, so each combination is computed once (``key``: the levels' cache key).
    """
    full = (key, rule, mult, lo, hi, n, room)
    hit = _TARGETS.get(full)
    if hit is not None:
        return hit
    shrink, fixed = _size_plan(cfg, rule, mult, lo, hi, n)
    spares = _level_plan(cfg)[2]
    expand = []
    for k, t in enumerate(fixed):
        if t == _FIT:
            t = accepted_floor(rule, mult, lo, hi, n + room)
        elif t == _SPARE:
            t = accepted_floor(rule, mult, lo, hi, n + math.floor(spares[k] * room))  # type: ignore[operator]
        expand.append(t if n < t <= n + room else 0)
    if len(_TARGETS) > 65536:
        _TARGETS.clear()
    hit = _TARGETS[full] = (shrink, expand, any(shrink) or any(expand))
    return hit


def levels_key(cfg: EnvConfig) -> object:
    """The cache key of ``cfg``'s resize levels (compute it once; see ``running_targets``)."""
    return _level_plan(cfg)[0]


def running_targets(
    ledger: JobLedger,
    cap: Capacity,
    rows: list[int],
    cfg: EnvConfig,
    key: object = None,
) -> tuple[list[list[int]], list[list[int]], np.ndarray, bool]:
    """Shrink and expand target sizes (0: not legal) and grant flags of the running window.

    Targets are lists indexed ``[slot][level]``, one row per window row; rows are shared with a
    cache, so read them only.

    Shrink targets: ``one`` the next accepted size below, ``half`` the largest accepted size
    ``<= size // 2`` (else the smallest accepted), ``min`` the smallest accepted. Expand targets:
    ``one`` the next accepted size above, ``double`` the largest accepted ``<= 2 * size``,
    ``fit`` the largest accepted that the job's cluster has room for. Opt-in: shrink ``cut<f>``
    the largest accepted ``<= size - max(1, floor(f * size))``, expand ``spare<f>`` the largest
    accepted ``<= size + floor(f * room)``, and both ``n<k>`` exactly ``k`` tasks. Only running
    (not reconfiguring) malleable jobs resize, and only those within ``cfg.resize_budget``
    have non-zero targets; a grant needs room for the extra tasks. The last value tells whether
    any of them is legal before the budget (whether the point is a decision point: the budget
    narrows the mask, as the training guard did, and moves no decision point). Each job's
    targets come from a cache keyed by size, size rule and room (``_targets``); ``key`` is
    ``levels_key(cfg)``, computed here when not given.
    """
    n_s, n_e = len(cfg.shrink_levels), len(cfg.expand_levels)
    grant = np.zeros(len(rows), dtype=bool) if cfg.grant else _NO_GRANTS
    legal = False
    if not (n_s or n_e or cfg.grant):
        return [[]] * len(rows), [[]] * len(rows), grant, legal
    jobs, kinds = ledger.jobs, ledger.kind_list
    rules, mults = ledger.rule_list, ledger.multiple_list
    mins, maxs = ledger.min_list, ledger.max_list
    needs, mems, simple = ledger.cpu_need_list, ledger.mem_list, ledger.simple
    free = cap.free
    if key is None:
        key = _level_plan(cfg)[0]
    grants = cfg.grant
    budget = cfg.resize_budget
    none_s, none_e = [0] * n_s, [0] * n_e
    shrink_rows: list[list[int]] = []
    expand_rows: list[list[int]] = []
    for i, r in enumerate(rows):
        job = jobs[r]
        shrink_rows.append(none_s)
        expand_rows.append(none_e)
        if job.state is not _RUNNING:
            continue
        n = job.size
        if grants and job.request:
            ok = job.request - n <= cap.room_in(job.cluster, needs[r], mems[r], simple)
            grant[i] = ok
            legal = legal or ok
        if kinds[r] != _MALLEABLE:
            continue
        if n_e:
            room = (
                free[job.cluster] if simple else cap.room_in(job.cluster, needs[r], mems[r], False)
            )
        else:
            room = 0
        shrink, expand, ok = _targets(cfg, key, rules[r], mults[r], mins[r], maxs[r], n, room)
        legal = legal or ok
        if budget is not None and job.reconfigurations >= budget:
            # Over budget: its entries are masked; the point stays a decision point.
            continue
        if n_s:
            shrink_rows[i] = shrink
        if room:
            expand_rows[i] = expand
    return shrink_rows, expand_rows, grant, legal
