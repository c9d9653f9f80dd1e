"""``run.json``: what produced a bench run, and the run folders it lives in.

A run folder is ``<out>/<scenarios>/<UTC timestamp>-<config hash>`` (:func:`new_run_dir`); the
hash covers what decides the tables (the scenarios' full definitions and the policies, agents by
their file's SHA-256), so runs of one configuration share it and ``--resume`` can find the last
one. ``run.json`` (:func:`run_record`) holds the hpcgym version, the git commit when the package
is in a git checkout, the command line, the resolved configuration (every scenario's preset,
overrides, episode seeds and policies: the held-out split; each agent's card: its training
preset, arguments and seed), the machine, the Python and library versions, and wall and CPU
time. ``hpcgym bench --from run.json`` runs the recorded configuration again
(:func:`config_scenarios`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpcgym._version import __version__
from hpcgym.bench.policy_names import policy_kind, sweep_members
from hpcgym.bench.scenarios import Scenario, check_seeds
from hpcgym.cli_checks import read_text_file
from hpcgym.errors import SpecError
from hpcgym.provenance import git_commit, machine, now_utc, versions

RUN_JSON = "run.json"


def scenario_dict(sc: Scenario) -> dict[str, Any]:
    """A scenario as JSON-friendly data."""
    d = dataclasses.asdict(sc)
    d["seeds"] = list(sc.seeds)
    d["policies"] = list(sc.policies)
    return d


def _agent_file(policy: str) -> Path:
    """The file holding an agent's weights: its safetensors, else a pickled SB3 zip."""
    from hpcgym.agents.files import model_paths, pickled_path

    weights, _ = model_paths(policy)
    zipped = pickled_path(policy)
    return zipped if zipped.is_file() and not weights.is_file() else weights


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def agents_info(policies: Sequence[str]) -> dict[str, Any]:
    """For each agent policy (each member of a sweep): its file, SHA-256 and card."""
    out: dict[str, Any] = {}
    expanded: list[str] = []
    for p in dict.fromkeys(policies):
        kind = policy_kind(p)
        if kind == "sweep":
            expanded += [str(member) for _, member in sweep_members(p)]
        elif kind in ("agent", "score"):
            expanded.append(p)
    for p in expanded:
        if policy_kind(p) == "score":
            from hpcgym.agents.engine.cards import engine_card_path

            card_file = engine_card_path(p)
            score = json.loads(card_file.read_text())
            out[p] = {"file": str(card_file.resolve()), "sha256": _sha256(card_file), "card": score}
            continue
        weights = _agent_file(p)
        if not weights.is_file():  # its cells will fail and say why
            out[p] = {"file": str(weights), "sha256": None, "card": None}
            continue
        card_path = weights.with_suffix(".json")
        card = _agent_card(card_path) if card_path.is_file() else None
        out[p] = {"file": str(weights.resolve()), "sha256": _sha256(weights), "card": card}
    return out


def _agent_card(path: Path) -> dict[str, Any]:
    """An agent's card as recorded in run.json, once it reads as a card.

    Raises:
        SpecError: It is not an agent card (naming the file), before any folder is made.
    """
    from hpcgym.agents.rl.saved import AgentCard

    text = read_text_file(path, "an agent card")
    AgentCard.from_json(text, str(path))
    card: dict[str, Any] = json.loads(text)
    return card


def run_config(scenarios: Sequence[Scenario], policies: Sequence[str] | None) -> dict[str, Any]:
    """The configuration that decides a run's tables (JSON-friendly)."""
    chosen = sorted({p for sc in scenarios for p in (policies or sc.policies)})
    return {
        "scenarios": [scenario_dict(sc) for sc in scenarios],
        "policies": list(policies) if policies else None,
        "agents": agents_info(chosen),
    }


def config_hash(config: dict[str, Any]) -> str:
    """Eight hex digits of the SHA-256 of ``config`` (agents by their file's hash).

    An agent's decoding is part of it when it is not the default (``sha256:kind``): the same
    weights played kind-first are another policy, and greedy agents keep the hashes they had
    before decodings existed.
    """
    key = dict(config)
    key["agents"] = {p: _agent_key(a) for p, a in config.get("agents", {}).items()}
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _agent_key(agent: dict[str, Any]) -> Any:
    decode = (agent.get("card") or {}).get("decode", "greedy")
    return agent["sha256"] if decode == "greedy" else f"{agent['sha256']}:{decode}"


def check_agents_unchanged(recorded: Any, current: dict[str, Any], where: str, how: str) -> None:
    """Refuse to run an agent whose weights are not those a run recorded.

    ``recorded`` and ``current`` are configurations' ``agents`` entries (policy -> file, SHA-256,
    card); ``where`` names the run, ``how`` says what to do instead.

    Raises:
        SpecError: Naming the agent, its file, the recorded and the current SHA-256.
    """
    if not isinstance(recorded, dict):
        return
    for policy, then in recorded.items():
        now = current.get(policy)
        old = then.get("sha256") if isinstance(then, dict) else None
        if now is None or old is None or old == now.get("sha256"):
            continue
        found = f"now {now['sha256']}" if now.get("sha256") else "now the file is missing"
        raise SpecError(
            f"{where}: agent {policy} has changed since the run: its weights ({now['file']}) "
            f"had SHA-256 {old}, {found}. {how}"
        )


def config_scenarios(config: Any) -> tuple[list[Scenario], list[str] | None]:
    """The scenarios and policies of a recorded configuration (``--from``).

    Every value is checked before use: a ``run.json`` may have been edited by hand.

    Raises:
        SpecError: Not a configuration; a scenario that is not valid (a field missing or of the
            wrong type, its name, preset, seeds or metric); a policy list that is not a list of
            names; nothing to run.
    """
    if not isinstance(config, dict):
        raise SpecError(f"'config' is {_kind(config)}, not a bench configuration")
    listed = config.get("scenarios")
    if not (isinstance(listed, list) and listed):
        raise SpecError(f"'config' holds no list of 'scenarios' ({_kind(listed)})")
    scenarios = [_recorded_scenario(d, k) for k, d in enumerate(listed)]
    policies = config.get("policies")
    if policies is not None and not (
        isinstance(policies, list) and all(isinstance(p, str) for p in policies)
    ):
        raise SpecError(f"'policies' must be a list of policy names or null, not {policies!r}")
    for sc in scenarios:
        if not policies and not sc.policies:
            raise SpecError(
                f"scenario {sc.name} has no policies and the run names none ('policies': "
                f"{policies!r}): there is nothing to run"
            )
    return scenarios, policies


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


_SCENARIO_FIELDS = ("name", "env_id", "env_kwargs", "seeds", "policies")
"""The fields every recorded scenario has (the others have defaults)."""


def _recorded_scenario(d: Any, k: int) -> Scenario:
    """Scenario ``k`` of a recorded configuration, checked field by field."""
    if not isinstance(d, dict):
        raise SpecError(f"scenario {k} is {_kind(d)}, not a scenario")
    where = f"scenario {d.get('name', k)!r}"
    missing = [key for key in _SCENARIO_FIELDS if key not in d]
    if missing:
        raise SpecError(f"{where}: missing {', '.join(repr(m) for m in missing)}")
    if not isinstance(d["env_kwargs"], dict):
        raise SpecError(
            f"{where}: 'env_kwargs' must be an object of preset arguments, not {d['env_kwargs']!r}"
        )
    if not (isinstance(d["policies"], list) and all(isinstance(p, str) for p in d["policies"])):
        raise SpecError(
            f"{where}: 'policies' must be a list of policy names, not {d['policies']!r}"
        )
    check_seeds(d["seeds"], where)
    if not d["seeds"]:
        raise SpecError(f"{where}: 'seeds' is empty: no episode to run")
    texts = {"description": "", "metric": "mean_bsld", "windows": "", "best_heuristic": ""}
    for key in texts:
        if not isinstance(d.get(key, ""), str):
            raise SpecError(f"{where}: {key!r} must be a string, not {d[key]!r}")
    return Scenario(
        d["name"],
        d["env_id"],
        dict(d["env_kwargs"]),
        tuple(d["seeds"]),
        tuple(d["policies"]),
        **{key: d.get(key, default) for key, default in texts.items()},
    )


def run_record(
    config: dict[str, Any], argv: Sequence[str], executor: dict[str, Any]
) -> dict[str, Any]:
    """A new ``run.json`` record (status ``running``; the command completes it)."""
    return {
        "hpcgym_version": __version__,
        "git_commit": git_commit(),
        "command": ["hpcgym", *argv],
        "config_hash": config_hash(config),
        "config": config,
        "executor": executor,
        "machine": machine(),
        "versions": versions(),
        "started": now_utc(),
        "status": "running",
    }


def new_run_dir(out: Path, scenario_names: Sequence[str], chash: str) -> Path:
    """Create and return a new folder ``<out>/<scenarios>/<UTC timestamp>-<chash>``."""
    parent = out / "+".join(scenario_names)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    for k in range(1, 1000):
        folder = parent / (f"{stamp}-{chash}" if k == 1 else f"{stamp}.{k}-{chash}")
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return folder
    raise SpecError(f"could not make a new run folder in {parent}")  # pragma: no cover


def latest_run_dir(out: Path, scenario_names: Sequence[str], chash: str) -> Path | None:
    """The newest run folder of this configuration under ``out`` (``--resume``), if any."""
    parent = out / "+".join(scenario_names)
    if not parent.is_dir():
        return None
    mine = [
        p
        for p in parent.iterdir()
        if p.is_dir() and (p / RUN_JSON).is_file() and p.name.endswith(f"-{chash}")
    ]
    return max(mine, key=lambda p: p.name) if mine else None


def read_record(path: Path) -> dict[str, Any]:
    """A ``run.json`` (a file, or the run folder holding it)."""
    file = path / RUN_JSON if path.is_dir() else path
    try:
        record = json.loads(read_text_file(file, "a bench run.json"))
    except FileNotFoundError:
        raise SpecError(f"{file}: no such file (give a bench run's run.json)") from None
    except json.JSONDecodeError as e:
        raise SpecError(f"{file}: not JSON ({e})") from None
    if not isinstance(record, dict) or "config" not in record:
        raise SpecError(f"{file}: not a bench run.json (no 'config')")
    if not isinstance(record["config"], dict):
        raise SpecError(f"{file}: not a bench run.json (its 'config' is not an object)")
    return record
