"""What ``hpcgym train`` prints at its end: a complete evaluate command, the validation score."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from hpcgym.agents.rl.train import TrainConfig, TrainResult, finish_lines
from hpcgym.cli import build_parser


def _result(run_dir: Path) -> TrainResult:
    return TrainResult(run_dir / "agent.safetensors", run_dir, 1024, 4, 1.0, 0.1)


def _evaluate_argv(lines: list[str]) -> list[str]:
    (agent_line,) = [line for line in lines if line.startswith("agent: ")]
    command = agent_line.split("(evaluate: ", 1)[1].removesuffix(")")
    return shlex.split(command)


def test_the_evaluate_hint_keeps_the_trainings_env_kwargs(tmp_path):
    kwargs = {"workload": "my trace.swf", "n_jobs": 64}
    cfg = TrainConfig(env_id="hpcgym/Malleable-v1", env_kwargs=kwargs, out=str(tmp_path))
    argv = _evaluate_argv(finish_lines(cfg, _result(tmp_path)))
    assert argv[:2] == ["hpcgym", "evaluate"]
    args = build_parser().parse_args(argv[1:])
    assert args.env == "hpcgym/Malleable-v1"
    assert json.loads(args.env_kwargs) == kwargs
    assert args.policy == [str(tmp_path)]


def test_without_env_kwargs_the_hint_has_none(tmp_path):
    argv = _evaluate_argv(finish_lines(TrainConfig(out=str(tmp_path)), _result(tmp_path)))
    assert "--env-kwargs" not in argv


def test_a_validated_run_prints_its_last_and_best_score(tmp_path):
    rows = [
        "timesteps,episodes,mean_objective,iqm_objective,best,truncated",
        "512,8,40.5,30.1,1,0",
        "1024,8,38.25,29.0,1,0",
        "1536,8,41.0,31.2,0,0",
    ]
    (tmp_path / "validation.csv").write_text("\n".join(rows) + "\n")
    lines = finish_lines(TrainConfig(out=str(tmp_path)), _result(tmp_path))
    (line,) = [x for x in lines if x.startswith("validation")]
    assert "41 at step 1536" in line
    assert "best 38.25 at step 1024" in line
    assert str(tmp_path / "best") + ".safetensors" in line


def test_a_run_without_validation_prints_no_score(tmp_path):
    lines = finish_lines(TrainConfig(out=str(tmp_path)), _result(tmp_path))
    assert not [x for x in lines if x.startswith("validation")]
    assert lines[-1] == f"run folder: {tmp_path.resolve()}"


def test_the_help_names_the_default_env():
    parser = build_parser()
    train = parser._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]
    assert "default hpcgym/Rigid-v0" in train.format_help()
