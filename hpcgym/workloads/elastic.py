"""Elasticity annotation: rigid jobs made moldable, malleable or evolving, seeded.

The MEBF paper does this to its trace.

Defaults are the MEBF paper's: ``min = pref/2``, ``max = 5*pref``; scalability ``rho`` drawn
from a class interval (high (0, 0.1], medium (0.1, 0.2], low (0.2, 0.3]) with speedup
``n**(1 - rho)`` (:class:`~hpcgym.sim.speedup.PowerLaw`); reconfiguration cost
``alpha*|dN| + beta/N`` with ``alpha`` and ``beta`` uniform in [0.005, 0.05].
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.reconfig import NO_COST, RedistributionCost
from hpcgym.sim.spec import EvolutionStep, JobKind, JobSpec, SizeRule
from hpcgym.sim.speedup import PowerLaw
from hpcgym.workloads.workload import ProvenanceStep, Workload

RHO_HIGH = (0.0, 0.1)
"""High scalability: rho in (0, 0.1]."""
RHO_MEDIUM = (0.1, 0.2)
"""Medium scalability: rho in (0.1, 0.2]."""
RHO_LOW = (0.2, 0.3)
"""Low scalability: rho in (0.2, 0.3]."""


@dataclass(frozen=True, slots=True)
class ElasticConfig:
    """How to annotate jobs; JSON-friendly, recorded in the provenance.

    Attributes:
        malleable: Fraction of jobs made malleable.
        moldable: Fraction of jobs made moldable.
        evolving: Fraction of jobs made evolving; the rest stay rigid.
        min_factor: ``min_nodes = max(1, floor(min_factor * pref))``.
        max_factor: ``max_nodes = ceil(max_factor * pref)``, capped at the largest cluster.
        size_rule: Size rule of the elastic jobs (``"any"``, ``"power_of_two"``, ``"multiple"``).
        size_multiple: The ``k`` of the ``"multiple"`` rule.
        rho_classes: Intervals ``(lo, hi]`` of rho; each job draws a class, then rho in it.
        rho_weights: Probability of each class (``None``: equal).
        alpha: Interval of the redistribution cost per node changed (uniform).
        beta: Interval of the redistribution cost's ``beta / N`` term (uniform).
        b: Process creation cost per node changed.
        evolving_steps: Inclusive range of the number of steps of an evolving job.
    """

    malleable: float = 1.0
    moldable: float = 0.0
    evolving: float = 0.0
    min_factor: float = 0.5
    max_factor: float = 5.0
    size_rule: str = "any"
    size_multiple: int = 1
    rho_classes: tuple[tuple[float, float], ...] = (RHO_HIGH, RHO_MEDIUM, RHO_LOW)
    rho_weights: tuple[float, ...] | None = None
    alpha: tuple[float, float] = (0.005, 0.05)
    beta: tuple[float, float] = (0.005, 0.05)
    b: float = 0.0
    evolving_steps: tuple[int, int] = (2, 4)

    def __post_init__(self) -> None:
        fractions = (self.malleable, self.moldable, self.evolving)
        if min(fractions) < 0 or sum(fractions) > 1 + 1e-12:
            raise WorkloadError(
                f"elastic fractions must be >= 0 and sum to <= 1, got malleable={self.malleable}, "
                f"moldable={self.moldable}, evolving={self.evolving}"
            )
        if not 0 < self.min_factor <= 1 <= self.max_factor:
            raise WorkloadError("elastic: need 0 < min_factor <= 1 <= max_factor")
        SizeRule(self.size_rule)
        if self.rho_weights is not None and len(self.rho_weights) != len(self.rho_classes):
            raise WorkloadError("elastic: rho_weights needs one weight per rho class")
        if not 1 <= self.evolving_steps[0] <= self.evolving_steps[1]:
            raise WorkloadError(
                "elastic: evolving_steps must be a range (lo, hi) with 1 <= lo <= hi"
            )

    def as_params(self) -> dict[str, object]:
        """The fields as a JSON-friendly dict (tuples become lists)."""

        def plain(v: object) -> object:
            return [plain(x) for x in v] if isinstance(v, tuple) else v

        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _kinds(n: int, cfg: ElasticConfig, rng: np.random.Generator) -> np.ndarray:
    """Exactly ``round(fraction * n)`` jobs of each elastic kind, placed by a random permutation."""
    counts = [round(cfg.malleable * n), round(cfg.moldable * n), round(cfg.evolving * n)]
    counts[0] = min(counts[0], n)
    counts[1] = min(counts[1], n - counts[0])
    counts[2] = min(counts[2], n - counts[0] - counts[1])
    labels = np.full(n, JobKind.RIGID.value, dtype=object)
    order = rng.permutation(n)
    kinds = (JobKind.MALLEABLE, JobKind.MOLDABLE, JobKind.EVOLVING)
    start = 0
    for kind, c in zip(kinds, counts, strict=True):
        labels[order[start : start + c]] = kind.value
        start += c
    return labels


def _evolution(
    job: JobSpec, lo: int, hi: int, steps: tuple[int, int], rng: np.random.Generator
) -> tuple[EvolutionStep, ...]:
    """The evolving profile of a trace job (hpcgym's choice; no paper gives one).

    ``k`` steps split the work at random; the first runs at the requested size, the others at
    sizes uniform in ``[lo, hi]``.
    """
    k = int(rng.integers(steps[0], steps[1] + 1))
    shares = rng.dirichlet(np.ones(k))
    durations = [float(job.work * s) for s in shares[:-1]]
    durations.append(max(0.0, job.work - sum(durations)))
    sizes = [job.nodes, *(int(x) for x in rng.integers(lo, hi + 1, size=k - 1))]
    return tuple(EvolutionStep(d, n) for d, n in zip(durations, sizes, strict=True))


def annotate_elastic(w: Workload, config: ElasticConfig, seed: int) -> Workload:
    """Make a seeded share of the jobs elastic.

    Every job draws its kind, rho and cost parameters from one generator in job order, so the
    result depends only on the workload, the config and the seed. A job whose requested size
    breaks the size rule stays rigid (counted as ``rule_misfits`` in the provenance).

    Args:
        w: The workload (usually rigid, from a trace).
        config: Fractions, min/max rules, scalability classes and cost intervals.
        seed: Seed of the annotation.

    Returns:
        The annotated workload.
    """
    rng = np.random.default_rng(seed)
    n = len(w)
    kinds = _kinds(n, config, rng)
    weights = np.asarray(config.rho_weights or [1.0] * len(config.rho_classes), dtype=float)
    classes = rng.choice(len(config.rho_classes), size=n, p=weights / weights.sum())
    lo_hi = np.asarray(config.rho_classes, dtype=float)[classes]
    # (lo, hi] interval: hi - U*(hi - lo) with U in [0, 1) never gives lo.
    rhos = lo_hi[:, 1] - rng.random(n) * (lo_hi[:, 1] - lo_hi[:, 0])
    alphas = rng.uniform(*config.alpha, size=n)
    betas = rng.uniform(*config.beta, size=n)
    cap = w.platform.largest_cluster
    rule = SizeRule(config.size_rule)
    misfits = 0
    jobs: list[JobSpec] = []
    for i, job in enumerate(w.jobs):
        kind = JobKind(kinds[i])
        pref = min(job.nodes, cap)
        lo = max(1, math.floor(config.min_factor * pref))
        hi = max(pref, min(cap, math.ceil(config.max_factor * pref)))
        if kind is JobKind.RIGID:
            jobs.append(job)
            continue
        if kind is JobKind.EVOLVING:
            evo = _evolution(job, lo, hi, config.evolving_steps, rng)
            jobs.append(
                dataclasses.replace(job, kind=kind, evolution=evo, min_nodes=0, max_nodes=0)
            )
            continue
        probe = dataclasses.replace(job, min_nodes=lo, max_nodes=hi, kind=JobKind.MOLDABLE)
        fits = job.nodes <= cap and (
            rule is SizeRule.ANY
            or (rule is SizeRule.POWER_OF_TWO and job.nodes & (job.nodes - 1) == 0)
            or (rule is SizeRule.MULTIPLE and job.nodes % config.size_multiple == 0)
        )
        if not fits:
            misfits += 1
            jobs.append(job)
            continue
        cost = (
            RedistributionCost(float(alphas[i]), float(betas[i]), config.b)
            if kind is JobKind.MALLEABLE
            else NO_COST
        )
        jobs.append(
            dataclasses.replace(
                probe,
                kind=kind,
                size_rule=rule,
                size_multiple=config.size_multiple,
                speedup=PowerLaw(float(rhos[i])),
                reconfig=cost,
            )
        )
    step = ProvenanceStep.make(
        "annotate_elastic", seed=seed, rule_misfits=misfits, **config.as_params()
    )
    return w.derive(jobs, step, keep_rows=True)
