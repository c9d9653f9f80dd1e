"""The agents package's older module paths (before ``rl`` and ``engine``) name the same objects."""

from __future__ import annotations

import importlib

import pytest

MOVED = {
    "score": ["hpcgym.agents.engine.score"],
    "order": ["hpcgym.agents.engine.order"],
    "lookahead": ["hpcgym.agents.engine.lookahead"],
    "distill": ["hpcgym.agents.engine.distill", "hpcgym.agents.rl.distill_fit"],
    **{
        name: [f"hpcgym.agents.rl.{name}"]
        for name in (
            "checkpoint",
            "decode",
            "env_policy",
            "guard",
            "imitation",
            "lean_ppo",
            "policies",
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


def test_saved_agents_files_are_named_where_they_were() -> None:
    from hpcgym.agents import files
    from hpcgym.agents.rl import saved

    assert saved.model_paths is files.model_paths
    assert saved.is_saved_agent is files.is_saved_agent
    assert saved.pickled_path is files.pickled_path
