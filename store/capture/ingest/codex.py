"""Codex CLI session files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): a `session_meta`
record (id, time, cwd), then `response_item` records whose payload is a `message` (role user or
assistant, `input_text` / `output_text` parts), a `function_call` and its output, reasoning;
`event_msg` and `turn_context` records repeat or describe them. The first rollouts had a header
line (`id`, `timestamp`, `instructions`) and the items themselves on the lines below.

The user's messages that Codex writes itself (`<environment_context>`, `<user_instructions>`,
the AGENTS.md text) are not the user's words.
"""

from __future__ import annotations

from pathlib import Path

from store.capture.ingest.entries import parse_time
from store.capture.ingest.session_shape import HistorySession, Turn, json_records, session_key
from store.engine.errors import InvalidInput

_INSERTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<user_shell_command>")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text") or "") for part in content
                         if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"))
    return ""


def read_codex(path: Path, data: bytes) -> list[HistorySession]:
    _, records = json_records(path, data)
    session_id, started, cwd = None, None, None
    turns: list[Turn] = []
    for record in records:
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else None
        at = parse_time(record.get("timestamp"))
        if kind == "session_meta" and payload is not None:
            session_id = session_id or payload.get("id")
            started = started or parse_time(payload.get("timestamp")) or at
            cwd = cwd or payload.get("cwd")
            continue
        if kind is None and "id" in record and "instructions" in record:  # the first rollouts' header
            session_id = session_id or record.get("id")
            started = started or at
            continue
        item = payload if kind == "response_item" else (record if kind == "message" else None)
        if not item or item.get("type") != "message" or item.get("role") not in ("user", "assistant"):
            continue
        text = _text(item.get("content")).strip()
        if not text:
            continue
        role = item["role"]
        if role == "user" and text.lstrip().startswith(_INSERTED):
            continue
        turns.append(Turn(role, text, at))
        started = started or at
    if started is None:
        raise InvalidInput(f"{path}: a Codex session with no time in it; nothing was read")
    session = HistorySession(session_id=f"codex-{session_id}" if isinstance(session_id, str) else session_key(str(path)),
                             fmt="codex", source=str(path), name=path.name, started_at=started, title="",
                             turns=turns, cwd=cwd if isinstance(cwd, str) else None)
    first = next((t.text for t in turns if t.role == "user"), "")
    session.title = " ".join(first.split())[:80]
    return [session]
