"""What every engine scheduler of ``hpcgym.baselines`` shares: a name and the runtime estimate.

The runtime estimate rule, estimated ends and accepted sizes live in
:mod:`hpcgym.sim.planning` (the env's ``"ebf"`` start level computes with them too); they are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from hpcgym.errors import SpecError
from hpcgym.sim import JobSpec, Platform, SimConfig, SimResult, Simulator
from hpcgym.sim.batch import run_batch
from hpcgym.sim.batch_specs import run_specs
from hpcgym.sim.planning import (
    OVERRUN_GRACE,
    estimated_end,
    estimated_remaining,
    largest_size,
    runtime_estimate,
    smallest_size,
)

__all__ = [
    "OVERRUN_GRACE",
    "BaseScheduler",
    "single_cluster",
    "estimated_end",
    "estimated_remaining",
    "largest_size",
    "runtime_estimate",
    "smallest_size",
]


def single_cluster(sim: Simulator, name: str) -> None:
    """Refuse a platform of several clusters for the single-cluster scheduler ``name``."""
    if len(sim.platform.clusters) != 1:
        raise SpecError(
            f"{name} schedules a single cluster; this platform has "
            f"{len(sim.platform.clusters)}. Use a multicluster scheduler (koala)."
        )


class BaseScheduler:
    """An engine scheduler: ``schedule(sim)`` at each decision point, and a registry name.

    Subclasses keep per-episode state; ``reset`` clears it so one instance can run several
    episodes (``run`` calls it).
    """

    name: ClassVar[str] = "base"
    """The scheduler's name in ``hpcgym.baselines`` (``make(name)``)."""

    def schedule(self, sim: Simulator) -> None:
        """Inspect ``sim`` and issue commands; called once per decision point."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything about the previous episode."""

    def run(self, sim: Simulator) -> None:
        """Drive ``sim`` to its end with this scheduler (``sim.result()`` has the metrics).

        FCFS and EASY on rigid jobs run in the C batch core, with the same result
        (``hpcgym.sim.batch``).
        """
        self._run(sim)

    def _run(self, sim: Simulator) -> SimResult | None:
        """``run``'s work; the result table when the batch core ran it (it builds one)."""
        self.reset()
        done = run_batch(sim, self)
        if done is None:
            sim.drive(self)
        return done

    def setting(
        self, jobs: Sequence[JobSpec], config: SimConfig
    ) -> tuple[Sequence[JobSpec], SimConfig]:
        """The jobs and engine settings this scheduler's experiments run with.

        The default keeps both. A scheduler whose paper fixes part of the setting says so here
        (DFRS: its rescheduling penalty and period; malleable ones: no walltime kills), so that
        every runner (``simulate``, the benchmark) gives it the same world.
        """
        return jobs, config

    def env_needs(self) -> dict[str, Any]:
        """The env arguments this scheduler needs to act through the env's action menu.

        The baseline adapter (``hpcgym.policies.adapted.BaselinePolicy``) makes the env with
        them, so each scheduler states its own needs here and the adapter knows no scheduler by
        name. The default: the walltime kill rule of its :meth:`setting`
        (``kill_on_walltime=False`` when the setting turns kills off). A scheduler whose
        commands need more (menu levels their sizes are targets of, every decision point)
        extends it.
        """
        _, cfg = self.setting([], SimConfig())
        return {} if cfg.kill_on_walltime else {"kill_on_walltime": False}

    def env_refusal(self) -> str | None:
        """Why this scheduler cannot act through the env's menu whatever the env's arguments.

        ``None`` (the default) when it can; a sentence naming what to run instead otherwise. The
        adapter refuses such an episode (``NotExpressible``, reason ``setting``).
        """
        return None

    def simulate(
        self, platform: Platform, jobs: Sequence[JobSpec], config: SimConfig | None = None
    ) -> SimResult:
        """Run one episode of ``jobs`` on ``platform`` in this scheduler's setting."""
        jobs, config = self.setting(jobs, config or SimConfig())
        if type(self).run is BaseScheduler.run:
            # FCFS and EASY on rigid jobs: the batch core straight from the specs.
            done = run_specs(platform, jobs, config, self)
            if done is not None:
                self.reset()  # as a run leaves it
                return done
        sim = Simulator(platform, jobs, config)
        if type(self).run is BaseScheduler.run:
            # The batch core's run builds the result table: keep it rather than build another.
            done = self._run(sim)
            if done is not None:
                return done
        else:  # a subclass's own run
            self.run(sim)
        return sim.result()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
