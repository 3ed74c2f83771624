"""The docs name every command, option and key: the references in docs/ are generated from the
argparse definitions and the bindings, and these tests fail when the committed files are stale."""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli import reference
from tui.cli.program import build_parser

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_command_reference_is_current():
    committed = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert committed == reference.current(), (
        "docs/commands.md is stale: run `python -m tui.cli.reference > docs/commands.md`")


def _commands(parser: argparse.ArgumentParser, prog: str = "memdeck"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{prog} {name}", child
                yield from _commands(child, f"{prog} {name}")


def test_every_command_and_option_is_in_the_reference():
    text = (DOCS / "commands.md").read_text(encoding="utf-8")
    for prog, parser in _commands(build_parser()):
        assert f"`{prog}`" in text, f"{prog} is missing from docs/commands.md"
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in text, f"{prog} {option} is missing from docs/commands.md"


def test_key_reference_is_current():
    from tui import keys_reference

    committed = (DOCS / "keys.md").read_text(encoding="utf-8")
    assert committed == keys_reference.render(), (
        "docs/keys.md is stale: run `python -m tui.keys_reference > docs/keys.md`")


def test_the_key_reference_shows_keys_as_typed_not_by_textuals_names():
    page = (Path(__file__).parent.parent / "docs" / "keys.md").read_text()
    assert "`question_mark`" not in page and "`slash`" not in page
    assert "| `?` |" in page and "| `/` |" in page
