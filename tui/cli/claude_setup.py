"""Claude Code set-up: `memdeck mcp install` writes memdeck's MCP server entry and
`memdeck hook install` its session-start and stop hooks, into the settings file of the chosen
scope, naming the memdeck executable by its absolute path (a virtual environment's `bin` is
rarely on the PATH Claude Code runs commands with).

An existing file is merged into, never replaced: every other key stays as it was, an earlier
memdeck entry is updated in place, and a file that is not a JSON object is refused unchanged.
The write is atomic (a temporary file renamed into place).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from store.api import redacted, holds_password, InvalidInput
from tui.cli.output import info, write_data
from store.api import environment

SCOPES = ("project", "user")
# Claude Code's SessionStart sources: a new session, a resumed one, after /clear and /compact.
SESSION_START_MATCHER = "startup|resume|clear|compact"
HOOKS = (("SessionStart", "session-start", SESSION_START_MATCHER),
         ("UserPromptSubmit", "user-prompt-submit", None), ("Stop", "stop", None))


def add_scope_options(parser: argparse.ArgumentParser, project_file: str, user_file: str) -> None:
    parser.add_argument("--scope", choices=SCOPES, default="project",
                        help=f"project: {project_file} at the project root (default); user: {user_file}")
    parser.add_argument("--dry-run", action="store_true", help="print the file as it would be, write nothing")


def memdeck_argv(args: argparse.Namespace) -> list[str]:
    """The command that runs this memdeck, by absolute path, with the store and project the user
    chose on this command line (`--db`, `--project`), so the installed entry uses the same."""
    script = Path(sys.executable).parent / "memdeck"
    # Not resolved: a virtual environment's python is a link to the base interpreter, and
    # following it would leave the environment.
    argv = [os.path.abspath(script)] if script.exists() else [os.path.abspath(sys.executable), "-m", "tui.cli.main"]
    if args.db is not None:
        if holds_password(str(args.db)):
            # The file is meant to be committed, and a hook's arguments are seen by `ps`.
            raise InvalidInput(
                f"{redacted(str(args.db))}: the store's URL holds a password, which memdeck never writes "
                "into Claude Code's settings; nothing was changed. Give the URL without it and keep the "
                "password in PGPASSWORD, ~/.pgpass or a service file (PGSERVICE, ~/.pg_service.conf)")
        # A PostgreSQL URL is passed as given; a file path is made absolute.
        argv += ["--db", args.db if isinstance(args.db, str) else os.path.abspath(os.path.expanduser(args.db))]
    if args.project is not None:
        argv += ["--project", args.project]
    return argv


def project_root() -> Path:
    from store.api import find_git_root

    cwd = Path.cwd().resolve()
    return find_git_root(cwd) or cwd


def claude_dir() -> Path:
    return environment.claude_config_dir() or Path.home() / ".claude"


def mcp_config_path(scope: str) -> Path:
    if scope == "project":
        return project_root() / ".mcp.json"
    # Claude Code keeps user-scope servers in ~/.claude.json (inside CLAUDE_CONFIG_DIR when set).
    if environment.claude_config_dir() is not None:
        return claude_dir() / ".claude.json"
    return Path.home() / ".claude.json"


def settings_path(scope: str) -> Path:
    return project_root() / ".claude" / "settings.json" if scope == "project" else claude_dir() / "settings.json"


class _NotPlainJson(ValueError):
    pass


def _refuse_constant(name: str) -> None:
    raise _NotPlainJson(f"holds {name}, which is not JSON (it would not be written back as it was)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            # Python and Claude Code would each keep one of the two: which is not for memdeck to guess.
            raise _NotPlainJson(f"holds the key {key!r} twice in one object")
        seen[key] = value
    return seen


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in `path`; {} when the file is missing or empty. Only a regular file is
    read (a FIFO would block for ever); NaN, Infinity and a key written twice are refused."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise InvalidInput(f"{path}: not a regular file; nothing was changed")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start}); nothing was changed") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read: {exc.strerror}; nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except _NotPlainJson as exc:
        raise InvalidInput(f"{path}: {exc}; nothing was changed: mend it, then run this again") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                           "nothing was changed: mend it, then run this again") from None
    except RecursionError:
        raise InvalidInput(f"{path}: nested too deeply to read; nothing was changed") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: holds a JSON {type(data).__name__}, not an object; nothing was changed")
    return data


def write_json(path: Path, data: dict[str, Any], *, dry_run: bool) -> None:
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", dry_run=dry_run)


def write_text(path: Path, text: str, *, dry_run: bool) -> None:
    """An agent's config file written whole and atomically (its folder made if missing); with
    `dry_run`, printed instead."""
    from store.api import write_output

    if dry_run:
        write_data(text)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create {path.parent}: {exc.strerror}") from None
    write_output(path, text, replacing=True)


def _section(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = data.get(key, kind())
    if not isinstance(value, kind):
        raise InvalidInput(f"{path}: {key!r} is not a JSON {'object' if kind is dict else 'array'}; "
                           "nothing was changed")
    return value


# -- MCP ---------------------------------------------------------------------------------------

MCP_ENTRY_KEYS = ("type", "command", "args", "env")


def with_mcp_server(config: dict[str, Any], name: str, argv: list[str], path: Path) -> tuple[dict[str, Any], list[str]]:
    """`config` with the stdio server `name` running `argv mcp`, and what was dropped from an
    entry already there. memdeck writes the whole entry: an `env` or any other key it did not
    write goes (a cloned repository's `.mcp.json` can set `PYTHONPATH` to run its own code)."""
    servers = dict(_section(config, "mcpServers", dict, path))
    earlier = servers.get(name) if isinstance(servers.get(name), dict) else {}
    dropped = [f"env {key}" for key in (earlier.get("env") or {})] if isinstance(earlier.get("env"), dict) else []
    dropped += [key for key in earlier if key not in MCP_ENTRY_KEYS or (key == "env" and not isinstance(earlier[key], dict))]
    servers[name] = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": {}}
    return {**config, "mcpServers": servers}, dropped


def claude_mcp_add(scope: str, name: str, argv: list[str]) -> str:
    """The `claude mcp add` command that writes the same entry."""
    return " ".join(["claude", "mcp", "add", "--transport", "stdio", "--scope", scope, shlex.quote(name),
                     "--", *map(shlex.quote, argv), "mcp"])


def cmd_mcp_install(ctx) -> int:
    args = ctx.args
    path = mcp_config_path(args.scope)
    argv = memdeck_argv(args)
    config, dropped = with_mcp_server(read_json_object(path), args.name, argv, path)
    write_json(path, config, dry_run=args.dry_run)
    if dropped:
        info(f"{'would drop' if args.dry_run else 'dropped'} from the earlier {args.name!r} entry, which memdeck "
             f"did not write: {', '.join(dropped[:10])}{f' and {len(dropped) - 10} more' if len(dropped) > 10 else ''} (set what you need again by hand, after reading it)")
    if not args.dry_run:
        info(f"memdeck's MCP server {args.name!r} is in {path} (scope {args.scope}); "
             "Claude Code starts it in its next session (`/mcp` lists it)")
    info(f"the same with Claude Code's own command: {claude_mcp_add(args.scope, args.name, argv)}")
    return 0


# -- hooks -------------------------------------------------------------------------------------

def is_memdeck_hook(hook: Any, name: str) -> bool:
    """Whether `hook` (one entry of a hooks list) runs `memdeck ... hook NAME`."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    if not words or not (Path(words[0]).name == "memdeck" or "tui.cli.main" in words[:3]):
        return False
    return any(a == "hook" and b == name for a, b in zip(words, words[1:]))


def with_hooks(settings: dict[str, Any], argv: list[str], hat: str | None, path: Path, *,
               events: tuple[tuple[str, str, str | None], ...] = HOOKS, agent: str | None = None) -> dict[str, Any]:
    """`settings` with memdeck's SessionStart, UserPromptSubmit and Stop hooks (or `events`: (event,
    memdeck hook, matcher) each, for an agent that shares Claude Code's hook format, run with
    `--agent agent`): an earlier memdeck hook of each is changed in place (and repeats of it
    dropped), else a new group is added after the others."""
    hooks = dict(_section(settings, "hooks", dict, path))
    for event, name, matcher in events:
        command = " ".join(map(shlex.quote, [*argv, "hook", name, *(["--agent", agent] if agent else []),
                                             *(["--hat", hat] if hat else [])]))
        groups, placed = [], False
        for group in _section(hooks, event, list, path):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                entries = []
                for entry in group["hooks"]:
                    if not is_memdeck_hook(entry, name):
                        entries.append(entry)
                    elif not placed:
                        entries.append({**entry, "type": "command", "command": command})
                        placed = True
                if not entries:
                    continue
                group = {**group, "hooks": entries}
            groups.append(group)
        if not placed:
            groups.append({**({"matcher": matcher} if matcher else {}),
                           "hooks": [{"type": "command", "command": command}]})
        hooks[event] = groups
    return {**settings, "hooks": hooks}


def cmd_hook_install(ctx) -> int:
    args = ctx.args
    path = settings_path(args.scope)
    argv = memdeck_argv(args)
    hat = (args.hat or "").strip() or None
    write_json(path, with_hooks(read_json_object(path), argv, hat, path), dry_run=args.dry_run)
    if not args.dry_run:
        info(f"memdeck's SessionStart, UserPromptSubmit and Stop hooks are in {path} (scope {args.scope}), running "
             f"{shlex.quote(argv[0])}")
    return 0


def register_hook_install(hooks: argparse._SubParsersAction) -> None:
    p = hooks.add_parser(
        "install", help="write the session-start, user-prompt-submit and stop hooks into Claude Code's settings",
        description="Add memdeck's SessionStart, UserPromptSubmit and Stop hooks to Claude Code's settings.json, "
                    "running this memdeck by its absolute path. The file is merged into: other "
                    "settings and hooks stay; an earlier memdeck hook is updated in place.")
    add_scope_options(p, ".claude/settings.json", "~/.claude/settings.json")
    p.add_argument("--hat", default=None, help="the hat the hooks prime and ingest for")
    p.set_defaults(handler=cmd_hook_install)
