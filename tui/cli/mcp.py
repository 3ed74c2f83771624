"""`memdeck mcp`: the MCP server over stdio, and `memdeck mcp install`, its Claude Code entry.

The MCP SDK is imported only when the server starts (about a second): every other command
stays as quick as it was.
"""

from __future__ import annotations

import argparse
import os
import signal

from store.api import MemdeckError
from tui.cli.output import flush_streams, silence_stdout
from tui.cli.claude_setup import add_scope_options, cmd_mcp_install
from store.api import environment


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp", help="serve the store to agents over MCP (stdio): search, context, remember, get, feedback",
        description="Run memdeck's MCP server on stdin/stdout until stdin closes. Each connection "
                    "is a memdeck session; each tool call an entry in its log. The project is the "
                    "tool's `project` argument, else --project or $MEMDECK_PROJECT, else the "
                    "client's root, else the git root of the working directory. Logs go to stderr. "
                    "`memdeck mcp install` writes its entry into Claude Code's config.")
    p.set_defaults(handler=cmd_mcp)
    actions = p.add_subparsers(dest="mcp_action", metavar="[install]")
    i = actions.add_parser(
        "install", help="write memdeck's entry into Claude Code's MCP config",
        description="Add memdeck's MCP server to Claude Code's config, running this memdeck by its "
                    "absolute path; other servers and settings in the file stay as they are. "
                    "Prints the `claude mcp add` command that does the same.")
    add_scope_options(i, ".mcp.json", "~/.claude.json")
    i.add_argument("--name", default="memdeck", help="the server's name in the config (default memdeck)")
    i.set_defaults(handler=cmd_mcp_install)


def cmd_mcp(ctx) -> int:
    from tui.mcp_server.early import Loader, Wire

    # The SDK (most of a second) is imported on a thread while the first line is read: an
    # `initialize` is answered at once (tui/mcp_server/early.py).
    loader = Loader()
    loader.start()
    # A client ends a server by closing stdin, or by SIGTERM: both are a normal end.
    signal.signal(signal.SIGTERM, _stop)
    stopped = False
    session = None
    try:
        wire = Wire()
        wire.answer_first(loader.loading)
        loader.join()
        if isinstance(loader.error, ModuleNotFoundError) and (loader.error.name or "").split(".")[0] == "mcp":
            raise MemdeckError("the MCP server needs the MCP SDK: pip install 'memdeck[mcp]'")
        if loader.error is not None:
            raise loader.error
        session, server = _build(ctx.args)
        from tui.mcp_server.server import serve_stdio

        serve_stdio(server, wire)
    except KeyboardInterrupt:
        stopped = True
    except BaseExceptionGroup as group:
        from tui.mcp_server.server import client_gone

        if not client_gone(group):
            raise
        # The client closed our stdout: nobody is left to answer, which is a normal end too.
        stopped = True
        silence_stdout()
    except (BrokenPipeError, ConnectionResetError):
        stopped = True
        silence_stdout()
    finally:
        if session is not None:
            session.close()
    if stopped:
        # The SDK reads stdin in a worker thread that only the end of stdin releases, and Python
        # waits for it at exit: the session is closed, so leave without waiting.
        flush_streams()
        os._exit(0)
    return 0


def _build(args):
    from store.api import Config, Store, detect_project, Vocabulary
    from tui.mcp_server.agent_session import AgentSession
    from tui.mcp_server.server import build_server

    pinned = args.project is not None or environment.project_name() is not None
    session = AgentSession(lambda: Store.open(args.db, project=args.project), pinned=pinned)
    try:
        types = Vocabulary.from_config(Config.load(detect_project()[1])).types
    except MemdeckError:
        # A config that cannot be read is reported by every tool call, when the store opens.
        types = Vocabulary.from_config(Config.defaults()).types
    return session, build_server(session, types=types, pinned=pinned)


def _stop(signum, frame) -> None:
    raise KeyboardInterrupt
