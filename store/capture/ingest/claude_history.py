"""A Claude Code transcript (`~/.claude/projects/<project>/<session>.jsonl`) as a history
session: its typed prompts (not a subagent's, not meta records or command echoes, not a
compaction summary) with their times, and its own lines, which capture reads as `memdeck
ingest` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.capture.ingest.entries import parse_time
from store.capture.ingest.session_shape import CONTINUATION, HistorySession, Turn, json_records, session_key
from store.engine.errors import InvalidInput

_NOT_TYPED = ("<command-name>", "<local-command-stdout>", "<command-message>", "Caveat: ", "[Request interrupted")


def typed_prompt(record: dict[str, Any]) -> str | None:
    """The user's typed words in a transcript record, or None when it holds none."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isSidechain"):
        return None
    if record.get("isCompactSummary"):
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(_NOT_TYPED):
        return None
    return None if CONTINUATION.match(content) else content


def read_claude(path: Path, data: bytes) -> list[HistorySession]:
    lines, records = json_records(path, data)
    session_id, started, cwd = None, None, None
    turns: list[Turn] = []
    for record in records:
        at = parse_time(record.get("timestamp"))
        started = started or at
        found = record.get("sessionId")
        session_id = session_id or (found if isinstance(found, str) else None)
        cwd = cwd or (record.get("cwd") if isinstance(record.get("cwd"), str) else None)
        prompt = typed_prompt(record)
        if prompt is not None:
            turns.append(Turn("user", prompt, at))
    if started is None:
        raise InvalidInput(f"{path}: a Claude Code transcript with no time in it; nothing was read")
    first = next((t.text for t in turns), "")
    return [HistorySession(session_id=session_id or session_key(str(path)), fmt="transcript", source=str(path),
                           name=path.name, started_at=started, title=" ".join(first.split())[:80], turns=turns,
                           lines=lines, cwd=cwd)]
