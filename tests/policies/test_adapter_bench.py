"""``<baseline>@env`` in the benchmark: the env path gives the engine path's episode exactly."""

from __future__ import annotations

import pandas as pd
import pytest

import hpcgym  # noqa: F401
from hpcgym.bench.episode import run_episode
from hpcgym.bench.evaluate import evaluate
from hpcgym.bench.policy_names import make_env_policy, policy_kind
from hpcgym.errors import SpecError
from hpcgym.policies.adapted import NotExpressible


@pytest.mark.parametrize(
    ("name", "env_id", "kwargs"),
    [
        ("easy", "hpcgym/Rigid-v0", {"n_jobs": 60}),
        ("mebf", "hpcgym/Rigid-v0", {"n_jobs": 60}),
        ("evolving-2X", "hpcgym/Evolving-v0", {"queue_slots": 32, "running_slots": 32}),
        ("koala-static", "hpcgym/MultiCluster-v0", {}),
        ("koala-pwa-egs", "hpcgym/MultiCluster-v0", {"queue_slots": 128, "running_slots": 128}),
        (
            "sd-policy",
            "hpcgym/Malleable-v0",
            {"n_jobs": 300, "queue_slots": 128, "running_slots": 128},
        ),
        (
            "mebf-spare",
            "hpcgym/Malleable-v0",
            {"n_jobs": 300, "queue_slots": 300, "running_slots": 128},
        ),
    ],
)
def test_a_baseline_on_the_env_equals_it_on_the_engine(
    name: str, env_id: str, kwargs: dict[str, object]
) -> None:
    engine = run_episode(name, env_id, 5, kwargs)
    env = run_episode(f"{name}@env", env_id, 5, kwargs)
    assert (engine.path, env.path) == ("engine", "env")
    pd.testing.assert_frame_equal(env.jobs, engine.jobs)
    assert env.summary == engine.summary
    assert env.kill_on_walltime == engine.kill_on_walltime
    assert env.invalid_actions == 0 and not env.truncated


def test_names_and_errors() -> None:
    assert policy_kind("easy@env") == "adapted"
    with pytest.raises(SpecError, match="easy@env"):
        make_env_policy("easy")
    with pytest.raises(SpecError, match="unknown policy"):
        policy_kind("nobody@env")
    with pytest.raises(NotExpressible):  # DFRS runs in a world of its own (its setting)
        run_episode("dfrs@env", "hpcgym/Rigid-v0", 0, {"n_jobs": 20})


def test_evaluate_takes_adapted_baselines() -> None:
    table = evaluate(["easy", "easy@env"], "hpcgym/Rigid-v0", [3], {"n_jobs": 24})
    assert list(table["path"]) == ["engine", "env"]
    assert table["mean_bsld"].iloc[0] == table["mean_bsld"].iloc[1]
