"""The command line's help is written for users: every option explained, no docstring markup."""

from __future__ import annotations

import argparse
import re

import pytest

from hpcgym.cli import build_parser, main

MARKUP = re.compile(r":mod:|:class:|:func:|:meth:|:data:|``")


def _walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("hpcgym",)
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    """Every parser under ``parser`` with its command path and the help its parent lists."""
    found: list[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]] = [
        (path, parser, None)
    ]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                below = _walk(sub, (*path, name))
                found.append((below[0][0], sub, helps.get(name)))
                found += below[1:]
    return found


PARSERS = _walk(build_parser())


def test_every_command_is_walked() -> None:
    commands = {" ".join(p) for p, _, _ in PARSERS}
    assert {"hpcgym simulate", "hpcgym evaluate", "hpcgym bench", "hpcgym train"} <= commands
    assert "hpcgym workloads convert" in commands


@pytest.mark.parametrize(
    ("path", "parser", "listed"), PARSERS, ids=[" ".join(p) for p, _, _ in PARSERS]
)
def test_every_option_has_help_without_markup(
    path: tuple[str, ...], parser: argparse.ArgumentParser, listed: str | None
) -> None:
    text = parser.format_help()
    assert not MARKUP.search(text), f"{' '.join(path)} --help shows docstring markup"
    assert parser.description, f"{' '.join(path)} has no description"
    if len(path) > 1:
        assert listed, f"{' '.join(path)} has no one-line help in its parent's list"
        assert not MARKUP.search(listed)
    # Every command shows an example of its use.
    examples = (parser.description or "") + (parser.epilog or "") + (listed or "")
    assert "hpcgym " in examples or "e.g." in examples, f"{' '.join(path)}: no example"
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS, f"{' '.join(path)} {name}"
        assert not MARKUP.search(action.help), f"{' '.join(path)} {name}: markup"


def test_top_level_help_is_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "register" not in out and "sub-package" not in out
    assert "Simulate HPC job scheduling" in out and "hpcgym bench" in out


@pytest.mark.parametrize("path, parser", [(p, a) for p, a, _ in PARSERS], ids=lambda x: str(x))
def test_no_help_text_prints_a_doubled_percent(path, parser) -> None:
    """``%%`` is argparse's escape in option help only; a description prints it as it is
    (issue 42: ``papers --help`` printed "95%%")."""
    assert "%%" not in parser.format_help(), " ".join(path)
