"""The code a page shows runs as shown, and the masks it describes are what it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))


def test_the_env_pages_first_example_runs_and_prints_its_metrics(capsys):
    (first, *_) = _blocks("docs/env.md")
    exec(compile(first, "docs/env.md", "exec"), {})
    mean_bsld, objectives = capsys.readouterr().out.split(" ", 1)
    assert float(mean_bsld) >= 1.0  # a mean bounded slowdown
    assert ast.literal_eval(objectives) == {"bsld": float(mean_bsld)}


def test_the_mask_the_env_page_names_is_the_info_mask_on_a_made_env():
    import gymnasium as gym

    import hpcgym  # noqa: F401

    env = gym.make("hpcgym/Malleable-v1")
    _obs, info = env.reset(seed=3)
    for _ in range(40):
        masks = env.unwrapped.action_masks()  # as docs/env.md says: on env.unwrapped
        assert masks.dtype == info["action_mask"].dtype == np.int8
        assert np.array_equal(masks, info["action_mask"])
        legal = np.flatnonzero(masks)
        _obs, _, terminated, truncated, info = env.step(int(legal[-1]))
        if terminated or truncated:
            break
    page = (ROOT / "docs/env.md").read_text(encoding="utf-8")
    assert "env.unwrapped.action_masks()" in page
    assert not re.search(r"\benv\.action_masks\(\)", page)


def test_no_page_calls_action_masks_on_a_wrapped_env():
    pages = [ROOT / "README.md", *ROOT.glob("docs/*.md")]
    calls = [
        f"{p.name}: {line.strip()}"
        for p in pages
        for line in p.read_text(encoding="utf-8").splitlines()
        if re.search(r"\benv\.action_masks\(\)", line)
    ]
    assert not calls, calls
