"""The Lublin-Feitelson (2003) model of rigid parallel jobs, implemented from its parameters.

No clean library exists: the PyPI wrapper ``parallelworkloads`` 0.1.3 ships a source archive
without its Cython sources, so it cannot build. This module follows the model as published
(JPDC 63(11), 2003) with the parameter values of the authors' reference program:

- **Type**: with ``typed``, batch and interactive jobs arrive as two independent streams, each
  job taking the parameters of its stream; by default one stream with the "whole sample"
  parameters (the reference program's untyped mode, which made ``lublin_256.swf``).
- **Size**: serial with probability ``serial``; otherwise ``2**u`` with ``u`` from a two-stage
  uniform (``[low, med]`` with probability ``uprob``, else ``[med, high]``), rounded to an integer
  exponent (a power of two) with probability ``pow2`` (drawn on the same uniform as ``serial``,
  so ``pow2`` is a share of all jobs), and ``round(2**u)`` otherwise.
- **Run time**: ``exp(g)`` with ``g`` hyper-gamma: ``Gamma(a1, scale b1)`` with probability
  ``p = pa*nodes + pb`` (clipped to [0, 1]), else ``Gamma(a2, b2)``; ``g > 12`` is redrawn.
- **Arrivals**: ``exp(g)`` seconds with ``g ~ Gamma(aarr*arar, barr)`` (``g > 13`` redrawn) is a
  budget of "points" spent on half-hour buckets whose weights follow the daily cycle
  ``GammaCDF(anum, bnum)`` (the day shifted to start at 11:00); the start is midnight.

**Choice**: the reference program is set for 128 nodes (``high = 7``). For a machine of
``N`` nodes, ``med`` and ``high`` of both streams move by ``log2(N) - 7``; ``low`` stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import JobSpec
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.swf import COL, N_FIELDS
from hpcgym.workloads.workload import ProvenanceStep, Workload

BUCKETS = 48
"""Half-hour buckets in a day."""
BUCKET_SECONDS = 86400 / BUCKETS
CYCLE_START = 11
"""The daily cycle's fit covers hours [11, 35), moved back cyclically to [0, 24)."""
MAX_LOG_RUNTIME = 12.0
MAX_LOG_INTERARRIVAL = 13.0
INTERACTIVE, BATCH = 0, 1
"""Stream indices; the SWF queue field (15) records them as the reference program does."""


@dataclass(frozen=True, slots=True)
class StreamParams:
    """Parameters of one job stream (batch or interactive) for a 128-node machine."""

    serial: float
    pow2: float
    low: float
    med: float
    high: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float

    def for_nodes(self, nodes: int) -> StreamParams:
        """The parameters moved to a machine of ``nodes`` nodes (see the module's choice)."""
        shift = math.log2(nodes) - 7.0
        return replace(self, med=self.med + shift, high=self.high + shift)


INTERACTIVE_PARAMS = StreamParams(
    serial=0.1541, pow2=0.625, low=1.0, med=3.0, high=5.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797,
)  # fmt: skip
BATCH_PARAMS = StreamParams(
    serial=0.2927, pow2=0.6686, low=1.2, med=5.0, high=7.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519,
)  # fmt: skip
WHOLE_PARAMS = StreamParams(
    serial=0.244, pow2=0.576, low=0.8, med=4.5, high=7.0, uprob=0.86,
    a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
    aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225,
)  # fmt: skip
"""The "whole sample" parameters of the untyped model: one stream, labelled interactive."""


def gamma_cdf(x: float, shape: float, scale: float) -> float:
    """CDF of Gamma(shape, scale) at ``x`` (series / continued fraction, 1e-12 accuracy)."""
    if x <= 0:
        return 0.0
    z = x / scale
    log_front = -z + shape * math.log(z) - math.lgamma(shape)
    if z < shape + 1:
        term = total = 1.0 / shape
        a = shape
        for _ in range(10_000):
            a += 1
            term *= z / a
            total += term
            if term < total * 1e-14:
                break
        return total * math.exp(log_front)
    # Lentz's continued fraction for the upper tail.
    tiny = 1e-300
    b = z + 1 - shape
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - shape)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-14:
            break
    return 1.0 - math.exp(log_front) * h


def bucket_weights(p: StreamParams) -> np.ndarray:
    """Relative arrival intensity of each half-hour bucket of the day (mean 1)."""
    w = np.empty(BUCKETS)
    for i in range(CYCLE_START, BUCKETS + CYCLE_START):
        w[(i - 1) % BUCKETS] = gamma_cdf(i + 0.5, p.anum, p.bnum) - gamma_cdf(
            i - 0.5, p.anum, p.bnum
        )
    return w / w.mean()


def _truncated_gamma(
    rng: np.random.Generator, shape: float, scale: float, limit: float, size: int
) -> np.ndarray:
    out = rng.gamma(shape, scale, size=size)
    bad = out > limit
    while bad.any():
        out[bad] = rng.gamma(shape, scale, size=int(bad.sum()))
        bad = out > limit
    return out


def arrivals(p: StreamParams, count: int, rng: np.random.Generator) -> np.ndarray:
    """Arrival times (seconds from midnight) of the first ``count`` jobs of one stream."""
    weights = bucket_weights(p)
    logs = _truncated_gamma(rng, p.aarr * p.arar, p.barr, MAX_LOG_INTERARRIVAL, count)
    budgets = np.exp(logs) / BUCKET_SECONDS
    out = np.empty(count)
    t = 0.0
    bucket = 0
    points = remainder = 0.0
    for k in range(count):
        out[k] = t
        points += budgets[k]
        step = 0.0
        while points > weights[bucket]:
            points -= weights[bucket]
            bucket = (bucket + 1) % BUCKETS
            step += BUCKET_SECONDS
        new_remainder = points / weights[bucket]
        step += BUCKET_SECONDS * (new_remainder - remainder)
        remainder = new_remainder
        t += step
    return out


def sizes(p: StreamParams, count: int, rng: np.random.Generator) -> np.ndarray:
    """Node counts of ``count`` jobs of one stream."""
    u = rng.random(count)
    first_stage = rng.random(count) <= p.uprob
    lo = np.where(first_stage, p.low, p.med)
    hi = np.where(first_stage, p.med, p.high)
    exponent = lo + rng.random(count) * (hi - lo)
    exponent = np.where(u <= p.serial + p.pow2, np.floor(exponent + 0.5), exponent)
    n = np.floor(2.0**exponent + 0.5).astype(np.int64)
    return np.where(u <= p.serial, 1, n)


def runtimes(p: StreamParams, nodes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Run times in whole seconds for jobs of the given sizes."""
    prob = np.clip(p.pa * nodes + p.pb, 0.0, 1.0)
    first = rng.random(len(nodes)) <= prob
    g1 = _truncated_gamma(rng, p.a1, p.b1, MAX_LOG_RUNTIME, len(nodes))
    g2 = _truncated_gamma(rng, p.a2, p.b2, MAX_LOG_RUNTIME, len(nodes))
    return np.floor(np.exp(np.where(first, g1, g2)))


def _rng(seed: int, *key: int) -> np.random.Generator:
    """An independent generator for one purpose (``key``) of one seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def sample(n_jobs: int, nodes: int, seed: int, *, typed: bool = False) -> dict[str, np.ndarray]:
    """Draw ``n_jobs`` jobs for a machine of ``nodes`` nodes.

    With ``typed`` the batch and interactive streams are merged; without, one stream with the
    whole-sample parameters is drawn (every job labelled interactive, as in ``lublin_256.swf``).

    Returns:
        Arrays ``submit`` (whole seconds), ``nodes``, ``runtime`` and ``stream`` (0 interactive,
        1 batch), in submission order; on equal times the interactive job comes first.
    """
    if n_jobs < 0 or nodes < 2:
        raise WorkloadError(f"lublin: need n_jobs >= 0 and nodes >= 2, got {n_jobs}, {nodes}")
    chosen = (INTERACTIVE_PARAMS, BATCH_PARAMS) if typed else (WHOLE_PARAMS,)
    streams = tuple(p.for_nodes(nodes) for p in chosen)
    # Each stream alone could supply every job; merging keeps the earliest n_jobs.
    t = np.concatenate([arrivals(p, n_jobs, _rng(seed, 0, s)) for s, p in enumerate(streams)])
    k = np.repeat(np.arange(len(streams)), n_jobs)
    order = np.lexsort((k, t))[:n_jobs]
    t, k = t[order], k[order]
    n = np.empty(n_jobs, dtype=np.int64)
    r = np.empty(n_jobs)
    for s, params in enumerate(streams):
        mask = k == s
        rng = _rng(seed, 1, s)
        n[mask] = sizes(params, int(mask.sum()), rng)
        r[mask] = runtimes(params, n[mask], rng)
    return {"submit": np.floor(t), "nodes": n, "runtime": r, "stream": k}


def generate_lublin(
    n_jobs: int = 10_000, nodes: int = 256, seed: int = 0, *, typed: bool = False
) -> Workload:
    """A Lublin-Feitelson workload of rigid jobs with its SWF records.

    Args:
        n_jobs: Number of jobs.
        nodes: Machine size (jobs never exceed it).
        seed: Seed; the same seed gives the same jobs.
        typed: Separate batch and interactive streams (see :func:`sample`).

    Returns:
        Jobs numbered from 1 in submission order, exact run times as walltimes unset, on a
        single cluster of ``nodes`` nodes; the SWF queue field holds the stream.
    """
    d = sample(n_jobs, nodes, seed, typed=typed)
    rows = np.full((n_jobs, N_FIELDS), -1.0)
    rows[:, COL["job_id"]] = np.arange(1, n_jobs + 1)
    rows[:, COL["submit_time"]] = d["submit"]
    rows[:, COL["run_time"]] = d["runtime"]
    rows[:, COL["alloc_procs"]] = d["nodes"]
    rows[:, COL["req_procs"]] = d["nodes"]
    rows[:, COL["status"]] = 1
    rows[:, COL["queue"]] = d["stream"]
    jobs = tuple(
        JobSpec(id=i + 1, submit=float(s), work=float(r), nodes=int(n))
        for i, (s, r, n) in enumerate(zip(d["submit"], d["runtime"], d["nodes"], strict=True))
    )
    header = SwfHeader.from_lines(
        [
            " Version: 2.2",
            " Computer: Lublin-Feitelson 2003 model (hpcgym implementation)",
            " Acknowledge: Uri Lublin and Dror G. Feitelson, JPDC 63(11), 2003",
            f" MaxJobs: {n_jobs}",
            f" MaxRecords: {n_jobs}",
            f" MaxNodes: {nodes}",
            f" MaxProcs: {nodes}",
            " Queue: 0 interactive stream",
            " Queue: 1 batch stream",
        ]
    )
    step = ProvenanceStep.make("lublin", seed=seed, n_jobs=n_jobs, nodes=nodes, typed=typed)
    return Workload(
        name=f"lublin-{nodes}",
        jobs=jobs,
        platform=Platform.single(nodes),
        header=header,
        provenance=(step,),
        rows=rows,
    )
