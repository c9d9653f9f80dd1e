"""The evolving-application test cases of Klein and Perez (fully predictable evolving apps).

A test case is a set of applications all submitted at time 0 to one homogeneous cluster. Per the
paper: applications per case uniform in [15, 20], steps per application in [1, 10], step
duration in [500, 3600] s, node count per step in [1, 75]. All draws are integers, uniform and
inclusive. **Choice**: the paper does not state the cluster size; the default is 75 nodes, the
smallest that admits every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.errors import WorkloadError
from hpcgym.sim.platform import Platform
from hpcgym.sim.spec import EvolutionStep, JobKind, JobSpec
from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.workload import ProvenanceStep, Workload


@dataclass(frozen=True, slots=True)
class KleinParams:
    """Inclusive integer ranges of the test-case generator, and the cluster size."""

    apps: tuple[int, int] = (15, 20)
    steps: tuple[int, int] = (1, 10)
    duration: tuple[int, int] = (500, 3600)
    nodes: tuple[int, int] = (1, 75)
    cluster_nodes: int = 75

    def __post_init__(self) -> None:
        for name in ("apps", "steps", "duration", "nodes"):
            lo, hi = getattr(self, name)
            if not 1 <= lo <= hi:
                raise WorkloadError(f"klein: {name} must be a range (lo, hi), 1 <= lo <= hi")
        if self.cluster_nodes < self.nodes[1]:
            raise WorkloadError(
                f"klein: cluster_nodes {self.cluster_nodes} is smaller than the largest step "
                f"({self.nodes[1]} nodes); some applications could never run"
            )


def _draw(rng: np.random.Generator, bounds: tuple[int, int], size: int | None = None) -> np.ndarray:
    return rng.integers(bounds[0], bounds[1] + 1, size=size)


def generate_klein(seed: int, params: KleinParams | None = None) -> Workload:
    """One test case: evolving applications with ids from 1, all submitted at 0.

    Args:
        seed: The test case's seed; case ``k`` of a 1000-case study is ``seed=k``.
        params: Ranges and cluster size (the paper's by default).

    Returns:
        The test case on a single cluster of ``params.cluster_nodes`` nodes.
    """
    p = params or KleinParams()
    rng = np.random.default_rng(seed)
    n_apps = int(_draw(rng, p.apps))
    jobs = []
    for i in range(n_apps):
        k = int(_draw(rng, p.steps))
        durations = _draw(rng, p.duration, k)
        nodes = _draw(rng, p.nodes, k)
        steps = tuple(
            EvolutionStep(float(d), int(n)) for d, n in zip(durations, nodes, strict=True)
        )
        jobs.append(JobSpec(id=i + 1, submit=0.0, kind=JobKind.EVOLVING, evolution=steps))
    header = SwfHeader.from_lines(
        [
            " Version: 2.2",
            " Computer: Klein-Perez evolving-application test case (hpcgym generator)",
            f" MaxJobs: {n_apps}",
            f" MaxRecords: {n_apps}",
            f" MaxNodes: {p.cluster_nodes}",
            f" MaxProcs: {p.cluster_nodes}",
            " Note: SWF has no field for evolution profiles; the size is the first step's",
        ]
    )
    step = ProvenanceStep.make(
        "klein_evolving",
        seed=seed,
        apps=list(p.apps),
        steps=list(p.steps),
        duration=list(p.duration),
        nodes=list(p.nodes),
        cluster_nodes=p.cluster_nodes,
    )
    return Workload(
        name="klein-evolving",
        jobs=tuple(jobs),
        platform=Platform.single(p.cluster_nodes),
        header=header,
        provenance=(step,),
    )
