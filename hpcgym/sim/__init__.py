"""The discrete-event engine: platform, jobs, allocations, events, models and metrics.

Imports numpy (and pandas for result tables) only; never gymnasium or another hpcgym sub-package.
"""

from hpcgym.sim.config import SimConfig
from hpcgym.sim.engine import Scheduler
from hpcgym.sim.events import EventType
from hpcgym.sim.job import Job, JobState
from hpcgym.sim.metrics import SimResult, bounded_slowdown
from hpcgym.sim.platform import Cluster, Platform
from hpcgym.sim.reconfig import FixedCost, NoCost, ReconfigCost, RedistributionCost
from hpcgym.sim.simulator import Simulator
from hpcgym.sim.spec import TIME_HORIZON, EvolutionStep, JobKind, JobSpec, SizeRule
from hpcgym.sim.speedup import Amdahl, Linear, PowerLaw, SpeedupModel, SpeedupTable

__all__ = [
    "EventType",
    "Job",
    "JobState",
    "Scheduler",
    "SimResult",
    "Simulator",
    "bounded_slowdown",
    "Amdahl",
    "Cluster",
    "EvolutionStep",
    "FixedCost",
    "JobKind",
    "JobSpec",
    "TIME_HORIZON",
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
