"""Older module paths name the same objects: the agents package's (before ``rl`` and ``engine``)
and the modules renamed so that a file name has one meaning (docs/glossary.md)."""

from __future__ import annotations

import importlib

import pytest

MOVED = {
    "score": ["hpcgym.agents.engine.score"],
    "order": ["hpcgym.agents.engine.order"],
    "lookahead": ["hpcgym.agents.engine.lookahead"],
    "distill": ["hpcgym.agents.engine.distill", "hpcgym.agents.rl.distill_fit"],
    "policies": ["hpcgym.agents.rl.networks"],
    **{
        name: [f"hpcgym.agents.rl.{name}"]
        for name in (
            "checkpoint",
            "decode",
            "env_policy",
            "guard",
            "imitation",
            "lean_ppo",
            "reference",
            "saved",
            "train",
            "validation",
            "vec",
            "weights_check",
        )
    },
}
"""Each older module path and the modules it now stands for."""


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_older_path_names_the_moved_modules_objects(old: str) -> None:
    alias = importlib.import_module(f"hpcgym.agents.{old}")
    for name in MOVED[old]:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
        assert public
        for attr in public:
            assert getattr(alias, attr) is getattr(module, attr), (old, attr)


RENAMED = {
    "hpcgym.agents.rl.policies": "hpcgym.agents.rl.networks",
    "hpcgym.bench.policies": "hpcgym.bench.policy_names",
    "hpcgym.baselines.koala.policies": "hpcgym.baselines.koala.malleability",
    "hpcgym.baselines.profile": "hpcgym.baselines.availability",
    "hpcgym.baselines.evolving.profile": "hpcgym.baselines.evolving.evolution_profile",
}
"""Each renamed module's older path and its new one."""


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_a_renamed_modules_older_path_names_its_objects(old: str) -> None:
    alias = importlib.import_module(old)
    module = importlib.import_module(RENAMED[old])
    assert alias is not module
    assert module.__all__ and list(alias.__all__) == list(module.__all__)
    for attr in module.__all__:
        assert getattr(alias, attr) is getattr(module, attr), (old, attr)


def test_a_network_pickled_under_its_older_module_path_loads() -> None:
    pytest.importorskip("torch")
    import pickle

    from hpcgym.agents.rl.networks import JobScoringPolicy

    # A pickle stores a class by module and name; older saved models name the older module.
    old = pickle.dumps(JobScoringPolicy).replace(
        b"hpcgym.agents.rl.networks", b"hpcgym.agents.rl.policies"
    )
    assert b"hpcgym.agents.rl.policies" in old
    assert pickle.loads(old) is JobScoringPolicy


def test_saved_agents_files_are_named_where_they_were() -> None:
    from hpcgym.agents import files
    from hpcgym.agents.rl import saved

    assert saved.model_paths is files.model_paths
    assert saved.is_saved_agent is files.is_saved_agent
    assert saved.pickled_path is files.pickled_path
