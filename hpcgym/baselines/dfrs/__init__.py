"""Dynamic fractional resource scheduling (Casanova, Stillwell and Vivien, 2011).

```python
from hpcgym.baselines.dfrs import DFRSScheduler, dfrs_setup
from hpcgym.sim import Simulator

jobs, config = dfrs_setup(workload.jobs, "GreedyPM */per/opt=min/minvt=600")
sim = Simulator(workload.platform, jobs, config)
DFRSScheduler("GreedyPM */per/opt=min/minvt=600").run(sim)
```

See ``docs/baselines-dfrs.md``: names (``config.TABLE1``, ``config.TABLE2``), priority,
Greedy/GreedyP/GreedyPM, MCB8 and MCB8-stretch, allocation, the lower bound (``bound``).
"""

from hpcgym.baselines.dfrs.allocation import avg_yields, base_yield, maxmin_yields, yields
from hpcgym.baselines.dfrs.bound import degradation, max_stretch_bound
from hpcgym.baselines.dfrs.config import PENALTY, PERIOD, TABLE1, TABLE2, DFRSConfig, parse_name
from hpcgym.baselines.dfrs.mcb8 import PackJob, mcb8, mcb8_stretch, pack
from hpcgym.baselines.dfrs.placement import Placement, greedy_nodes
from hpcgym.baselines.dfrs.priority import by_priority, job_priority, priority
from hpcgym.baselines.dfrs.scheduler import DFRSScheduler, scheduler_from_name
from hpcgym.baselines.dfrs.setup import dfrs_setup, with_penalty

__all__ = [
    "PENALTY",
    "PERIOD",
    "TABLE1",
    "TABLE2",
    "DFRSConfig",
    "DFRSScheduler",
    "PackJob",
    "Placement",
    "avg_yields",
    "base_yield",
    "by_priority",
    "degradation",
    "dfrs_setup",
    "greedy_nodes",
    "job_priority",
    "max_stretch_bound",
    "maxmin_yields",
    "mcb8",
    "mcb8_stretch",
    "pack",
    "parse_name",
    "priority",
    "scheduler_from_name",
    "with_penalty",
    "yields",
]
