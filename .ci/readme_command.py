"""Print the command of a README block marked ``<!-- ci: NAME -->``, so CI runs the README's text.

Usage: ``python .ci/readme_command.py NAME [README]``. The block is the first fenced code
block after the marker; its lines are joined into one command (line continuations kept).
"""

from __future__ import annotations

import sys
from pathlib import Path


def command(name: str, readme: Path) -> str:
    """The command of the block marked ``name``."""
    lines = readme.read_text().splitlines()
    marker = f"<!-- ci: {name} -->"
    try:
        start = lines.index(marker)
    except ValueError:
        sys.exit(f"{readme}: no block marked {marker}")
    fence = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    body = [ln for ln in lines[fence + 1 : end] if ln.strip() and not ln.startswith("#")]
    if not body:
        sys.exit(f"{readme}: the block marked {marker} is empty")
    return "\n".join(body)


if __name__ == "__main__":
    print(command(sys.argv[1], Path(sys.argv[2] if len(sys.argv) > 2 else "README.md")))
