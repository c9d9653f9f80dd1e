"""``<baseline>@env`` at the presets' own windows: the engine's schedule, or refused first."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hpcgym.bench.episode import run_episode
from hpcgym.bench.windows import check_adapted, windows_needed
from hpcgym.cli import main
from hpcgym.errors import SpecError
from hpcgym.policies.adapted import NotExpressible

SEEDS = (1000, 1001, 1002)


@pytest.mark.parametrize(
    ("name", "env_id", "kwargs"),
    [
        ("fcfs", "hpcgym/Rigid-v0", {}),
        ("easy", "hpcgym/Rigid-v0", {}),
        ("conservative", "hpcgym/Rigid-v0", {"n_jobs": 128}),
        ("mebf", "hpcgym/Malleable-v0", {"n_jobs": 64}),
        ("sd-policy", "hpcgym/Shared-v0", {"n_jobs": 64}),
        ("koala-pwa-egs", "hpcgym/MultiCluster-v0", {"n_jobs": 100}),
        ("evolving-2X", "hpcgym/Evolving-v0", {}),
    ],
)
def test_default_windows_give_the_engine_schedule_or_are_refused_before_the_run(
    name: str, env_id: str, kwargs: dict[str, object]
) -> None:
    # No window is widened: each preset's own queue_slots and running_slots.
    refused = []
    for seed in SEEDS:
        try:
            check_adapted([(f"{name}@env", "s", env_id, kwargs, [seed])])
        except SpecError as e:
            assert f"episode seed {seed} needs" in str(e) and "_slots >= " in str(e)
            refused.append(seed)
            # The refusal is right: the run itself would stop half-way.
            with pytest.raises(NotExpressible):
                run_episode(f"{name}@env", env_id, seed, kwargs)
            continue
        env = run_episode(f"{name}@env", env_id, seed, kwargs)
        engine = run_episode(name, env_id, seed, kwargs)
        pd.testing.assert_frame_equal(env.jobs, engine.jobs)
        assert env.summary == engine.summary and not env.truncated


def test_both_outcomes_occur_at_the_default_windows() -> None:
    # Guards the test above against checking only one branch.
    assert windows_needed("fcfs", "hpcgym/Rigid-v0", {}, 1000)["queue_slots"] <= 32
    assert windows_needed("easy", "hpcgym/Rigid-v0", {}, 1003)["queue_slots"] > 32


def test_bench_refuses_before_running_and_names_the_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "--scenario", "rigid-lublin-v0", "--policy", "easy@env"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "easy@env on rigid-lublin-v0: episode seed" in err
    assert "needs queue_slots >= " in err and "(hpcgym/Rigid-v0 has 32)" in err
    assert not list(tmp_path.iterdir())  # nothing was started
