"""Policies the benchmark can run, by name: baselines, ``random``, ``advance`` and saved agents.

A policy name is resolved in this order:

* ``advance``: always chooses *advance* (the env then starts the head job only when the machine
  would otherwise stall, so this is a very lazy FCFS);
* ``random``: uniform over the legal entries of the mask, seeded with the episode's seed;
* ``first-fit``: the first queue slot whose first start level is legal, else advance (the
  imitation expert of :mod:`hpcgym.agents.imitation`: backfilling without a reservation);
* a name of :func:`hpcgym.baselines.names` (``fcfs``, ``easy``, ``mebf``, ...): an engine
  scheduler, run on the bare engine over exactly the episode the env draws for that seed
  (the fast path; see :mod:`hpcgym.bench.episode`);
* such a name with ``@env`` (``easy@env``): the same scheduler acting on the env through the
  adapter (:class:`hpcgym.baselines.adapter.BaselinePolicy`), one menu entry per step, in the
  env its setting needs (``env_overrides``: no walltime kills for MEBF, every decision point for
  evolving list scheduling). It gives the engine path's schedule exactly, or stops with
  ``NotExpressible`` naming the command the menu has no entry for;
* the path of an agent saved by ``hpcgym train``: its run folder, or its weights
  or card (suffix optional). Agents are loaded without unpickling
  (:func:`hpcgym.agents.saved.load_agent`); an SB3 zip saved with pickle is refused unless its
  path was passed to :func:`trust_pickled` (``hpcgym evaluate --trust-pickle``, ``hpcgym bench
  --trust-pickle``);
* the folder of a seed sweep (``hpcgym train --seeds 0-4 --out DIR``: one saved agent per seed
  in ``DIR/s<seed>``): one policy whose episodes are run by every member. Its rows carry the
  member's ``train_seed``, and the interval tables treat each training seed as a stratum
  (:func:`sweep_members`). ``DIR@best`` is the same sweep with each member's ``best`` agent (the
  checkpoint its validation chose, ``DIR/s<seed>/best.*``) in place of its final one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.agents.decode import agent_action, sample_rng
from hpcgym.agents.layout import Blocks, menu_blocks
from hpcgym.agents.members import BEST, sweep_members
from hpcgym.baselines import names as baseline_names
from hpcgym.errors import SpecError

BUILTIN = ("advance", "random", "first-fit")


class EnvPolicy:
    """A policy acting through the env: ``reset(seed)`` per episode, then ``act`` per step."""

    env_overrides: dict[str, Any] = {}  # noqa: RUF012  (read-only; agents set their own)

    def bind(self, env: Any) -> None:
        """Check ``env`` suits the policy (called once, before the first reset)."""

    def reset(self, seed: int) -> None:
        """Start an episode whose reset seed is ``seed``."""

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The menu entry to take (legal under ``mask``)."""
        raise NotImplementedError


class AdvancePolicy(EnvPolicy):
    """Always *advance*."""

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """Entry 0, always legal."""
        return 0


class RandomPolicy(EnvPolicy):
    """Uniform over the legal entries, from a generator seeded with the episode's seed."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        """Reseed from the episode's seed (so every episode is reproducible on its own)."""
        self._rng = np.random.default_rng([seed, 0x5EED])

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """A legal entry drawn uniformly."""
        legal = np.flatnonzero(mask)
        return int(legal[self._rng.integers(len(legal))])


EPISODE_KEYS = frozenset(
    {"workload", "workload_options", "workload_seed", "episode", "n_jobs", "n_seeds"}
    | {"platform", "cores", "kill_on_walltime", "max_steps", "split", "window_starts"}
)
"""Env arguments that choose the episode: an agent's card never overrides these (an agent
trained on the train split is evaluated on the scenario's split, the test split)."""


class FirstFitPolicy(EnvPolicy):
    """Start the first queued job that fits at its first start level; else advance."""

    def __init__(self) -> None:
        self._act: Any = None

    def bind(self, env: Any) -> None:
        """Read the menu layout."""
        from hpcgym.agents.imitation import make_expert
        from hpcgym.agents.layout import menu_blocks

        self._act = make_expert("first-fit", menu_blocks(env))

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The expert's action."""
        return int(self._act(mask))


ON_ENV = "@env"
"""Suffix of a baseline name that runs it through the env adapter (``easy@env``)."""


class AdaptedBaseline(EnvPolicy):
    """A baseline acting through the env adapter, strictly (never silently different)."""

    def __init__(self, name: str) -> None:
        from hpcgym.baselines.adapter import BaselinePolicy

        self.adapter = BaselinePolicy(name, strict=True)
        self.env_overrides = dict(self.adapter.env_overrides)

    def bind(self, env: Any) -> None:
        """Follow ``env``'s engine."""
        self.adapter.bind(env)

    def reset(self, seed: int) -> None:
        """A new episode."""
        self.adapter.reset(seed)

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The menu entry of the scheduler's next command, or advance."""
        return self.adapter.act(obs, mask)


class AgentPolicy(EnvPolicy):
    """A saved SB3 agent, acting with the mask applied when it can take one.

    It plays under its card's decoding (``card.decode``, :mod:`hpcgym.agents.decode`); sampled
    decoding draws from a generator seeded with the episode's seed, so every decoding is
    reproducible.

    The env gets the card's encoding arguments (observation, windows, levels, ...), never its
    episode arguments (:data:`EPISODE_KEYS`), so the agent schedules the evaluation's jobs. A
    MaskablePPO agent trained with a resize budget runs in an env with the same budget
    (``resize_budget``), as in training.
    """

    def __init__(self, path: str | Path, trust_pickle: bool = False) -> None:
        from hpcgym.agents.saved import load_agent

        self.model, self.card = load_agent(path, trust_pickle=trust_pickle)
        kw = self.card.env_kwargs
        self.env_overrides = {k: v for k, v in kw.items() if k not in EPISODE_KEYS}
        if self.card.resize_budget is not None:
            self.env_overrides["resize_budget"] = self.card.resize_budget
        self._masked = self.card.algo == "maskable_ppo"
        if not self._masked and self.card.decode != "greedy":
            raise SpecError(
                f"{path}: the card says decode={self.card.decode}, which reads the masked "
                f"distribution; a {self.card.algo} agent plays greedy only (set it in the card)"
            )
        self._blocks: Blocks | None = None
        self._rng = sample_rng(0)

    def bind(self, env: Any) -> None:
        """Check the env is the agent's preset, with the agent's resize budget.

        Another version of the same preset is accepted when its spaces are the ones the agent
        was trained with (``hpcgym/Malleable-v1`` has ``Malleable-v0``'s menu and observations
        and another objective): the agent then plays that version's episodes.
        """
        env_id = env.spec.id if env.spec is not None else None
        if env_id != self.card.env_id and not self._same_interface(env, env_id):
            raise SpecError(f"agent trained on {self.card.env_id}, asked to run on {env_id}")
        budget = self.card.resize_budget
        if budget is not None and env.unwrapped.config.resize_budget != budget:
            raise SpecError(
                f"agent trained with resize_budget={budget}: make the env with "
                f"resize_budget={budget} (policy.env_overrides has it)"
            )
        self._blocks = menu_blocks(env)

    def _same_interface(self, env: Any, env_id: str | None) -> bool:
        from hpcgym.agents.saved import describe_space

        family = self.card.env_id.rsplit("-v", 1)[0]
        return (
            env_id is not None
            and env_id.rsplit("-v", 1)[0] == family
            and describe_space(env.observation_space) == self.card.observation_space
            and describe_space(env.action_space) == self.card.action_space
        )

    def reset(self, seed: int) -> None:
        """A new episode: sampled decoding draws from a generator seeded with ``seed``."""
        self._rng = sample_rng(seed)

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The model's action under the card's decoding.

        An unmasked model's illegal choice becomes advance.
        """
        if self._masked:
            return agent_action(self.model, obs, mask, self.card.decode, self._blocks, self._rng)
        a = agent_action(self.model, obs, None, "greedy", None)
        return a if mask[a] else 0


def policy_kind(name: str) -> str:
    """``"builtin"``, ``"baseline"``, ``"adapted"``, ``"agent"``, ``"score"`` or ``"sweep"``."""
    if name in BUILTIN:
        return "builtin"
    if name in baseline_names():
        return "baseline"
    if name.endswith(ON_ENV) and name[: -len(ON_ENV)] in baseline_names():
        return "adapted"
    from hpcgym.agents.saved import is_saved_agent
    from hpcgym.agents.score import is_score_agent

    if is_saved_agent(name):
        return "agent"
    if is_score_agent(name):
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
    from hpcgym.agents.saved import model_paths, pickled_path

    weights, _ = model_paths(name)
    zipped = pickled_path(name)
    return zipped if zipped.is_file() and not weights.is_file() else None


def trust_pickled(path: str | Path) -> None:
    """Let this process load the pickled SB3 zip ``path`` (it runs code the file contains)."""
    from hpcgym.agents.saved import pickled_path

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
    if kind == "adapted":
        return AdaptedBaseline(name[: -len(ON_ENV)])
    if kind == "sweep":
        raise SpecError(
            f"{name!r} is a seed sweep, not one agent: pass it to hpcgym bench (every member "
            f"runs), or one of its members ({sweep_members(name)[0][1]})"
        )
    if name == "advance":
        return AdvancePolicy()
    if name == "random":
        return RandomPolicy()
    if name == "first-fit":
        return FirstFitPolicy()
    from hpcgym.agents.saved import pickled_path

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
