"""``hpcgym list [sets|presets|scenarios|baselines|papers]``: what each registry holds, by name.

Every registry word of the glossary (docs/glossary.md) has its list: workload *sets*, env
*presets*, benchmark *scenarios*, *baselines* and *paper* checks. Each row is a name and one
line saying what it is; long lines wrap under their description, so names stay aligned at any
terminal width.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from collections.abc import Callable, Sequence

KINDS = ("sets", "presets", "scenarios", "baselines", "papers")
"""What ``hpcgym list`` lists, in the order it prints them all."""


def name_table(rows: Sequence[tuple[str, str]], width: int | None = None, indent: int = 2) -> str:
    """Rows of ``name  description``, names aligned, descriptions wrapped under themselves.

    Args:
        rows: ``(name, description)`` pairs, printed in the given order.
        width: The line width (default: the terminal's, at least 60 columns).
        indent: Spaces before each name.
    """
    if not rows:
        return ""
    if width is None:
        width = max(60, shutil.get_terminal_size((100, 24)).columns)
    names = max(len(name) for name, _ in rows)
    lead = " " * indent
    hang = " " * (indent + names + 2)
    out = []
    for name, text in rows:
        first = f"{lead}{name:<{names}}  "
        body = max(20, width - len(hang))
        lines = textwrap.wrap(text, body, break_on_hyphens=False) or [""]
        out.append(first + lines[0])
        out.extend(hang + line for line in lines[1:])
    return "\n".join(out)


def _sets() -> list[tuple[str, str]]:
    from hpcgym.workloads import registry

    return [(n, registry.get(n).description) for n in registry.names()]


def _presets() -> list[tuple[str, str]]:
    from hpcgym.envs.registration import PRESET_SUMMARIES, PRESETS

    return [(env_id, PRESET_SUMMARIES[env_id]) for env_id in PRESETS]


def _scenarios() -> list[tuple[str, str]]:
    from hpcgym.bench import scenarios

    rows = []
    for name in scenarios.names():
        sc = scenarios.get(name)
        rows.append((name, f"{sc.env_id}, {len(sc.seeds)} episodes: {sc.description}"))
    return rows


def _baselines() -> list[tuple[str, str]]:
    from hpcgym.baselines import names
    from hpcgym.baselines.registry import summary

    return [(n, summary(n)) for n in names()]


def _papers() -> list[tuple[str, str]]:
    from hpcgym.bench.papers import PAPERS, SUMMARIES

    return [(n, SUMMARIES[n]) for n in PAPERS]


LISTERS: dict[str, Callable[[], list[tuple[str, str]]]] = {
    "sets": _sets,
    "presets": _presets,
    "scenarios": _scenarios,
    "baselines": _baselines,
    "papers": _papers,
}

HEADINGS = {
    "sets": "Workload sets (hpcgym workloads show NAME; a trace file's path works as a name too)",
    "presets": "Env presets (gym.make(ID); hpcgym train --env ID)",
    "scenarios": "Benchmark scenarios (hpcgym bench --scenario NAME)",
    "baselines": "Baselines (hpcgym simulate --scheduler NAME; NAME@env acts through the env)",
    "papers": "Paper checks (hpcgym papers NAME [--quick])",
}


def run(args: argparse.Namespace) -> int:
    """The ``list`` command."""
    kinds = [args.kind] if args.kind else list(KINDS)
    blocks = []
    for kind in kinds:
        table = name_table(LISTERS[kind]())
        blocks.append(f"{HEADINGS[kind]}:\n{table}" if len(kinds) > 1 else table)
    print("\n\n".join(blocks))
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hpcgym list``."""
    p = subparsers.add_parser(
        "list",
        help="list workload sets, env presets, scenarios, baselines or paper checks by name",
        description=(
            "List what a registry holds, one name and one line each (see docs/glossary.md "
            "for what each word means). Without KIND, every list."
        ),
        epilog="examples:\n  hpcgym list\n  hpcgym list presets\n  hpcgym list baselines",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "kind", nargs="?", choices=KINDS, metavar="KIND", help=f"one of {', '.join(KINDS)}"
    )
    p.set_defaults(func=run)
