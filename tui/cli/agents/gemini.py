"""Gemini CLI (Google): `mcpServers` and `hooks` in its settings.json (the project's
`.gemini/settings.json`, or ~/.gemini/settings.json). Its hooks are Claude Code's format
(event → matcher groups → commands); memdeck uses SessionStart (context for the session),
BeforeAgent (context for the prompt just submitted) and AfterAgent (the turn, for capture).

Gemini CLI sends each hook (docs/hooks/reference.md of gemini-cli) `session_id`,
`transcript_path`, `cwd`, `hook_event_name`, `timestamp`; SessionStart adds `source`,
BeforeAgent `prompt`, AfterAgent `prompt`, `prompt_response` and `stop_hook_active`. It parses
stdout as JSON, so a hook prints JSON only: `hookSpecificOutput.additionalContext` for context,
`{}` for nothing.

At AfterAgent the turn (the prompt and Gemini's reply) is appended to the transcript memdeck keeps
for the session, in Claude Code's shape, and that is ingested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.cli.agents.common import (
    Edits, Status, Turn, hook_specific, hooks_executable, json_status, memdeck_hooks, mirror_path, text_field,
    transcript_line, write_mirror,
)

NAME = "gemini"
TITLE = "Gemini CLI"
EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "BeforeAgent", "stop": "AfterAgent"}


def turn(payload: dict[str, Any]) -> Turn:
    return Turn(session_id=text_field(payload, "session_id"), cwd=text_field(payload, "cwd"),
                prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
                transcript=text_field(payload, "transcript_path"),
                last_message=text_field(payload, "prompt_response"),
                retrying=payload.get("stop_hook_active") is True)


def answer(hook: str, block: str) -> str:
    return "{}\n" if hook == "stop" else hook_specific(EVENTS[hook], block)


def quiet(hook: str) -> str:
    return "{}\n"


def settings_path(scope: str) -> Path:
    from tui.cli.claude_setup import project_root

    return (project_root() if scope == "project" else Path.home()) / ".gemini" / "settings.json"


def connect(argv: list[str], scope: str, hat: str | None, dry_run: bool) -> list[Path]:
    path = settings_path(scope)
    edits = Edits()
    edits.json_member(path, ("mcpServers", "memdeck"), lambda _: {"command": argv[0], "args": [*argv[1:], "mcp"]})
    edits.json_member(path, ("hooks",), lambda current: memdeck_hooks(
        current.get("hooks") if isinstance(current.get("hooks"), dict) else {},
        tuple((event, name) for name, event in EVENTS.items()), argv, NAME, hat, path))
    return edits.write(dry_run=dry_run)


def _server(data: dict) -> str | None:
    entry = (data.get("mcpServers") or {}).get("memdeck") if isinstance(data.get("mcpServers"), dict) else None
    return entry.get("command") if isinstance(entry, dict) and isinstance(entry.get("command"), str) else None


def statuses(scope: str) -> list[Status]:
    path = settings_path(scope)
    return [json_status(NAME, scope, "mcp", path, _server),
            json_status(NAME, scope, "hooks", path, lambda data: hooks_executable(data.get("hooks")))]


def capture(t: Turn) -> Path | None:
    if not t.session_id or t.retrying or not t.last_message:
        return None
    path = mirror_path(NAME, t.session_id)
    lines = (transcript_line("user", t.session_id, t.prompt, cwd=t.cwd) if t.prompt else "")
    write_mirror(path, lines + transcript_line("assistant", t.session_id, t.last_message, cwd=t.cwd), append=True)
    return path
