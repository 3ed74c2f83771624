"""Cursor: MCP in `.cursor/mcp.json` (or ~/.cursor/mcp.json) and hooks in `.cursor/hooks.json`
(or ~/.cursor/hooks.json), version 1: `{"version": 1, "hooks": {"sessionStart": [{"command":
…}], …}}`, a flat list of commands per event. memdeck uses sessionStart (its answer's
`additional_context` is added to the conversation), beforeSubmitPrompt (Cursor lets this hook
allow or block the prompt, not add to it: memdeck answers `{"continue": true}`) and stop.

Cursor sends each hook `conversation_id`, `generation_id`, `hook_event_name` and
`workspace_roots`; beforeSubmitPrompt adds `prompt`, stop `status` and `loop_count`, and newer
versions `transcript_path`. The rules file (`memdeck export --format cursor-rules`) carries the
memories into every request, which the hooks cannot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui.cli.agents.common import (
    Edits, Status, Turn, capped, hook_command, hooks_executable, json_status, mirror_path, read_jsonl,
    text_field, transcript_line, write_mirror,
)

NAME = "cursor"
TITLE = "Cursor"
EVENTS = {"session-start": "sessionStart", "user-prompt-submit": "beforeSubmitPrompt", "stop": "stop"}


def turn(payload: dict[str, Any]) -> Turn:
    roots = payload.get("workspace_roots")
    cwd = text_field(payload, "cwd") or (roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str)
                                         else None)
    return Turn(session_id=text_field(payload, "conversation_id") or text_field(payload, "session_id"), cwd=cwd,
                prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
                transcript=text_field(payload, "transcript_path"))


def answer(hook: str, block: str) -> str:
    if hook == "session-start":
        return json.dumps({"additional_context": capped(block)} if block else {}, ensure_ascii=False) + "\n"
    return quiet(hook)


def quiet(hook: str) -> str:
    return '{"continue": true}\n' if hook == "user-prompt-submit" else "{}\n"


def folder(scope: str) -> Path:
    from tui.cli.claude_setup import project_root

    return (project_root() if scope == "project" else Path.home()) / ".cursor"


def _hooks(current: Any, argv: list[str], hat: str | None) -> dict[str, Any]:
    from tui.cli.claude_setup import is_memdeck_hook

    hooks = dict(current) if isinstance(current, dict) else {}
    for name, event in EVENTS.items():
        command = hook_command(argv, name, NAME, hat)
        entries, placed = [], False
        for entry in hooks.get(event) if isinstance(hooks.get(event), list) else []:
            if not is_memdeck_hook(entry, name):
                entries.append(entry)
            elif not placed:
                entries.append({**entry, "command": command})
                placed = True
        if not placed:
            entries.append({"command": command})
        hooks[event] = entries
    return hooks


def connect(argv: list[str], scope: str, hat: str | None, dry_run: bool) -> list[Path]:
    mcp, hooks = folder(scope) / "mcp.json", folder(scope) / "hooks.json"
    edits = Edits()
    edits.json_member(mcp, ("mcpServers", "memdeck"), lambda _: {"command": argv[0], "args": [*argv[1:], "mcp"]})
    edits.json_member(hooks, ("version",), lambda current: current.get("version", 1))
    edits.json_member(hooks, ("hooks",), lambda current: _hooks(current.get("hooks"), argv, hat))
    return edits.write(dry_run=dry_run)


def _server(data: dict) -> str | None:
    entry = (data.get("mcpServers") or {}).get("memdeck") if isinstance(data.get("mcpServers"), dict) else None
    return entry.get("command") if isinstance(entry, dict) and isinstance(entry.get("command"), str) else None


def statuses(scope: str) -> list[Status]:
    return [json_status(NAME, scope, "mcp", folder(scope) / "mcp.json", _server),
            json_status(NAME, scope, "hooks", folder(scope) / "hooks.json",
                        lambda data: hooks_executable(data.get("hooks")))]


def capture(t: Turn) -> Path | None:
    """Cursor's transcript, when its stop names one whose records carry `role` and `message`."""
    if not t.session_id or not t.transcript:
        return None
    lines = []
    for record in read_jsonl(Path(t.transcript).expanduser()):
        role, message = record.get("role"), record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else "\n".join(
            str(part.get("text") or "") for part in content or [] if isinstance(part, dict) and part.get("type") == "text")
        if role in ("user", "assistant") and text.strip():
            lines.append(transcript_line(role, t.session_id, text, cwd=t.cwd))
    if not lines:
        return None
    path = mirror_path(NAME, t.session_id)
    write_mirror(path, "".join(lines))
    return path
