"""The policy contract: schedulers state their env needs, the menu finds entries, old paths work.

A new baseline acts through the env adapter without any edit of the adapter: it states what it
needs of the env (``env_needs``) and when it cannot act there at all (``env_refusal``); the
action menu itself answers which entry performs a command (``ActionMenu.entry_for``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.baselines import make, names
from hpcgym.baselines.base import BaseScheduler
from hpcgym.baselines.classic import EasyBackfill
from hpcgym.envs.menu_entry import NO_LEVEL, NOT_IN_MENU, OUTSIDE_WINDOW, NoMenuEntry
from hpcgym.policies import (
    EnvPolicy,
    NotExpressible,
    as_env_policy,
    base_kind,
    base_policy,
    rollout,
)
from hpcgym.policies.adapted import SETTING
from hpcgym.policies.shadow import Command
from hpcgym.sim import SimConfig

ROOT = Path(__file__).resolve().parents[2]


class _PatientEasy(BaseScheduler):
    """EASY that states an env need no registered scheduler has (every decision point)."""

    name = "patient-easy"

    def __init__(self) -> None:
        self._easy = EasyBackfill()

    def reset(self) -> None:
        self._easy.reset()

    def schedule(self, sim: Any) -> None:
        self._easy.schedule(sim)

    def env_needs(self) -> dict[str, Any]:
        return {**super().env_needs(), "skip_trivial": False}


class _Refusing(_PatientEasy):
    name = "refusing"

    def env_refusal(self) -> str | None:
        return "this scheduler only runs on the engine"


def test_a_new_scheduler_states_its_env_needs_and_the_adapter_uses_them():
    policy = as_env_policy(_PatientEasy())
    assert policy.env_overrides == {"skip_trivial": False}
    env = gym.make("hpcgym/Rigid-v0", n_jobs=24, queue_slots=32, **policy.env_overrides)
    assert env.unwrapped.config.skip_trivial is False
    out = rollout(policy, env, seed=3)
    assert not out.truncated
    sim = env.unwrapped.sim
    bare = make("easy").simulate(sim.platform, [j.spec for j in sim.jobs.values()], SimConfig())
    pd.testing.assert_frame_equal(sim.result().jobs, bare.jobs)
    assert policy.stats.commands > 0


def test_a_scheduler_that_refuses_the_env_is_refused_with_its_own_reason():
    policy = as_env_policy(_Refusing())
    env = gym.make("hpcgym/Rigid-v0", n_jobs=8, queue_slots=8)
    with pytest.raises(NotExpressible, match="only runs on the engine") as err:
        rollout(policy, env, seed=0)
    assert err.value.reason == SETTING


@pytest.mark.parametrize("name", names())
def test_every_registered_scheduler_states_its_needs_through_one_method(name):
    scheduler = make(name)
    needs = scheduler.env_needs()
    assert as_env_policy(scheduler).env_overrides == needs
    _, cfg = scheduler.setting([], SimConfig())
    assert needs.get("kill_on_walltime", True) is cfg.kill_on_walltime
    if name.startswith("mebf"):
        assert "start_levels" in needs
    if name.startswith("koala") and name != "koala":
        assert "start_levels" in needs
    refusal = scheduler.env_refusal()
    assert (refusal is not None) == (name in ("mebf-sjf", "mebf-f1"))


def test_the_adapter_switches_on_no_scheduler_class():
    tree = ast.parse((ROOT / "hpcgym/policies/adapted.py").read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hpcgym.baselines")
        for alias in node.names
    }
    # The level functions are re-exported for older code; no scheduler class is imported.
    assert imported == {"BaseScheduler", "make", "mebf_levels", "koala_levels", "sd_levels"}
    on_scheduler = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "isinstance"
        and ast.unparse(node.args[0]).startswith("self.scheduler")
    ]
    assert not on_scheduler


def _env_at_first_choice(**kwargs: Any) -> Any:
    env = gym.make("hpcgym/Rigid-v0", **kwargs)
    env.reset(seed=1)
    return env.unwrapped


def test_the_menu_answers_which_entry_starts_a_queued_job():
    env = _env_at_first_choice(n_jobs=16, queue_slots=4)
    d = env.decision
    row = d.queue_rows[0]
    job = env.ledger.jobs[row].spec
    labels = env.action_labels()
    cmd = Command("start", job.id, size=job.nodes)
    index = env.menu.entry_for(d, env.ledger, cmd)
    assert labels[index] == "start[0]@req"


def test_the_menu_names_why_no_entry_performs_a_command():
    env = _env_at_first_choice(n_jobs=16, queue_slots=4)
    d = env.decision
    job = env.ledger.jobs[d.queue_rows[0]].spec
    with pytest.raises(NoMenuEntry) as err:
        env.menu.entry_for(d, env.ledger, Command("start", job.id, size=job.nodes + 1))
    assert err.value.reason == f"{NO_LEVEL} (start)"
    assert "targets" in err.value.detail
    with pytest.raises(NoMenuEntry) as err:
        env.menu.entry_for(d, env.ledger, Command("resize", job.id, size=1, before=2))
    assert err.value.reason == f"{OUTSIDE_WINDOW} (running)"
    running = next(iter(env.sim.running), None)
    if running is not None:
        with pytest.raises(NoMenuEntry) as err:
            env.menu.entry_for(d, env.ledger, Command("grant", running))
        assert err.value.reason in (f"{NOT_IN_MENU} (grant)", f"{OUTSIDE_WINDOW} (running)")


def test_names_of_the_policy_layer():
    assert base_kind("random") == "builtin"
    assert base_kind("easy") == "baseline"
    assert base_kind("easy@env") == "adapted"
    assert base_kind("runs/x") is None
    assert isinstance(base_policy("first-fit"), EnvPolicy)
    assert isinstance(base_policy("easy@env"), EnvPolicy)
    assert base_policy("mebf@env").env_overrides["kill_on_walltime"] is False


def test_the_moved_names_keep_their_old_import_paths():
    import hpcgym.baselines as baselines
    import hpcgym.baselines.adapter as old_adapter
    import hpcgym.bench.policy_names as bench_policies
    import hpcgym.policies as policies
    from hpcgym.agents.rl.env_policy import AgentPolicy

    assert old_adapter.BaselinePolicy is policies.BaselinePolicy
    assert old_adapter.rollout is policies.rollout
    assert baselines.as_env_policy is policies.as_env_policy
    assert baselines.NotExpressible is policies.NotExpressible
    assert bench_policies.EnvPolicy is policies.EnvPolicy
    assert bench_policies.AgentPolicy is AgentPolicy
    with pytest.raises(AttributeError):
        _ = baselines.NoSuchName  # type: ignore[attr-defined]


def test_the_policy_layer_loads_neither_torch_nor_stable_baselines():
    probe = (
        "import hpcgym.policies, sys\n"
        "heavy = {'torch', 'stable_baselines3', 'sb3_contrib'} & "
        "{m.partition('.')[0] for m in sys.modules}\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=ROOT)
