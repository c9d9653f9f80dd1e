"""Every registered baseline builds and schedules a small episode of a workload it is meant for."""

from __future__ import annotations

import pytest

from hpcgym.baselines import make, names
from hpcgym.sim import SimConfig
from hpcgym.workloads import registry, transforms

# The workload set each family of baselines is written for (first match wins).
FAMILIES = (
    ("evolving-", "synthetic/evolving-klein-v0"),
    ("koala-", "synthetic/koala-mix-v0"),
    ("mebf", "elastic/sdsc-sp2-mebf-v0"),
    ("sd-policy", "elastic/sdsc-sp2-mebf-v0"),
    ("", "swf/kth-sp2-v0"),
)


def _workload_for(name: str) -> str:
    return next(ws for prefix, ws in FAMILIES if name.startswith(prefix))


@pytest.mark.parametrize("name", names())
def test_baseline_finishes_an_episode_with_every_job_accounted_for(name: str) -> None:
    w = transforms.first(registry.load(_workload_for(name), seed=1), 60)
    result = make(name).simulate(w.platform, w.jobs, SimConfig(kill_on_walltime=False))
    s = result.summary
    assert s["completed"] + s["killed"] + s["rejected"] == len(w.jobs)
    assert s["completed"] > 0
    assert len(result.jobs) == len(w.jobs)


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="easy"):
        make("no-such-baseline")
