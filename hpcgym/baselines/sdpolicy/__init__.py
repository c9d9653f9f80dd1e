"""SD-Policy: slowdown-driven co-scheduling of malleable jobs (D'Amico et al., ICPP 2019).

- :mod:`~hpcgym.baselines.sdpolicy.scheduler`: the backfill pass with co-scheduling.
- :mod:`~hpcgym.baselines.sdpolicy.mates`: mate selection (the paper's Equations 1-4).
- :mod:`~hpcgym.baselines.sdpolicy.runtime`: the runtime models and estimates.

Docs: ``docs/baselines-sdpolicy-koala.md``; the paper check: ``docs/papers-sdpolicy-koala.md``.
"""

from hpcgym.baselines.sdpolicy.mates import MatePool
from hpcgym.baselines.sdpolicy.runtime import RuntimeModel
from hpcgym.baselines.sdpolicy.scheduler import (
    DYNAMIC,
    SD_PRESETS,
    SD_VARIANTS,
    SDPolicy,
    SDPolicyConfig,
)

__all__ = [
    "DYNAMIC",
    "SD_PRESETS",
    "SD_VARIANTS",
    "MatePool",
    "RuntimeModel",
    "SDPolicy",
    "SDPolicyConfig",
]
