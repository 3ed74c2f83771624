"""Claude Code: MCP in `.mcp.json` (or ~/.claude.json) and hooks in `.claude/settings.json` (or
~/.claude/settings.json), written as `memdeck mcp install` and `memdeck hook install` write them.
Its hooks print the block as plain text (Claude Code adds a hook's stdout to the context)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.cli import claude_setup
from tui.cli.agents.common import Status, Turn, capped, hooks_executable, json_status, text_field

NAME = "claude-code"
TITLE = "Claude Code"
EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit", "stop": "Stop"}


def turn(payload: dict[str, Any]) -> Turn:
    return Turn(session_id=text_field(payload, "session_id"), cwd=text_field(payload, "cwd"),
                prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
                transcript=text_field(payload, "transcript_path"))


def answer(hook: str, block: str) -> str:
    if not block:
        return ""
    block = capped(block)
    return block if block.endswith("\n") else block + "\n"


def quiet(hook: str) -> str:
    return ""


def connect(argv: list[str], scope: str, hat: str | None, dry_run: bool) -> list[Path]:
    mcp = claude_setup.mcp_config_path(scope)
    config, _ = claude_setup.with_mcp_server(claude_setup.read_json_object(mcp), "memdeck", argv, mcp)
    settings = claude_setup.settings_path(scope)
    merged = claude_setup.with_hooks(claude_setup.read_json_object(settings), argv, hat, settings)
    claude_setup.write_json(mcp, config, dry_run=dry_run)
    claude_setup.write_json(settings, merged, dry_run=dry_run)
    return [mcp, settings]


def _server(data: dict) -> str | None:
    entry = (data.get("mcpServers") or {}).get("memdeck") if isinstance(data.get("mcpServers"), dict) else None
    return entry.get("command") if isinstance(entry, dict) and isinstance(entry.get("command"), str) else None


def statuses(scope: str) -> list[Status]:
    return [json_status(NAME, scope, "mcp", claude_setup.mcp_config_path(scope), _server),
            json_status(NAME, scope, "hooks", claude_setup.settings_path(scope),
                        lambda data: hooks_executable(data.get("hooks")))]
