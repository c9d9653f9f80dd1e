"""The discrete-event engine: platform, jobs, allocations, events, models and metrics.

Imports numpy (and pandas for result tables) only; never gymnasium or another hpcgym sub-package.
"""

from hpcgym.sim.config import SimConfig
from hpcgym.sim.platform import Cluster, Platform
from hpcgym.sim.reconfig import FixedCost, NoCost, ReconfigCost, RedistributionCost
from hpcgym.sim.spec import EvolutionStep, JobKind, JobSpec, SizeRule
from hpcgym.sim.speedup import Amdahl, Linear, PowerLaw, SpeedupModel, SpeedupTable

__all__ = [
    "Amdahl",
    "Cluster",
    "EvolutionStep",
    "FixedCost",
    "JobKind",
    "JobSpec",
    "Linear",
    "NoCost",
    "Platform",
    "PowerLaw",
    "ReconfigCost",
    "RedistributionCost",
    "SimConfig",
    "SizeRule",
    "SpeedupModel",
    "SpeedupTable",
]
