"""The bench plots stay readable: long policy names slanted, each timeline panel its own time."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from hpcgym.bench.report import LABEL_CHARS, label_lines, slowdown_figure, timeline_figure
from hpcgym.bench.runner import TaskOutcome


def _jobs(policies: list[str]) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(p, float(x)) for p in policies for x in 1.0 + rng.exponential(3.0, 20)]
    return pd.DataFrame(rows, columns=["policy", "bsld"])


def _overlapping(fig) -> bool:
    fig.canvas.draw()  # type: ignore[attr-defined]
    ax = fig.axes[0]
    boxes = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
    return any(a.overlaps(b) for a, b in itertools.pairwise(boxes))


def test_long_names_break_at_their_separators():
    assert label_lines("sd-policy-dynavgsd-ideal") == "sd-policy-\ndynavgsd-\nideal"
    assert label_lines("agents/malleable-100k@best") == "agents/\nmalleable-\n100k@best"
    assert label_lines("easy") == "easy"
    assert label_lines("averyveryverylongname") == "averyveryver\nylongname"
    for name in ("sd-policy-dynavgsd-ideal", "a-b-c-d-e-f-g-h-i-j-k", "x" * 40):
        assert all(len(line) <= LABEL_CHARS for line in label_lines(name).split("\n"))
        assert label_lines(name).replace("\n", "") == name


def test_long_policy_names_do_not_overlap():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    names = ["easy-unicep", "mebf-expand+", "sd-policy-dynavgsd-ideal", "koala-pwa-fpsma"]
    names += ["agents/malleable-100k@best", "evolving-infX-longest", "f1-reserve-bf", "asap-max"]
    fig = slowdown_figure("s", _jobs(names), set())
    FigureCanvasAgg(fig)
    assert max(map(len, names)) > LABEL_CHARS
    assert not _overlapping(fig)


def _outcome(policy: str, hours: float) -> TaskOutcome:
    t = np.linspace(0.0, hours * 3600.0, 50)
    timeline = pd.DataFrame({"time": t, "utilization": np.full(50, 0.5), "queued": np.ones(50)})
    row = {"policy": policy, "seed": 7, "truncated": False}
    return TaskOutcome(row, pd.DataFrame(), timeline, None)


def test_each_timeline_panel_spans_its_own_episode():
    mine = [_outcome("fast", 10.0), _outcome("slow", 500.0), _outcome("mid", 40.0)]
    fig = timeline_figure("s", mine)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    spans = {ax.get_title(): ax.get_xlim()[1] for ax in panels}
    assert spans["fast"] < 12 and spans["mid"] < 45 and spans["slow"] > 400
