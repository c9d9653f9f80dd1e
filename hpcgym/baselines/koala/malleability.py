"""KOALA's malleability management policies, FPSMA and EGS (Buisson et al., section 5.3).

A policy turns "grow the malleable jobs of this cluster by ``g`` processors" or "reclaim ``r``
processors from them" into per-job offers. Each job answers with what it *accepts*
(section 6.1): a job that only runs on some sizes (NAS FT: powers of two) keeps the largest
size it can use and releases the rest voluntarily, so it may accept less than a grow offer and
give back more than a shrink request. Policies only compute new sizes; the scheduler issues
the resizes.

- **FPSMA** (Favour Previously Started Malleable Applications, Figure 4): grow offers go to
  the earliest-started job first, each taking what it accepts from what is left; shrink requests
  go to the latest-started job first.
- **EGS** (Equi-Grow & Shrink, Figure 5): the amount is split equally over the jobs; the
  remainder is a bonus of one processor to the least recently started jobs (grow) or a malus
  of one to the most recently started ones (shrink). **Choice**: what some jobs decline is
  split again among the others in further rounds, until the amount is used or nobody accepts
  more (the paper's manager would hand it out at its next poll of the information service).
"""

from __future__ import annotations

from enum import Enum

from hpcgym.sim import JobSpec

__all__ = ["Policy", "accept_grow", "accept_shrink", "grow", "shrink", "shrinkable"]


class Policy(Enum):
    """Malleability management policy."""

    FPSMA = "fpsma"
    EGS = "egs"


def accept_grow(spec: JobSpec, size: int, offer: int) -> int:
    """The size a job of ``size`` keeps when offered ``offer`` more processors (>= ``size``)."""
    n = min(size + offer, spec.max_nodes)
    while n > size and not spec.allows(n):
        n -= 1
    return n


def accept_shrink(spec: JobSpec, size: int, request: int) -> int:
    """The size a job of ``size`` shrinks to when asked to release ``request`` (<= ``size``).

    It releases at least ``request`` when it can (the largest accepted size not above
    ``size - request``), else as much as its minimum allows.
    """
    n = size - request
    while n >= spec.min_nodes and not spec.allows(n):
        n -= 1
    if n >= spec.min_nodes:
        return n
    n = spec.min_nodes
    while n < size and not spec.allows(n):
        n += 1
    return n


def shrinkable(spec: JobSpec, size: int) -> int:
    """Processors a job of ``size`` can give back at most."""
    return size - accept_shrink(spec, size, size)


def grow(policy: Policy, jobs: list[tuple[JobSpec, int]], amount: int) -> list[int]:
    """New sizes of ``jobs`` (``(spec, size)`` in increasing start order) after growing.

    Args:
        policy: FPSMA or EGS.
        jobs: The cluster's running malleable jobs, earliest started first.
        amount: Processors to hand out.
    """
    sizes = [s for _, s in jobs]
    if policy is Policy.FPSMA:
        for i, (spec, _) in enumerate(jobs):
            if amount <= 0:
                break
            new = accept_grow(spec, sizes[i], amount)
            amount -= new - sizes[i]
            sizes[i] = new
        return sizes
    active = [i for i, (spec, size) in enumerate(jobs) if accept_grow(spec, size, amount) > size]
    while amount > 0 and active:
        share, bonus = divmod(amount, len(active))
        taken = 0
        for rank, i in enumerate(active):
            offer = share + (1 if rank < bonus else 0)
            if offer == 0:
                continue
            new = accept_grow(jobs[i][0], sizes[i], offer)
            taken += new - sizes[i]
            sizes[i] = new
        amount -= taken
        if taken == 0:
            break
        active = [i for i in active if accept_grow(jobs[i][0], sizes[i], amount) > sizes[i]]
    return sizes


def shrink(policy: Policy, jobs: list[tuple[JobSpec, int]], amount: int) -> list[int]:
    """New sizes of ``jobs`` (``(spec, size)`` in increasing start order) after reclaiming.

    Jobs may release more than asked (size rules); the caller checks whether enough was freed.
    """
    sizes = [s for _, s in jobs]
    order = list(range(len(jobs)))[::-1]  # latest started first
    if policy is Policy.FPSMA:
        for i in order:
            if amount <= 0:
                break
            new = accept_shrink(jobs[i][0], sizes[i], amount)
            amount -= sizes[i] - new
            sizes[i] = new
        return sizes
    active = [i for i in order if shrinkable(jobs[i][0], sizes[i]) > 0]
    while amount > 0 and active:
        share, malus = divmod(amount, len(active))
        given = 0
        for rank, i in enumerate(active):
            ask = share + (1 if rank < malus else 0)
            if ask == 0:
                continue
            new = accept_shrink(jobs[i][0], sizes[i], ask)
            given += sizes[i] - new
            sizes[i] = new
        amount -= given
        if given == 0:
            break
        active = [i for i in active if shrinkable(jobs[i][0], sizes[i]) > 0]
    return sizes
