from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "train-by-hand.md"
BUDGET = "TIMESTEPS = 5_000"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_train_by_hand_page_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = python_blocks(PAGE.read_text())
    assert len(blocks) >= 5 and BUDGET in blocks[0]
    # The page's budget, shrunk: one rollout of 512 steps instead of ten.
    blocks[0] = blocks[0].replace(BUDGET, "TIMESTEPS = 64")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "train_by_hand"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name} block {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "512" in out.splitlines()[0] and "mean bounded slowdown" in out
    assert (tmp_path / "runs" / "by-hand" / "agent.safetensors").is_file()
    assert int(namespace["action"]) >= 0  # type: ignore[call-overload]
