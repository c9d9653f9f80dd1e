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

from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.classic import FCFS, SJF, ConservativeBackfill, EasyBackfill
from hpcgym.baselines.dfrs import DFRSScheduler
from hpcgym.baselines.evolving.online import EvolvingListScheduler, evolving_factories
from hpcgym.baselines.koala.scheduler import KOALA_PRESETS, Koala
from hpcgym.baselines.mebf.scheduler import MEBF, MEBFConfig
from hpcgym.baselines.priority import REGISTERED_SCORES, SCORES, EasyPriority, PriorityReserve
from hpcgym.baselines.profile import Profile, shadow
from hpcgym.baselines.registry import make, names, register
from hpcgym.baselines.sdpolicy.scheduler import SD_PRESETS, SDPolicy
from hpcgym.baselines.trivial import AsapMax, AsapMin, AsapReq, EasyAtMin

register("fcfs", FCFS)
register("sjf", SJF)
register("easy", EasyBackfill)
register("conservative", ConservativeBackfill)
for _score in REGISTERED_SCORES:  # RLScheduler's scores (hpcgym.baselines.priority)
    register(f"{_score}-reserve", partial(PriorityReserve, score=_score))
    register(f"{_score}-reserve-bf", partial(PriorityReserve, score=_score, backfill=True))
    register(f"easy-{_score}", partial(EasyPriority, score=_score))
register("mebf", MEBF)  # basic variant, Handoff policy; make("mebf", policy=..., variant=...)
for _policy in ("handoff", "spare", "intensive"):
    register(f"mebf-{_policy}", partial(MEBF, policy=_policy))
register("mebf-shrink+", partial(MEBF, variant="shrink+"))
register("mebf-expand+", partial(MEBF, variant="expand+"))
for _order in ("sjf", "f1"):  # MEBF with its queue ranked by a score (MEBFConfig.order)
    register(f"mebf-{_order}", partial(MEBF, order=_order))
for _name, _kwargs in SD_PRESETS.items():
    register(_name, partial(SDPolicy, **_kwargs))
register("sd-policy", SDPolicy)  # MAXSD 10, worst-case runtime model; make("sd-policy", ...)
for _name, _kwargs in KOALA_PRESETS.items():
    register(_name, partial(Koala, **_kwargs))
register("dfrs", DFRSScheduler)  # GreedyPM */per/opt=min/minvt=600; make("dfrs", config=name)
for _name, _factory in evolving_factories().items():
    register(_name, _factory)
for _trivial in (AsapMin, AsapReq, AsapMax, EasyAtMin):  # reference rules (trivial.py)
    register(_trivial.name, _trivial)

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
