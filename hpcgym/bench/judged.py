"""Judged scenarios: the ones whose verdicts a skeptical reviewer can accept.

A judged scenario differs from the earlier protocol scenarios in four ways:

- **An objective that cannot be gamed.** Elastic jobs are ranked by mean bounded stretch,
  ``max(response, tau) / max(work at the requested size, tau)``, not by bounded slowdown, which
  divides by the run time the schedule gave the job: starting every job at once on its minimum
  size scores a bounded slowdown near 1 however late the jobs end.
- **Independent episodes.** Its episodes are *every* disjoint window of its split, back to back
  (``hpcgym.workloads.splits.window_starts``): no two episodes share a job, and there are at
  least 100 of them on the test split. On the validation split (``--split validation``) it
  plays every disjoint window of that split.
- **Every heuristic and the trivial rules.** Its policies are every registered heuristic that
  applies to its preset and the trivial reference rules (``hpcgym.baselines.trivial``).
- **A named best heuristic**, chosen on the validation split by the objective before the test
  split was played (the choice and its run are recorded in ``docs/results.md``); every goal
  compares with that one.

```python
from hpcgym.bench.scenarios import get
sc = get("malleable-small-v3")
sc.best_heuristic, len(sc.seeds)
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hpcgym.errors import SpecError

RIGID_HEURISTICS = (
    "fcfs",
    "sjf",
    "easy",
    "conservative",
    "easy-sjf",
    "easy-f1",
    "easy-wfp3",
    "easy-unicep",
)
"""Every registered heuristic for rigid jobs on one cluster: the classic schedulers and EASY
with its queue ranked by each of RLScheduler's scores (SJF, F1, WFP3, UNICEP)."""

ELASTIC_HEURISTICS = (
    *RIGID_HEURISTICS,
    "mebf",
    "mebf-spare",
    "mebf-intensive",
    "mebf-shrink+",
    "mebf-expand+",
    "mebf-sjf",
    "mebf-f1",
)
"""Every registered heuristic that schedules malleable jobs on one cluster: the rigid
schedulers (jobs at their requested size; EASY with its queue ranked by each of RLScheduler's
scores, WFP3 and UNICEP joining on 2026-11-27), every MEBF variant, and MEBF with its queue
ranked by SJF and by F1."""

TRIVIAL_RULES = ("asap-min", "asap-req", "asap-max", "easy-min")
"""The trivial reference rules (``hpcgym.baselines.trivial``): they count when the best
heuristic is named."""

JUDGED_MALLEABLE = (*ELASTIC_HEURISTICS, *TRIVIAL_RULES, "random", "advance")
"""A judged malleable scenario's policies: every heuristic, the trivial rules, and the
reference floor of random and advance (shown last, never counted as a heuristic)."""

JUDGED_RIGID = (*RIGID_HEURISTICS, "random", "advance")
"""A judged rigid scenario's policies: every rigid heuristic, then the reference floor. Rigid
jobs always run at their requested size, so no rule can stretch them: the trivial elastic rules
would be FCFS or EASY again."""

SHARED_HEURISTICS = (*RIGID_HEURISTICS, "sd-policy", "dfrs")
"""Every heuristic for jobs that share nodes: the rigid ones (each job on whole cores of its own),
SD-Policy (co-scheduling a waiting job beside running ones) and DFRS (every job on a fair CPU
share from submission, with suspension)."""

MULTICLUSTER_HEURISTICS = (
    "koala-static",
    "koala-pra-fpsma",
    "koala-pra-egs",
    "koala-pwa-fpsma",
    "koala-pwa-egs",
)
"""Every heuristic for several clusters: KOALA's placement, static and with each of its
malleability managers (FPSMA, EGS) under either approach (PRA, PWA)."""

NOT_HEURISTICS = ("random", "advance")
"""Policies of a scenario that are not candidates for its best heuristic."""


def disjoint_starts(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """:func:`hpcgym.envs.episodes.disjoint_starts`, imported when asked (this module is light)."""
    from hpcgym.envs.episodes import disjoint_starts as starts

    return starts(env_id, env_kwargs)


UNSEEN_SPLITS = ("train", "test")
"""The splits an ``"unseen"`` scenario plays: the whole trace outside its validation split."""


def unseen_starts(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """Every disjoint window of the trace outside its validation split: train's, then test's.

    The episodes of a cross-trace scenario whose agents never trained on the trace: its train
    split is as new to them as its test split, and its validation split stays held out to name
    the best heuristic. No window crosses a split boundary, so no two episodes share a job.
    """
    parts = (disjoint_starts(env_id, {**env_kwargs, "split": split}) for split in UNSEEN_SPLITS)
    return tuple(s for part in parts for s in part)


def best_of(means: Mapping[str, float]) -> str:
    """The heuristic with the lowest value in ``means`` (policy -> objective), ties by name.

    ``random`` and ``advance`` are never chosen.
    """
    candidates = {p: v for p, v in means.items() if p not in NOT_HEURISTICS}
    if not candidates:
        raise SpecError("no heuristic to choose from")
    return min(sorted(candidates), key=lambda p: candidates[p])


def episodes_note(scenario: Any) -> str:
    """How independent a scenario's episodes are, for the interval tables (one phrase)."""
    from hpcgym.envs.episodes import env_config

    n = len(scenario.seeds)
    cfg = env_config(scenario.env_id, dict(scenario.env_kwargs))
    if scenario.windows == "disjoint":
        return f"{n} per policy, every disjoint window of the split: no two share a job"
    if scenario.windows == "unseen":
        return (
            f"{n} per policy, every disjoint window of the trace outside its validation split "
            "(a trace the agents never trained on): no two share a job"
        )
    if cfg.episode == "seeded":
        return (
            f"{n} per policy, generated cases, each from a generator seed drawn for it; "
            "independent draws"
        )
    where = "random starts" if cfg.window_starts is None else "fixed starts"
    return (
        f"{n} per policy, windows at {where} that may share jobs; the intervals treat them as "
        "independent and are then too narrow"
    )
