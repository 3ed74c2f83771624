"""`memdeck`: the command line. Parses the global options, hands each command to its module,
and turns memdeck's errors into a message on stderr and an exit code:

0 success · 1 error · 2 bad usage or input · 3 store cannot be opened · 4 not found ·
5 conflict (the memory changed since the version the command was given) · 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Callable, Sequence

import peewee

from store.errors import InvalidInput, MemdeckError, StoreError

# Each module adds its commands with `register(subparsers)`; the order is the order in --help.
COMMAND_MODULES = (
    "tui.cli.memories",
    "tui.cli.maintenance",
    "tui.cli.ui",
    "tui.cli.ingest",
    "tui.cli.injection",
    "tui.cli.mcp",
    "tui.cli.interop",
    "tui.cli.doctor",
)


class Context:
    """What a command handler gets: the parsed arguments and the store, opened on first use."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self._store = None

    @property
    def store(self):
        if self._store is None:
            from store.core import Store

            self._store = Store.open(self.args.db, project=self.args.project)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


Handler = Callable[[Context], int | None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memdeck",
        description="Long-term memory for AI coding agents. With no command, opens the workbench.",
    )
    parser.add_argument("--db", type=Path, default=None,
                        help="the store file (default: $MEMDECK_DB, else ~/.local/share/memdeck/memdeck.db)")
    parser.add_argument("--project", default=None,
                        help="the project (default: $MEMDECK_PROJECT, else the current git root's name)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.db is None and os.environ.get("MEMDECK_DB"):
        args.db = Path(os.environ["MEMDECK_DB"])
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        handler = _default_handler(parser)
    context = Context(args)
    try:
        if args.project is not None:
            from store.limits import check_project_name

            check_project_name(args.project, "--project")
        return handler(context) or 0
    except MemdeckError as exc:
        print(f"memdeck: {exc}", file=sys.stderr)
        return exc.exit_code
    except (sqlite3.DatabaseError, peewee.DatabaseError) as exc:
        # Damage inside a store is found by the query that reads the damaged page, not at open.
        print(f"memdeck: the store could not be read or written ({exc}); it may be damaged: "
              "restore a backup or choose another store with --db", file=sys.stderr)
        return StoreError.exit_code
    except UnicodeEncodeError as exc:
        # Bytes that are not UTF-8 on the command line reach Python as half characters, which
        # SQLite refuses; the transaction they were in is rolled back.
        print(f"memdeck: {exc.object[exc.start:exc.end]!r} is not valid text (undecodable bytes "
              "in an argument?); nothing was changed", file=sys.stderr)
        return InvalidInput.exit_code
    except KeyboardInterrupt:
        print("memdeck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`memdeck list | head`): not an error worth a traceback.
        sys.stderr.close()
        return 0
    finally:
        context.close()


def _default_handler(parser: argparse.ArgumentParser) -> Handler:
    """`memdeck` alone opens the workbench when the app is installed, else prints help."""
    try:
        ui = importlib.import_module("tui.cli.ui")
    except ModuleNotFoundError:
        return lambda context: parser.print_help() or 0
    return ui.open_workbench


if __name__ == "__main__":
    sys.exit(main())
