"""Reading one record of a session into entries: the things that happened, in the words of the
session log (prompt, assistant, thinking, tool_use, tool_result, tool_error, summary, note).

Claude Code transcripts and stream-json share the message shape (`message.content` blocks), so
one reader serves both. Records with nothing to show (file-history-snapshot, queue-operation,
attachment, progress, stream_event, ...) give no entries; the pipeline counts them by type.
Only `assistant` text blocks are the agent's own words (`Entry.own`): markers count only there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.engine.limits import time_in_range
from store.engine.redaction import clean_field


# Plain slotted classes, not frozen ones: tens of thousands are made per second of ingest, and a
# frozen dataclass pays for `object.__setattr__` on every field.
@dataclass(slots=True)
class Entry:
    kind: str  # an activity kind (store.vocabulary.ACTIVITY_KINDS)
    text: str = ""
    tool: str | None = None
    tool_use_id: str | None = None
    tool_input: dict[str, Any] | None = None
    own: bool = False  # the agent's own output, where markers count


@dataclass(slots=True)
class Record:
    """One line of a JSON session, read."""

    type: str
    entries: tuple[Entry, ...]
    at: float | None
    session_id: str | None
    raw: dict[str, Any]  # the record as read, for `session_facts`


def parse_time(value: Any) -> float | None:
    """A record's ISO timestamp as unix seconds; None (unknown, so the store uses now) when it
    is missing, unreadable, or outside the dates memdeck keeps (`store.engine.limits`): one bad record
    does not stop a transcript."""
    if not isinstance(value, str) or not value:
        return None
    try:
        at = datetime.fromisoformat(value).timestamp()  # Python 3.11 reads a trailing Z
    except (ValueError, OverflowError, OSError):  # year 1 with an offset overflows
        return None
    return at if time_in_range(at) else None


def read_record(obj: dict[str, Any]) -> Record:
    kind = obj.get("type")
    kind = kind if isinstance(kind, str) and kind else "(no type)"
    message = obj.get("message")
    entries: tuple[Entry, ...] = ()
    if kind == "user" and isinstance(message, dict):
        entries = tuple(_user_entries(message.get("content"), bool(obj.get("isMeta"))))
    elif kind == "assistant" and isinstance(message, dict):
        entries = tuple(_assistant_entries(message.get("content")))
    elif kind == "summary":
        entries = (Entry("summary", str(obj.get("summary") or "")),)
    elif kind == "result":
        entries = (_result_entry(obj),)
    elif kind == "system":
        entries = (_system_entry(obj),)
    session_id = obj.get("sessionId") or obj.get("session_id")
    return Record(kind, entries, parse_time(obj.get("timestamp")) if entries else None,
                  session_id if isinstance(session_id, str) else None, obj)


# What a session learns about itself from its records: (session meta key, record field).
SESSION_FACTS = (("cwd", "cwd"), ("version", "version"), ("git_branch", "gitBranch"), ("model", "model"))


def session_facts(obj: dict[str, Any]) -> dict[str, str]:
    facts = {key: clean_field(obj[field]) for key, field in SESSION_FACTS if isinstance(obj.get(field), str)}
    return {key: value for key, value in facts.items() if value}


def block_text(content: Any) -> str:
    """The text of a tool result or message content: a string, or text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Message content as blocks: a plain string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _user_entries(content: Any, is_meta: bool):
    for block in _blocks(content):
        if block.get("type") == "text":
            yield Entry("note" if is_meta else "prompt", str(block.get("text") or ""))
        elif block.get("type") == "tool_result":
            yield Entry("tool_error" if block.get("is_error") else "tool_result", block_text(block.get("content")),
                        tool_use_id=block.get("tool_use_id"))


def _assistant_entries(content: Any):
    for block in _blocks(content):
        kind = block.get("type")
        if kind == "text":
            yield Entry("assistant", str(block.get("text") or ""), own=True)
        elif kind == "thinking":
            yield Entry("thinking", str(block.get("thinking") or ""))
        elif kind == "redacted_thinking":
            yield Entry("thinking", "(redacted thinking)")
        elif kind == "tool_use":
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            yield Entry("tool_use", tool_use_text(str(block.get("name") or "tool"), tool_input),
                        tool=str(block.get("name") or "tool"), tool_use_id=block.get("id"), tool_input=tool_input)


def tool_use_text(tool: str, tool_input: dict[str, Any]) -> str:
    """What a tool call did, in one line: `Bash: npm test`, `Edit: src/app.ts`."""
    for field in ("command", "file_path", "notebook_path", "pattern", "url", "query", "description", "prompt"):
        value = tool_input.get(field)
        if isinstance(value, str) and value.strip():
            return f"{tool}: {value.strip()}"
    return tool


def _result_entry(obj: dict[str, Any]) -> Entry:
    # The result repeats the last assistant text: it is summarised, never scanned for markers again.
    turns = obj.get("num_turns")
    subtype = obj.get("subtype") or ("error" if obj.get("is_error") else "success")
    return Entry("summary", f"result: {subtype}" + (f", {turns} turns" if isinstance(turns, int) else ""))


def _system_entry(obj: dict[str, Any]) -> Entry:
    subtype = obj.get("subtype") or "system"
    detail = obj.get("content") if isinstance(obj.get("content"), str) else obj.get("model") or obj.get("cwd") or ""
    return Entry("note", f"{subtype}: {detail}" if detail else str(subtype))
