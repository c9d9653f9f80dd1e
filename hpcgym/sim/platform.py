"""The machine: one or several clusters of identical nodes with global node ids.

Every node has a CPU capacity of 1.0 and a memory capacity of 1.0. Nodes are numbered globally:
cluster ``k`` owns ids ``[offsets[k], offsets[k] + clusters[k].nodes)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.errors import SpecError


@dataclass(frozen=True, slots=True)
class Cluster:
    """A named group of ``nodes`` identical nodes (``cores`` per node is informative)."""

    nodes: int
    name: str = "cluster"
    cores: int = 1

    def __post_init__(self) -> None:
        for what, value in (("nodes", self.nodes), ("cores", self.cores)):
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                raise SpecError(
                    f"cluster {self.name!r} needs a whole number of {what} >= 1, got {value!r} "
                    f"({type(value).__name__}); e.g. Platform.single(256) for 256 nodes"
                )
            object.__setattr__(self, what, int(value))
        if self.nodes < 1:
            raise SpecError(f"cluster {self.name!r} needs at least one node, got {self.nodes}")
        if self.cores < 1:
            raise SpecError(f"cluster {self.name!r} needs at least one core, got {self.cores}")


@dataclass(frozen=True, slots=True)
class Platform:
    """A tuple of clusters; most experiments use one."""

    clusters: tuple[Cluster, ...]

    def __post_init__(self) -> None:
        clusters = tuple(self.clusters)
        if not clusters:
            raise SpecError("a platform needs at least one cluster")
        object.__setattr__(self, "clusters", clusters)

    @classmethod
    def single(cls, nodes: int, cores: int = 1, name: str = "cluster") -> Platform:
        """A platform with one cluster of ``nodes`` nodes."""
        return cls((Cluster(nodes, name, cores),))

    @classmethod
    def multi(cls, sizes: list[int] | tuple[int, ...], cores: int = 1) -> Platform:
        """A platform with one cluster per entry of ``sizes`` (names ``c0``, ``c1``, ...)."""
        return cls(tuple(Cluster(n, f"c{i}", cores) for i, n in enumerate(sizes)))

    @property
    def total_nodes(self) -> int:
        """Nodes over all clusters."""
        return sum(c.nodes for c in self.clusters)

    @property
    def largest_cluster(self) -> int:
        """Nodes of the largest cluster: no single job can span more."""
        return max(c.nodes for c in self.clusters)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Global id of each cluster's first node."""
        out, acc = [], 0
        for c in self.clusters:
            out.append(acc)
            acc += c.nodes
        return tuple(out)

    def cluster_of_nodes(self) -> np.ndarray:
        """For every global node id, the index of its cluster."""
        return np.repeat(np.arange(len(self.clusters)), [c.nodes for c in self.clusters])
