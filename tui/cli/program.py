"""`memdeck`: the command line. Parses the global options, hands each command to its module,
and turns memdeck's errors into a message on stderr and an exit code:

0 success · 1 error (also: stdout could not be written) · 2 bad usage or input · 3 store cannot
be opened, read or written · 4 not found · 5 conflict (the memory changed since the version the
command was given) · 6 refused (a team store's role may not make this change; docs/team.md) ·
130 interrupted. The hooks never exit 2.

Every `memdeck` process starts in `tui/cli/main.py`, which comes here unless the hook server
answered a prompt hook.
"""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys
from pathlib import Path
from typing import Callable, Sequence

# The store before Peewee: it imports Peewee without psycopg (store/engine/peewee_import.py).
from store.api import describe, InvalidInput, MemdeckError, StoreError, postgres_location as location
from store.api import environment
from tui.cli.output import ClosedPipe, flush, info, parser_message

import peewee

# Each module adds its commands with `register(subparsers)`; the order is the order in --help.
COMMAND_MODULES = (
    "tui.cli.memories",
    "tui.cli.maintenance",
    "tui.cli.ui",
    "tui.cli.ingest",
    "tui.cli.curate",
    "tui.cli.sessions",
    "tui.cli.injection",
    "tui.cli.eval_capture",
    "tui.cli.replay",
    "tui.cli.anchors",
    "tui.cli.mcp",
    "tui.cli.connect",
    "tui.cli.interop",
    "tui.cli.doctor",
    "tui.cli.copy",
    "tui.cli.team",
    "tui.cli.share",
)

# The module that registers each command: a command line naming one builds only that module's
# part of the parser (importing every command module costs a hook or a prime ~35-50 ms at every
# call). tests/tui/cli/test_cli_parser.py checks this table against what the modules register.
COMMAND_OWNERS = {
    **dict.fromkeys(("add", "list", "search", "show", "edit", "delete", "restore", "trash", "purge"),
                    "tui.cli.memories"),
    **dict.fromkeys(("init", "decay", "cleanup", "reindex", "stats", "projects", "config"), "tui.cli.maintenance"),
    "demo": "tui.cli.ui",
    **dict.fromkeys(("ingest", "inbox", "accept", "reject", "hook", "skill"), "tui.cli.ingest"),
    **dict.fromkeys(("consolidate", "proposals", "resolve", "eval-pairs"), "tui.cli.curate"),
    **dict.fromkeys(("sessions", "log"), "tui.cli.sessions"),
    **dict.fromkeys(("prime", "eval"), "tui.cli.injection"),
    "eval-capture": "tui.cli.eval_capture",
    **dict.fromkeys(("replay", "eval-replay"), "tui.cli.replay"),
    "verify": "tui.cli.anchors",
    "mcp": "tui.cli.mcp",
    "connect": "tui.cli.connect",
    **dict.fromkeys(("import", "export"), "tui.cli.interop"),
    "doctor": "tui.cli.doctor",
    "copy": "tui.cli.copy",
    **dict.fromkeys(("team", "blame"), "tui.cli.team"),
    "share": "tui.cli.share",
}


class Context:
    """What a command handler gets: the parsed arguments and the store, opened on first use."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self._store = None
        self._layers = None

    @property
    def store(self):
        if self._store is None:
            from store.api import Store, check_store_folder

            if self.args.db is not None:
                check_store_folder(self.args.db)
            self._store = Store.open(self.args.db, project=self.args.project)
        return self._store

    def check_named_project(self) -> None:
        """A read never makes a project: one named with --project that the store does not hold
        is "no such project", with the nearest names it does hold."""
        import difflib

        from store.api import NotFound

        if self.args.project is None:
            return
        store = self.store
        names = [project.name for project in store.projects()]
        if store.project in names:
            return
        nearest = difflib.get_close_matches(store.project, names, n=3, cutoff=0.5)
        listed = nearest or names[:5]
        hint = (f"; {'nearest' if nearest else 'projects'}: {', '.join(listed)}" if listed
                else "; the store has no projects yet")
        raise NotFound(f"no such project {store.project!r}{hint} (memdeck projects lists them)")

    @property
    def layers(self):
        """The own store and the layers read beside it (store.layers.layers), opened on first
        use; a configured layer that cannot be read is said once on stderr, and left out."""
        if self._layers is None:
            from store.api import Layers

            self._layers = Layers.open(self.store)
            for name, problem in self._layers.problems:
                info(f"memdeck: the {name} layer is not read: {problem}")
        return self._layers

    def store_path(self) -> Path:
        from store.api import default_db_path

        return self.args.db or default_db_path()

    def close(self) -> None:
        if self._layers is not None:
            for name, problem in self._layers.dropped:
                info(f"memdeck: the {name} layer is not read: {problem}")
            for name, problem in self._layers.unrecorded:
                info(f"memdeck: use not recorded in the {name} layer: {problem}")
            self._layers.close()
        if self._store is not None:
            self._store.close()


Handler = Callable[[Context], int | None]


class Parser(argparse.ArgumentParser):
    """argparse, printing its usage and errors through the one output function (a bad value it
    quotes back may hold an escape sequence)."""

    def _print_message(self, message: str, file=None) -> None:
        parser_message(message, file)


class VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked (importlib.metadata costs
    every other command, `prime` among them, a few milliseconds)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("memdeck")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        from tui.cli.output import out

        out(f"memdeck {found}")
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only` (a module of `COMMAND_MODULES`), the global options and that
    module's commands alone."""
    parser = Parser(
        prog="memdeck",
        description="Long-term memory for AI coding agents. With no command, opens the workbench.",
    )
    parser.add_argument("--db", type=location, default=None,
                        help="the store file, or a PostgreSQL URL such as postgresql://user@host:5432/db "
                             "(default: $MEMDECK_DB, else ~/.local/share/memdeck/memdeck.db)")
    parser.add_argument("--project", default=None,
                        help="the project (default: $MEMDECK_PROJECT, else the current git root's name)")
    parser.add_argument("--version", action=VersionAction, help="print memdeck's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if only is None else (only,):
        importlib.import_module(name).register(sub)
    return parser


def _owner(argv: Sequence[str]) -> str | None:
    """The module of the command `argv` names, when that is all the parser needs: not for help or
    the version before the command, nor for a word that is no command (its error lists them all)."""
    words = iter(argv)
    for word in words:
        if word in ("--db", "--project"):
            next(words, None)
        elif word.startswith(("--db=", "--project=")):
            continue
        elif word.startswith("-"):
            return None  # -h, --help, --version, or a mistake: the whole parser answers
        else:
            return COMMAND_OWNERS.get(word)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_owner(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        # Claude Code reads a hook's exit 2 as "block": a hook's bad usage is exit 1.
        if exc.code == 2 and _runs_a_hook(argv):
            return _hook_failed(argv)
        raise
    if args.db is None and (env := environment.store_location()):
        args.db = location(env)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        handler = _default_handler(parser)
    context = Context(args)
    code = _run(handler, context, args)
    # Claude Code reads a hook's exit 2 as "block": whatever went wrong before the hook's own
    # handler (a --project refused, say) is exit 1 for a hook.
    if code and _runs_a_hook(argv):
        return _hook_failed(argv) if code == 2 or _other_agent(argv) else code
    return code


def _other_agent(argv: Sequence[str]) -> bool:
    """The hook runs for an agent other than Claude Code (`--agent codex`, ...)."""
    words = list(argv)
    for i, word in enumerate(words):
        if word == "--agent" and i + 1 < len(words):
            return words[i + 1] != "claude-code"
        if word.startswith("--agent="):
            return word.split("=", 1)[1] != "claude-code"
    return False


def _hook_failed(argv: Sequence[str]) -> int:
    """A hook's exit when it fails before its handler: 1 for Claude Code (which reads 2 as
    "block"), 0 for the other agents (each reads a non-zero exit its own way)."""
    return 0 if _other_agent(argv) else 1


def _run(handler: Handler, context: Context, args: argparse.Namespace) -> int:
    try:
        if args.project is not None:
            from store.api import check_project_name

            check_project_name(args.project, "--project")
        code = handler(context) or 0
        flush()
        return code
    except ClosedPipe:
        return 0  # `memdeck list | head`: the reader had enough
    except MemdeckError as exc:
        exc = _in_another_layer(exc, context, args) or exc
        info(f"memdeck: {exc}")
        return exc.exit_code
    except (sqlite3.DatabaseError, peewee.DatabaseError) as exc:
        refused = _refused(exc, context)
        if refused is not None:
            info(f"memdeck: {refused}")
            return refused.exit_code
        # Found by the query that meets the trouble (a damaged page, a full disk), not at open.
        info(f"memdeck: {describe(exc, context.store_path())}")
        return StoreError.exit_code
    except UnicodeEncodeError as exc:
        # Bytes that are not UTF-8 on the command line reach Python as half characters, which
        # SQLite refuses; the transaction they were in is rolled back.
        info(f"memdeck: {exc.object[exc.start:exc.end]!r} is not valid text (undecodable bytes "
             "in an argument?); nothing was changed")
        return InvalidInput.exit_code
    except KeyboardInterrupt:
        info("memdeck: interrupted")
        return 130
    finally:
        context.close()


def _in_another_layer(exc: MemdeckError, context: Context, args: argparse.Namespace) -> MemdeckError | None:
    """A memory a command changes is not in the own store because another layer holds it (the
    team store, the repository's team file): say so in one line, rather than "no memory"."""
    from store.api import NotFound

    if not isinstance(exc, NotFound) or context._store is None:
        return None
    ids = [getattr(args, "id", None), *(getattr(args, "ids", None) or ())]
    try:
        layers = context.layers
        for memory_id in filter(None, ids):
            if context._store.found([memory_id]):
                continue
            try:
                layer = layers.locate(memory_id)[0]
            except NotFound:
                continue
            if layer == "file":
                return InvalidInput(f"memory {memory_id} is in the file layer, read-only here: the team file "
                                    "changes through a pull request; nothing was changed")
            if layer != "own":
                return InvalidInput(f"memory {memory_id} is in the {layer} layer, not your own store: change "
                                    f"it there (--db with the {layer} store's URL), as your role allows; "
                                    "nothing was changed")
    except (MemdeckError, sqlite3.DatabaseError, peewee.DatabaseError):
        return None
    return None


def _refused(exc: BaseException, context: Context):
    """A team store's refusal (PostgreSQL said this user's role may not), as one line."""
    if not isinstance(exc, peewee.DatabaseError):
        return None
    from store.api import refusal

    return refusal(exc, context._store.db if context._store is not None else None)


def _runs_a_hook(argv: Sequence[str]) -> bool:
    """`argv` runs one of the hooks Claude Code calls (`hook session-start`, `hook stop`)."""
    words = iter(argv)
    commands = []
    for word in words:
        if word in ("--db", "--project"):
            next(words, None)
        elif not word.startswith("-"):
            commands.append(word)
            if len(commands) == 2:
                break
    return commands[:1] == ["hook"] and (len(commands) == 1 or commands[1] in ("session-start", "user-prompt-submit", "stop"))


def _default_handler(parser: argparse.ArgumentParser) -> Handler:
    """`memdeck` alone opens the workbench when the app is installed, else prints help."""
    try:
        ui = importlib.import_module("tui.cli.ui")
    except ModuleNotFoundError:
        return lambda context: parser.print_help() or 0
    return ui.open_workbench
