"""Paper checks: scripts reproducing each paper's qualitative result (see docs/papers.md)."""

from __future__ import annotations

from hpcgym.atomic import write_text


def publish(text: str, out: str | None) -> None:
    """Print a paper check's report and, when ``out`` is given, write it there too."""
    print(text)
    if out:
        write_text(out, text)
