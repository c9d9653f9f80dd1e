"""The training bar keeps its bar, count and ETA on an 80-column terminal after episodes end."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from hpcgym.agents.rl.progress import ProgressBar


class _Locals:
    """What SB3 hands a callback: the step's infos and dones (one finished episode)."""

    def __init__(self) -> None:
        metrics = {"mean_bsld": 123.456, "utilization": 0.8765}
        self.data = {"infos": [{"metrics": metrics, "episode": {"r": -42.125}}], "dones": [True]}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_bar_line_keeps_its_parts_at_any_width(width):
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    bar = ProgressBar(30_720, "maskable_ppo hpcgym/Malleable-v0", console=console)
    bar.num_timesteps = 0
    bar._on_training_start()
    bar.locals = _Locals().data
    bar.num_timesteps = 2_048
    bar._on_step()  # an episode has ended: its metrics are shown
    bar._progress.refresh()
    bar._on_training_end()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    lines = [line for line in text.replace("\r", "\n").splitlines() if line.strip()]
    bars = [line for line in lines if "2048/30720" in line]
    assert bars, lines
    last = bars[-1]
    assert "eta" in last and "━" in last and len(last) <= width
    episode = [line for line in lines if "last episode" in line]
    assert episode and all(len(line) <= width for line in episode)
    assert "bsld 123.46" in episode[-1] or width < 60
