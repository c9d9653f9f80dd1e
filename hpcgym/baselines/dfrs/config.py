"""DFRS algorithm settings and the paper's names for them (Table 1 and section 4.5).

A name has '/'-separated parts: the action on submission (``Greedy``, ``GreedyP``,
``GreedyPM``, ``MCB8`` or nothing) followed by ``*`` when jobs are also mapped on completion
(with MCB8 after MCB8, with Greedy after the greedy ones); ``per`` (MCB8 every period) or
``stretch-per`` (MCB8-stretch every period); then ``opt=min`` or ``opt=avg`` (``opt=max`` or
``opt=avg`` with ``stretch-per``), and optionally ``minft=S`` or ``minvt=S``. Examples:
``GreedyPM */per/opt=min/minvt=600``, ``/stretch-per/opt=max``, ``MCB8 */opt=avg/minft=300``.
Spaces are ignored and case does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass

from hpcgym.errors import SpecError

SUBMIT_ACTIONS = ("none", "greedy", "greedyp", "greedypm", "mcb8")
COMPLETION_ACTIONS = ("none", "greedy", "mcb8")
PERIODIC_ACTIONS = ("none", "mcb8", "mcb8-stretch")
PENALTY = 300.0
"""The paper's rescheduling penalty in seconds (unknown to the schedulers)."""
PERIOD = 600.0
"""The paper's default scheduling period: twice the penalty."""

_DISPLAY = {"greedy": "Greedy", "greedyp": "GreedyP", "greedypm": "GreedyPM", "mcb8": "MCB8"}


@dataclass(frozen=True, slots=True)
class DFRSConfig:
    """One DFRS algorithm.

    Attributes:
        submit: Mapping action when a job is submitted.
        completion: Mapping action when a job completes (``"none"`` or the one matching
            ``submit``: ``"mcb8"`` after MCB8, ``"greedy"`` after the greedy ones).
        periodic: Mapping action at each period.
        opt: CPU allocation after mapping: ``"min"`` or ``"avg"`` (average yield); with
            MCB8-stretch ``"max"`` or ``"avg"`` (average estimated stretch).
        minft: Jobs with a smaller flow time keep their nodes under MCB8 (or are paused).
        minvt: Jobs with a smaller virtual time keep their nodes under MCB8 (or are paused).
        period: Scheduling period in seconds (the engine's ``SimConfig.tick`` must match).
    """

    submit: str = "greedypm"
    completion: str = "greedy"
    periodic: str = "mcb8"
    opt: str = "min"
    minft: float | None = None
    minvt: float | None = 600.0
    period: float = PERIOD

    def __post_init__(self) -> None:
        if self.submit not in SUBMIT_ACTIONS:
            raise SpecError(f"DFRS submit action {self.submit!r} not in {SUBMIT_ACTIONS}")
        if self.completion not in COMPLETION_ACTIONS:
            raise SpecError(
                f"DFRS completion action {self.completion!r} not in {COMPLETION_ACTIONS}"
            )
        if self.periodic not in PERIODIC_ACTIONS:
            raise SpecError(f"DFRS periodic action {self.periodic!r} not in {PERIODIC_ACTIONS}")
        stretch = self.periodic == "mcb8-stretch"
        if self.opt not in (("max", "avg") if stretch else ("min", "avg")):
            raise SpecError(f"DFRS opt={self.opt!r}: use min or avg (max or avg with stretch-per)")
        if self.minft is not None and self.minvt is not None:
            raise SpecError("set at most one of minft and minvt")
        if not self.period > 0:
            raise SpecError(f"DFRS period must be > 0, got {self.period}")

    @property
    def name(self) -> str:
        """The paper's name of this algorithm."""
        head = _DISPLAY.get(self.submit, "")
        if self.completion != "none":
            head += " *"
        parts = [head]
        if self.periodic == "mcb8":
            parts.append("per")
        elif self.periodic == "mcb8-stretch":
            parts.append("stretch-per")
        parts.append(f"opt={self.opt}")
        if self.minft is not None:
            parts.append(f"minft={self.minft:g}")
        if self.minvt is not None:
            parts.append(f"minvt={self.minvt:g}")
        return "/".join(parts)


def parse_name(name: str, period: float = PERIOD) -> DFRSConfig:
    """The ``DFRSConfig`` of a paper-style name (see the module doc).

    Raises:
        SpecError: The name does not follow the scheme.
    """
    parts = name.replace(" ", "").lower().split("/")
    head = parts[0]
    star = head.endswith("*")
    submit = head.rstrip("*") or "none"
    if submit not in SUBMIT_ACTIONS:
        raise SpecError(f"DFRS name {name!r}: unknown submission action {submit!r}")
    if star and submit == "none":
        raise SpecError(f"DFRS name {name!r}: '*' needs a submission action")
    completion = ("mcb8" if submit == "mcb8" else "greedy") if star else "none"
    periodic, opt = "none", "min"
    minft: float | None = None
    minvt: float | None = None
    for part in parts[1:]:
        if part == "per":
            periodic = "mcb8"
        elif part == "stretch-per":
            periodic = "mcb8-stretch"
        elif part.startswith("opt="):
            opt = part[4:]
        elif part.startswith("minft="):
            minft = float(part[6:])
        elif part.startswith("minvt="):
            minvt = float(part[6:])
        else:
            raise SpecError(f"DFRS name {name!r}: unknown part {part!r}")
    return DFRSConfig(submit, completion, periodic, opt, minft, minvt, period)


TABLE1 = (
    "Greedy *",
    "GreedyP *",
    "GreedyPM *",
    "Greedy/per",
    "GreedyP/per",
    "GreedyPM/per",
    "Greedy */per",
    "GreedyP */per",
    "GreedyPM */per",
    "MCB8 *",
    "MCB8/per",
    "MCB8 */per",
    "/per",
    "/stretch-per",
)
"""The 14 mapping combinations of the paper's Table 1 (append ``/opt=...`` and limits)."""

TABLE2 = (
    "Greedy */opt=min",
    "GreedyP */opt=min",
    "GreedyPM */opt=min",
    "Greedy/per/opt=min",
    "GreedyP/per/opt=min",
    "GreedyPM/per/opt=min",
    "Greedy */per/opt=min",
    "GreedyP */per/opt=min",
    "GreedyPM */per/opt=min",
    "GreedyP/per/opt=min/minvt=600",
    "GreedyPM/per/opt=min/minvt=600",
    "GreedyP */per/opt=min/minvt=600",
    "GreedyPM */per/opt=min/minvt=600",
    "MCB8 */opt=min/minvt=600",
    "MCB8/per/opt=min/minvt=600",
    "MCB8 */per/opt=min/minvt=600",
    "/per/opt=min/minvt=600",
    "/stretch-per/opt=max/minvt=600",
)
"""The 18 DFRS algorithms of the paper's Table 2."""
