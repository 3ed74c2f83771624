"""aider's chat history (`.aider.chat.history.md`): many sessions in one file, each starting at
`# aider chat started at 2024-05-20 10:11:12`. In a session, `#### ` lines are the user's
message (several in a row are one message), `> ` lines are aider's own output (the command
line, edits applied, commits, warnings: nobody's words), and the rest is the model's reply.
"""

from __future__ import annotations

import re
from pathlib import Path

from store.capture.ingest.session_shape import HistorySession, Turn, session_key, utc

_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)\s*$")
_TIMES = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,}).*?^\s*\1\s*$", re.S | re.M)


def read_aider(path: Path, data: bytes) -> list[HistorySession]:  # noqa: C901 (a line reader: one branch per kind of line)
    lines = data.decode("utf-8", "replace").replace("\r\n", "\n").split("\n")
    sessions: list[HistorySession] = []
    current: HistorySession | None = None
    role: str | None = None
    body: list[str] = []

    def close() -> None:
        if current is None or role is None:
            return
        text = "\n".join(body).strip()
        if role == "assistant":
            text = _FENCE.sub("", text).strip()
        if text:
            current.turns.append(Turn(role, text, None))

    for line in lines:
        start = _START.match(line)
        if start:
            close()
            at = utc(start.group(1), _TIMES)
            index = len(sessions)
            current = HistorySession(session_id=session_key(str(path), index), fmt="aider", source=str(path),
                                     name=f"{path.name}#{index + 1}", started_at=at or 0.0,
                                     title=f"aider chat started at {start.group(1)}")
            sessions.append(current)
            role, body = None, []
            continue
        if current is None:
            continue
        if line.startswith("#### ") or line == "####":
            if role != "user":
                close()
                role, body = "user", []
            body.append(line[5:])
        elif line.startswith(">"):
            if role == "user":
                close()
                role, body = None, []
        else:
            if role == "user":
                if not line.strip():
                    continue  # a blank line after the message, before the reply
                close()
                role, body = "assistant", []
            elif role is None:
                if not line.strip():
                    continue
                role, body = "assistant", []
            body.append(line)
    close()
    # A session whose start line had no readable time follows the one before it.
    for before, session in zip([None, *sessions], sessions):
        if not session.started_at and before is not None:
            session.started_at = before.started_at
    return sessions
