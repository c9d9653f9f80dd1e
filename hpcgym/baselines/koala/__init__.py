"""KOALA: multicluster placement with a malleability manager (Buisson et al., CoreGRID TR-0092).

- :mod:`~hpcgym.baselines.koala.scheduler`: Worst-Fit placement, PRA/PWA, the manager.
- :mod:`~hpcgym.baselines.koala.malleability`: the FPSMA and EGS malleability policies.

Docs: ``docs/baselines-sdpolicy-koala.md``; the paper check: ``docs/papers-sdpolicy-koala.md``.
"""

from hpcgym.baselines.koala.malleability import Policy
from hpcgym.baselines.koala.scheduler import KOALA_PRESETS, KOALA_VARIANTS, Koala, KoalaConfig

__all__ = ["KOALA_PRESETS", "KOALA_VARIANTS", "Koala", "KoalaConfig", "Policy"]
