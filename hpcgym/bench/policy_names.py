"""Policies the benchmark can run, by name: built-ins, baselines, saved agents and sweeps.

A policy name is resolved in this order:

* a name of the policy layer (:mod:`hpcgym.policies.names`): ``advance``, ``random``,
  ``first-fit``; a baseline name of :func:`hpcgym.baselines.names` (``fcfs``, ``easy``,
  ``mebf``, ...), an engine scheduler run on the bare engine over exactly the episode the env
  draws for that seed (the fast path; see :mod:`hpcgym.bench.episode`); such a name with
  ``@env`` (``easy@env``): the same scheduler acting on the env through the adapter
  (:class:`hpcgym.policies.BaselinePolicy`), one menu entry per step, in the env its setting
  needs (the scheduler's own ``env_needs``: no walltime kills for MEBF, every decision point for
  evolving list scheduling). It gives the engine path's schedule exactly, or stops with
  ``NotExpressible`` naming the command the menu has no entry for;
* the path of an agent saved by ``hpcgym train``: its run folder, or its weights or card (suffix
  optional), played by :class:`hpcgym.agents.rl.env_policy.AgentPolicy`. Agents are loaded without
  unpickling (:func:`hpcgym.agents.rl.saved.load_agent`); an SB3 zip saved with pickle is refused
  unless its path was passed to :func:`trust_pickled` (``hpcgym evaluate --trust-pickle``,
  ``hpcgym bench --trust-pickle``);
* a score, planner or distilled agent's folder (run on the bare engine, as a baseline);
* the folder of a seed sweep (``hpcgym train --seeds 0-4 --out DIR``: one saved agent per seed
  in ``DIR/s<seed>``): one policy whose episodes are run by every member. Its rows carry the
  member's ``train_seed``, and the interval tables treat each training seed as a stratum
  (:func:`sweep_members`). ``DIR@best`` is the same sweep with each member's ``best`` agent (the
  checkpoint its validation chose, ``DIR/s<seed>/best.*``) in place of its final one.

Every policy acts through one contract, :class:`hpcgym.policies.EnvPolicy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hpcgym.agents.members import BEST, sweep_members
from hpcgym.agents.rl.env_policy import AgentPolicy
from hpcgym.baselines import names as baseline_names
from hpcgym.errors import SpecError
from hpcgym.policies import (
    BUILTIN,
    EPISODE_KEYS,
    ON_ENV,
    AdvancePolicy,
    EnvPolicy,
    FirstFitPolicy,
    RandomPolicy,
    base_kind,
    base_policy,
)

__all__ = [
    "BEST",
    "BUILTIN",
    "EPISODE_KEYS",
    "ON_ENV",
    "AdvancePolicy",
    "AgentPolicy",
    "EnvPolicy",
    "FirstFitPolicy",
    "RandomPolicy",
    "make_env_policy",
    "pickled_agent",
    "policy_kind",
    "policy_label",
    "policy_labels",
    "sweep_members",
    "trust_pickled",
]


def policy_kind(name: str) -> str:
    """``"builtin"``, ``"baseline"``, ``"adapted"``, ``"agent"``, ``"score"`` or ``"sweep"``."""
    kind = base_kind(name)
    if kind is not None:
        return kind
    from hpcgym.agents.engine.cards import is_engine_agent
    from hpcgym.agents.files import is_saved_agent

    if is_saved_agent(name):
        return "agent"
    if is_engine_agent(name):
        return "score"
    if sweep_members(name):
        return "sweep"
    raise SpecError(
        f"unknown policy {name!r}: not advance, random, a baseline "
        f"({', '.join(baseline_names())}), a baseline{ON_ENV}, a saved agent "
        f"(no agent weights and card at {name}), a score, planner or distilled agent (no "
        "score.json, planner.json or distilled.json there) or a seed sweep (no s<seed> agent "
        "folders in it)"
    )


_TRUSTED: set[Path] = set()
"""Pickled agents this process may load (:func:`trust_pickled`)."""


def pickled_agent(name: str | Path) -> Path | None:
    """The pickled SB3 zip the saved agent ``name`` loads from, else ``None``.

    That is a zip with no safetensors weights beside it: :func:`trust_pickled` must be given it
    before it can run.
    """
    from hpcgym.agents.files import model_paths, pickled_path

    weights, _ = model_paths(name)
    zipped = pickled_path(name)
    return zipped if zipped.is_file() and not weights.is_file() else None


def trust_pickled(path: str | Path) -> None:
    """Let this process load the pickled SB3 zip ``path`` (it runs code the file contains)."""
    from hpcgym.agents.files import pickled_path

    _TRUSTED.add(pickled_path(path).resolve())


def make_env_policy(name: str) -> EnvPolicy:
    """The env policy ``name`` (``advance``, ``random``, ``<baseline>@env`` or an agent path)."""
    kind = policy_kind(name)
    if kind == "baseline":
        raise SpecError(
            f"{name!r} is an engine baseline, not an env policy; {name}{ON_ENV} runs it on the env"
        )
    if kind == "score":
        raise SpecError(
            f"{name!r} is a score, planner or distilled agent: it runs on the bare engine over "
            "the env's episode, as a baseline does (hpcgym bench --policy), not step by step on "
            "the env"
        )
    if kind in ("adapted", "builtin"):
        return base_policy(name)
    if kind == "sweep":
        raise SpecError(
            f"{name!r} is a seed sweep, not one agent: pass it to hpcgym bench (every member "
            f"runs), or one of its members ({sweep_members(name)[0][1]})"
        )
    from hpcgym.agents.files import pickled_path

    return AgentPolicy(name, trust_pickle=pickled_path(name).resolve() in _TRUSTED)


def policy_label(name: str) -> str:
    """A short name for tables.

    Agents go by their file stem (their run folder for ``agent``), sweeps by their folder's name.
    """
    kind = policy_kind(name)
    if kind == "sweep":
        best = name.endswith(BEST)
        return Path(name.removesuffix(BEST)).resolve().name + (BEST if best else "")
    if kind == "score":
        p = Path(name).resolve()
        return p.name if p.is_dir() else p.parent.name
    if kind != "agent":
        return name
    p = Path(name)
    if p.is_dir():
        return p.name
    p = p.with_suffix("")
    return p.parent.name if p.name == "agent" and p.parent.name else p.name


def policy_labels(names: Sequence[str]) -> list[str]:
    """:func:`policy_label` of each name, made unique by as many parent folders as it takes.

    ``runs/a/best`` and ``runs/b/best`` become ``a/best`` and ``b/best``; names that stay equal
    (the same policy given twice) raise.

    Raises:
        SpecError: Two names resolve to the same label at every depth.
    """
    labels = [policy_label(n) for n in names]
    for i, label in enumerate(labels):
        clash = [j for j, other in enumerate(labels) if other == label]
        if len(clash) == 1 or policy_kind(names[i]) not in ("agent", "score", "sweep"):
            continue
        paths = [_label_path(names[j]) for j in clash]
        for depth in range(2, max(len(q.parts) for q in paths) + 1):
            longer = ["/".join(q.parts[-depth:]) for q in paths]
            if len(set(longer)) == len(longer):
                for j, new in zip(clash, longer, strict=True):
                    labels[j] = new
                break
    dupes = sorted({label for label in labels if labels.count(label) > 1})
    if dupes:
        raise SpecError(
            f"policies given twice: {', '.join(dupes)}; give each policy once (two agents need "
            "two different files or folders)"
        )
    return labels


def _label_path(name: str) -> Path:
    """The path whose last parts label an agent or sweep: no suffix, ``agent`` as its folder."""
    p = Path(name).resolve()
    if p.is_file():
        p = p.with_suffix("")
        if p.name in ("agent", "score"):
            p = p.parent
    return p
