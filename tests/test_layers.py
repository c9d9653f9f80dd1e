"""The package's layers hold: what each import loads, and the import-linter contracts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("gymnasium", "pandas", "torch")


def _loaded_after(code: str) -> set[str]:
    """Top-level modules loaded by ``code`` in a fresh interpreter."""
    probe = (
        f"{code}\nimport sys\nprint(' '.join(sorted({{m.partition('.')[0] for m in sys.modules}})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return set(out.stdout.split())


def test_the_simulator_loads_neither_gymnasium_nor_pandas_nor_torch():
    assert not set(HEAVY) & _loaded_after("import hpcgym.sim")
    assert not set(HEAVY) & _loaded_after("from hpcgym.sim import Simulator, JobSpec, Platform")


def test_importing_hpcgym_loads_no_workload_set_and_no_pandas():
    loaded = _loaded_after("import hpcgym")
    assert not set(HEAVY) & loaded
    assert "hpcgym" in loaded


@pytest.mark.parametrize(
    "code",
    [
        "import hpcgym\nimport gymnasium as gym",
        "import gymnasium as gym\nimport hpcgym",
        "from gymnasium import spaces\nimport hpcgym\nimport gymnasium as gym",
        "import hpcgym.sim\nimport gymnasium as gym",
        "from hpcgym.envs import ClusterEnv\nimport gymnasium as gym",
    ],
)
def test_the_env_ids_are_registered_whatever_the_import_order(code):
    probe = (
        f"{code}\n"
        "env = gym.make('hpcgym/Rigid-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert 'action_mask' in info\n"
        "assert sum(i.startswith('hpcgym/') for i in gym.registry) >= 5\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, cwd=ROOT)


ENGINE_AGENTS = ("cards", "cmaes_pool", "distill", "lookahead", "order", "score", "search_command")
"""Every module of ``hpcgym.agents.engine``."""


def test_engine_agents_load_and_play_without_torch():
    imports = "\n".join(f"import hpcgym.agents.engine.{m}" for m in ENGINE_AGENTS)
    play = (
        "from hpcgym.agents.engine.cards import load_engine_card\n"
        "card = load_engine_card('agents/score-synlublin-easy/s0')\n"
        "card.scheduler_for(card.env_id, card.env_kwargs, 'here')\n"
    )
    sb3 = {"torch", "stable_baselines3", "sb3_contrib"}
    assert not sb3 & _loaded_after(imports + "\n" + play)
    assert sorted(p.stem for p in (ROOT / "hpcgym/agents/engine").glob("[!_]*.py")) == sorted(
        ENGINE_AGENTS
    )


def test_the_lazy_env_names_are_the_real_ones():
    import hpcgym.envs
    from hpcgym.envs.cluster_env import ClusterEnv

    assert hpcgym.envs.ClusterEnv is ClusterEnv
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = hpcgym.envs.Nope


def _lint(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert linter, "import-linter is part of the dev install (pip install -e '.[dev]')"
    return subprocess.run(
        [linter, "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )


def _copy_package(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "hpcgym", tmp_path / "hpcgym", ignore=shutil.ignore_patterns("*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")


def test_the_layer_contracts_hold_and_catch_an_upward_import(tmp_path):
    _copy_package(tmp_path)
    kept = _lint(tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    # A simulator module reaching up into the bench layer, inside a function (it still counts).
    (tmp_path / "hpcgym" / "sim" / "upward.py").write_text(
        "def f():\n    from hpcgym.bench import report\n\n    return report\n"
    )
    broken = _lint(tmp_path)
    assert broken.returncode != 0
    assert "hpcgym.sim.upward -> hpcgym.bench.report" in broken.stdout


def test_the_cycle_contract_catches_a_new_cycle(tmp_path):
    _copy_package(tmp_path)
    # hpcgym.workloads.registry is imported by the sets module; importing it back closes a cycle.
    registry = tmp_path / "hpcgym" / "workloads" / "registry.py"
    registry.write_text(
        registry.read_text() + "\n\ndef _cycle():\n    from hpcgym.workloads import sets\n\n"
        "    return sets\n"
    )
    broken = _lint(tmp_path)
    assert broken.returncode != 0
    assert ".registry -> .sets" in broken.stdout or ".sets -> .registry" in broken.stdout


def test_the_engine_contract_catches_a_torch_import(tmp_path):
    _copy_package(tmp_path)
    (tmp_path / "hpcgym" / "agents" / "engine" / "netted.py").write_text(
        "def f():\n    import torch\n\n    return torch\n"
    )
    broken = _lint(tmp_path)
    assert broken.returncode != 0
    assert "hpcgym.agents.engine is not allowed to import torch" in broken.stdout
