"""Codex CLI (OpenAI): its MCP server table `[mcp_servers.memdeck]` in `config.toml` (the
project's `.codex/config.toml`, or `$CODEX_HOME/config.toml`, by default ~/.codex), and its
hooks in `hooks.json` beside it, in Claude Code's format (event → matcher groups → commands).

Codex sends each hook one JSON object (codex-rs/hooks/schema): `session_id`, `cwd`,
`transcript_path` (its session file, ~/.codex/sessions/…/rollout-….jsonl, or null),
`hook_event_name`, `model`; UserPromptSubmit adds `prompt` and `turn_id`; Stop adds
`last_assistant_message` and `stop_hook_active`. It reads a hook's answer as JSON:
`hookSpecificOutput.additionalContext` adds to the context (SessionStart, UserPromptSubmit).

At Stop, memdeck reads the session file (`session_meta`, `response_item` messages and function
calls, `event_msg` user messages), keeps it in Claude Code's transcript shape under memdeck's
data folder, and ingests that: markers in Codex's own replies become memories, as for Claude Code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.api import environment
from tui.cli.agents import toml_edit
from tui.cli.agents.common import (
    Edits, Status, Turn, hook_specific, hooks_executable, json_status, memdeck_hooks, mirror_path, read_jsonl,
    text_field, transcript_line, write_mirror,
)

NAME = "codex"
TITLE = "Codex CLI"
EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit", "stop": "Stop"}
SERVER = ("mcp_servers", "memdeck")


def turn(payload: dict[str, Any]) -> Turn:
    return Turn(session_id=text_field(payload, "session_id"), cwd=text_field(payload, "cwd"),
                prompt=payload.get("prompt") if isinstance(payload.get("prompt"), str) else None,
                transcript=text_field(payload, "transcript_path"),
                last_message=text_field(payload, "last_assistant_message"),
                retrying=payload.get("stop_hook_active") is True)


def answer(hook: str, block: str) -> str:
    return "" if hook == "stop" else hook_specific(EVENTS[hook], block, nothing="")


def quiet(hook: str) -> str:
    return ""


def folder(scope: str) -> Path:
    from tui.cli.claude_setup import project_root

    return project_root() / ".codex" if scope == "project" else environment.codex_home()


def connect(argv: list[str], scope: str, hat: str | None, dry_run: bool) -> list[Path]:
    edits = Edits()
    edits.toml_table(folder(scope) / "config.toml", SERVER, {"command": argv[0], "args": [*argv[1:], "mcp"]})
    hooks = folder(scope) / "hooks.json"
    edits.json_member(hooks, ("hooks",), lambda current: memdeck_hooks(
        current.get("hooks") if isinstance(current.get("hooks"), dict) else {},
        tuple((event, name) for name, event in EVENTS.items()), argv, NAME, hat, hooks))
    return edits.write(dry_run=dry_run)


def statuses(scope: str) -> list[Status]:
    config = folder(scope) / "config.toml"
    mcp = Status(NAME, scope, "mcp", config)
    if config.exists():
        try:
            _, data = toml_edit.read_toml(config)
            entry = data.get("mcp_servers", {}).get("memdeck") if isinstance(data.get("mcp_servers"), dict) else None
            if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                mcp.executable = entry["command"]
        except Exception as exc:  # noqa: BLE001 - a listing says what it could not read
            mcp.notes.append(f"unreadable: {str(exc).split(': ', 1)[-1].split(';')[0]}")
    return [mcp, json_status(NAME, scope, "hooks", folder(scope) / "hooks.json",
                             lambda data: hooks_executable(data.get("hooks")))]


# -- Codex's session file ----------------------------------------------------------------------

def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(part.get("text") or "") for part in content
                     if isinstance(part, dict) and part.get("type") in kinds)


def convert(records: list[dict[str, Any]], session_id: str) -> str:
    """Codex's session records as Claude Code transcript lines: the user's prompts (event_msg
    user_message: what was typed, not the instructions Codex adds as user messages), the agent's
    replies (response_item assistant messages) and its tool calls and their output."""
    lines = []
    cwd = None
    for record in records:
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        at = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        kind, inner = record.get("type"), payload.get("type")
        if kind == "session_meta" and isinstance(payload.get("cwd"), str):
            cwd = payload["cwd"]
        elif kind == "event_msg" and inner == "user_message" and isinstance(payload.get("message"), str):
            lines.append(transcript_line("user", session_id, payload["message"], at, cwd))
        elif kind == "response_item" and inner == "message" and payload.get("role") == "assistant":
            text = _texts(payload.get("content"), ("output_text", "text"))
            if text.strip():
                lines.append(transcript_line("assistant", session_id, text, at, cwd))
        elif kind == "response_item" and inner in ("function_call", "custom_tool_call"):
            lines.append(_tool_use(session_id, payload, at))
        elif kind == "response_item" and inner in ("function_call_output", "custom_tool_call_output"):
            lines.append(_tool_result(session_id, payload, at))
    return "".join(lines)


def _tool_use(session_id: str, payload: dict[str, Any], at: str | None) -> str:
    arguments = payload.get("arguments") if "arguments" in payload else payload.get("input")
    try:
        tool_input = json.loads(arguments) if isinstance(arguments, str) else {}
    except ValueError:
        tool_input = {"input": arguments}
    if not isinstance(tool_input, dict):
        tool_input = {"input": tool_input}
    if isinstance(tool_input.get("command"), list):
        tool_input["command"] = " ".join(map(str, tool_input["command"]))
    block = {"type": "tool_use", "id": str(payload.get("call_id") or ""), "name": str(payload.get("name") or "tool"),
             "input": tool_input}
    return json.dumps({"type": "assistant", "sessionId": session_id, "timestamp": at,
                       "message": {"role": "assistant", "content": [block]}}, ensure_ascii=False) + "\n"


def _tool_result(session_id: str, payload: dict[str, Any], at: str | None) -> str:
    output = payload.get("output")
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    block = {"type": "tool_result", "tool_use_id": str(payload.get("call_id") or ""), "content": text}
    return json.dumps({"type": "user", "sessionId": session_id, "timestamp": at,
                       "message": {"role": "user", "content": [block]}}, ensure_ascii=False) + "\n"


def capture(t: Turn) -> Path | None:
    """The transcript to ingest at Stop, kept in Claude Code's shape; None: nothing to ingest."""
    if not t.session_id:
        return None
    if t.transcript:
        path = mirror_path(NAME, t.session_id)
        write_mirror(path, convert(read_jsonl(Path(t.transcript).expanduser()), t.session_id))
        return path
    if t.last_message and not t.retrying:
        # No session file (an ephemeral session): this turn's reply is what there is.
        path = mirror_path(NAME, t.session_id, "-turns")
        write_mirror(path, transcript_line("assistant", t.session_id, t.last_message, cwd=t.cwd), append=True)
        return path
    return None
