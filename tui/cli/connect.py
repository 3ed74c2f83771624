"""`memdeck connect AGENT`: memdeck's MCP server and hooks written into the config files of
Claude Code, Codex CLI, Gemini CLI or Cursor (tui/cli/agents/, one module each), running this
memdeck by its absolute path; `memdeck connect --list`: what is connected where, and whether each
file still runs this memdeck. Other tools' files are edited in place: every other byte stays, a
file that cannot be parsed is refused in one line with nothing written, each write is atomic,
and connecting twice changes nothing the second time."""

from __future__ import annotations

import argparse

from store.api import InvalidInput
from tui.cli.agents import AGENTS, agent_module
from tui.cli.claude_setup import SCOPES, memdeck_argv
from tui.cli.output import info, print_json, table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "connect", help="connect an agent (claude-code, codex, gemini, cursor): its MCP server and hooks",
        description="Write memdeck's MCP server and its hooks (session start, prompt, stop) into the agent's "
                    "config files, running this memdeck by its absolute path (docs/agents.md). The rest of "
                    "each file stays byte for byte; a file that cannot be parsed is refused, nothing written. "
                    "`memdeck connect --list` says what is connected where.")
    p.add_argument("agent", nargs="?", choices=tuple(AGENTS), metavar="AGENT",
                   help=f"one of: {', '.join(AGENTS)}")
    p.add_argument("--scope", choices=SCOPES, default="project",
                   help="project: the files at the project root (default); user: the files in your home")
    p.add_argument("--hat", default=None, help="the hat the hooks prime and ingest for")
    p.add_argument("--dry-run", action="store_true", help="print each file as it would be, write nothing")
    p.add_argument("--list", action="store_true", help="what is connected where, in both scopes")
    p.add_argument("--json", action="store_true", help="with --list: as JSON")
    p.set_defaults(handler=cmd_connect)


def cmd_connect(ctx) -> int:
    args = ctx.args
    if args.list:
        if args.agent is not None:
            raise InvalidInput("give an AGENT to connect, or --list, not both")
        return _list(args)
    if args.agent is None:
        raise InvalidInput(f"which agent? memdeck connect AGENT ({', '.join(AGENTS)}), or memdeck connect --list")
    agent = agent_module(args.agent)
    argv = memdeck_argv(args)
    hat = (args.hat or "").strip() or None
    paths = agent.connect(argv, args.scope, hat, args.dry_run)
    if not args.dry_run:
        for path in paths:
            info(f"{agent.TITLE}: memdeck is in {path} (scope {args.scope})")
        info(f"{agent.TITLE} runs {argv[0]} from its next session; memdeck connect --list shows it")
    return 0


def _list(args) -> int:
    this = memdeck_argv(argparse.Namespace(db=None, project=None))[0]
    rows = []
    for name in AGENTS:
        agent = agent_module(name)
        for scope in SCOPES:
            for status in agent.statuses(scope):
                rows.append({"agent": name, "scope": scope, "what": status.what, "file": str(status.path),
                             "connected": status.executable is not None, "executable": status.executable,
                             "state": status.state(this)})
    if args.json:
        print_json(rows)
        return 0
    table([[r["agent"], r["scope"], r["what"], r["state"], r["file"]] for r in rows],
          ("agent", "scope", "what", "state", "file"))
    return 0
