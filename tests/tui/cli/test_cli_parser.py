"""A command line that names a command builds only its module's part of the parser
(`tui.cli.program.COMMAND_OWNERS`): the same answer as the whole parser, for less work at every hook
and prime."""

from __future__ import annotations

import importlib

import pytest

from tui.cli.program import COMMAND_MODULES, COMMAND_OWNERS, Parser, _owner, build_parser


def test_the_table_names_every_command_by_the_module_that_registers_it():
    registered = {}
    for name in COMMAND_MODULES:
        sub = Parser(prog="memdeck").add_subparsers(dest="command")
        importlib.import_module(name).register(sub)
        registered.update(dict.fromkeys(sub.choices, name))
    assert registered == COMMAND_OWNERS


@pytest.mark.parametrize("argv", [
    ["prime", "--task", "retry the webhook", "--json"],
    ["--db", "/tmp/x.db", "--project", "shop", "hook", "user-prompt-submit"],
    ["--project=shop", "list", "--type", "pitfall"],
    ["hook", "stop", "--agent", "codex"],
    ["eval-replay", "a.yaml", "--folds", "project"],
    ["team", "init", "postgresql://u@h/db", "--review"],
])
def test_a_named_command_parses_as_the_whole_parser_would(argv):
    assert _owner(argv) is not None
    whole = vars(build_parser().parse_args(argv))
    alone = vars(build_parser(_owner(argv)).parse_args(argv))
    assert alone == whole


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h", "prime"], ["--version"], ["primee"], ["--db", "x"]])
def test_help_the_version_and_a_mistake_get_the_whole_parser(argv):
    assert _owner(argv) is None
