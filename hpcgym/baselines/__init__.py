"""Baseline schedulers: the classics and the malleable-job papers, by name.

```python
from hpcgym.baselines import make, names
from hpcgym.sim import Simulator

sim = Simulator(workload.platform, workload.jobs)
make("easy").run(sim)
```

Every registered name is listed by ``names()``; see ``docs/baselines.md``. All registrations
live below, in one place.
"""

from functools import partial

from hpcgym.baselines.base import BaseScheduler, estimated_end, runtime_estimate
from hpcgym.baselines.classic import FCFS, SJF, ConservativeBackfill, EasyBackfill
from hpcgym.baselines.mebf import MEBF, MEBFConfig
from hpcgym.baselines.profile import Profile, shadow
from hpcgym.baselines.registry import make, names, register

register("fcfs", FCFS)
register("sjf", SJF)
register("easy", EasyBackfill)
register("conservative", ConservativeBackfill)
register("mebf", MEBF)  # basic variant, Handoff policy; make("mebf", policy=..., variant=...)
for _policy in ("handoff", "spare", "intensive"):
    register(f"mebf-{_policy}", partial(MEBF, policy=_policy))
register("mebf-shrink+", partial(MEBF, variant="shrink+"))
register("mebf-expand+", partial(MEBF, variant="expand+"))

__all__ = [
    "FCFS",
    "MEBF",
    "SJF",
    "BaseScheduler",
    "ConservativeBackfill",
    "EasyBackfill",
    "MEBFConfig",
    "Profile",
    "estimated_end",
    "make",
    "names",
    "register",
    "runtime_estimate",
    "shadow",
]
