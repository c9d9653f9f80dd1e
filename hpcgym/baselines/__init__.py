"""Baseline schedulers: the classics and the malleable-job papers, by name.

```python
from hpcgym.baselines import make, names
from hpcgym.sim import Simulator

sim = Simulator(workload.platform, workload.jobs)
make("easy").run(sim)
```

``hpcgym.policies.as_env_policy("easy")`` makes a baseline a policy on the env (the adapter lives
in the policy layer above; ``BaselinePolicy``, ``NotExpressible`` and ``as_env_policy`` are still
importable from here for older code).

Every registered name is listed by ``names()``; see ``docs/baselines.md``. All registrations
live below, in one place.
"""

from functools import partial
from typing import Any

from hpcgym.baselines.availability import Profile, shadow
from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.classic import FCFS, SJF, ConservativeBackfill, EasyBackfill
from hpcgym.baselines.dfrs import DFRSScheduler
from hpcgym.baselines.evolving.online import EvolvingListScheduler, evolving_factories
from hpcgym.baselines.koala.scheduler import KOALA_VARIANTS, Koala
from hpcgym.baselines.mebf.scheduler import MEBF, MEBFConfig
from hpcgym.baselines.priority import REGISTERED_SCORES, SCORES, EasyPriority, PriorityReserve
from hpcgym.baselines.registry import make, names, register
from hpcgym.baselines.sdpolicy.scheduler import SD_VARIANTS, SDPolicy
from hpcgym.baselines.trivial import AsapMax, AsapMin, AsapReq, EasyAtMin

register(
    "fcfs", FCFS, "first come, first served: the queue head starts when it fits, nothing passes it"
)
register("sjf", SJF, "shortest (requested) job first, no backfilling")
register(
    "easy",
    EasyBackfill,
    "EASY backfilling: FCFS with a reservation for the head; later jobs start if they do not "
    "delay it",
)
register(
    "conservative",
    ConservativeBackfill,
    "conservative backfilling: every queued job holds a reservation; a job starts early only "
    "if it delays none",
)
for _score in REGISTERED_SCORES:  # RLScheduler's scores (hpcgym.baselines.priority)
    register(
        f"{_score}-reserve",
        partial(PriorityReserve, score=_score),
        f"RLScheduler's reserve mode: the job ranked first by {_score.upper()} is reserved and "
        "started next, no backfilling",
    )
    register(
        f"{_score}-reserve-bf",
        partial(PriorityReserve, score=_score, backfill=True),
        f"{_score}-reserve with EASY backfilling behind the reserved job",
    )
    register(
        f"easy-{_score}",
        partial(EasyPriority, score=_score),
        f"EASY backfilling with the queue ranked by {_score.upper()} at every decision point",
    )
register(
    "mebf",
    MEBF,
    "malleable EASY backfilling (MEBF), basic variant, Handoff expand policy: elastic jobs start "
    "at the largest size that fits, running ones shrink for the head and expand into idle nodes",
)
for _policy in ("handoff", "spare", "intensive"):
    register(
        f"mebf-{_policy}",
        partial(MEBF, policy=_policy),
        f"MEBF with its {_policy.capitalize()} expand policy",
    )
register(
    "mebf-shrink+",
    partial(MEBF, variant="shrink+"),
    "MEBF whose pass, when nothing could be backfilled, shrinks running jobs for the head "
    "(shrink+)",
)
register(
    "mebf-expand+",
    partial(MEBF, variant="expand+"),
    "MEBF whose pass, when nothing could be backfilled, expands running jobs (expand+)",
)
for _order in ("sjf", "f1"):  # MEBF with its queue ranked by a score (MEBFConfig.order)
    register(
        f"mebf-{_order}",
        partial(MEBF, order=_order),
        f"MEBF with its queue ranked by {_order.upper()} (engine only: the env's ebf level "
        "reserves for the submission-order head)",
    )
for _name, _kwargs in SD_VARIANTS.items():
    _args = ", ".join(f"{k}={v}" for k, v in _kwargs.items())
    register(_name, partial(SDPolicy, **_kwargs), f"SD-Policy, the paper's variant {_args}")
register(
    "sd-policy",
    SDPolicy,
    "SD-Policy: starts a waiting job on CPU lent by running malleable jobs when the predicted "
    "slowdowns stay within MAXSD (10; worst-case runtime model)",
)
for _name, _kwargs in KOALA_VARIANTS.items():
    _args = ", ".join(f"{k}={v}" for k, v in _kwargs.items())
    register(
        _name,
        partial(Koala, **_kwargs),
        f"KOALA multicluster scheduling (Worst-Fit placement), malleability {_args}",
    )
register(
    "dfrs",
    DFRSScheduler,
    "DFRS: fractional resource sharing, GreedyPM */per/opt=min/minvt=600 (other "
    "configurations: make('dfrs', config=name))",
)
for _name, _factory in evolving_factories().items():
    _variant = _name.removeprefix("evolving-")
    register(
        _name,
        _factory,
        f"Klein and Perez's online list scheduling of evolving applications, variant {_variant}",
    )
for _trivial in (AsapMin, AsapReq, AsapMax, EasyAtMin):  # reference rules (trivial.py)
    _doc = (_trivial.__doc__ or "").split("\n\n", 1)[0].replace("\n", " ")
    register(
        _trivial.name, _trivial, "reference rule: " + _doc.split(":", 1)[-1].strip().rstrip(".")
    )

__all__ = [
    "FCFS",
    "MEBF",
    "SJF",
    "BaseScheduler",
    "BaselinePolicy",
    "ConservativeBackfill",
    "DFRSScheduler",
    "EasyBackfill",
    "EasyPriority",
    "EvolvingListScheduler",
    "Koala",
    "MEBFConfig",
    "NotExpressible",
    "PriorityReserve",
    "Profile",
    "SCORES",
    "SDPolicy",
    "as_env_policy",
    "estimated_end",
    "make",
    "names",
    "register",
    "runtime_estimate",
    "shadow",
]

_MOVED = frozenset({"BaselinePolicy", "NotExpressible", "as_env_policy"})
"""Names that moved to :mod:`hpcgym.policies` (the layer above) and stay reachable here."""


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import hpcgym.policies.adapted as adapted  # the compatibility aliases (an upward import)

        return getattr(adapted, name)
    raise AttributeError(f"module 'hpcgym.baselines' has no attribute {name!r}")
