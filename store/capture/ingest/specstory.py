"""SpecStory's saved chats (`.specstory/history/*.md`, from Cursor or VS Code), one session per
file: `_**User**_` and `_**Assistant**_` / `_**Agent**_` sections (with the turn's time in
parentheses in newer files), `---` between them, `_****_` for a tool call of the agent's.

The session starts at the time in the file name (`2025-09-05_20-15Z-…`, `2025-01-02_14-27-50Z-…`,
`2025-02-25_01-58-…`), else the one in its title (`# Title (2025-09-05 20:15Z)`, `## Title
(25/02/2025, 02:17:02)`). Only the user sections are the user's words; in the agent's, tool
calls (`<tool-use>`, `<details>`), thinking (`<think>`) and code blocks are left out: they are
neither the user's words nor the agent's reply.
"""

from __future__ import annotations

import re
from pathlib import Path

from store.capture.ingest.session_shape import HistorySession, Turn, session_key, utc
from store.engine.errors import InvalidInput

_HEADER = re.compile(r"^_\*\*(User|Assistant|Agent)(?:\s*\(([^)]*)\))?\*\*_\s*$")
_TOOL = re.compile(r"^_\*\*\*\*_\s*$")
_NAME_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})(?:-(\d{2}))?Z?")
_SESSION = re.compile(r"<!--\s*cursor(?:ide)?\s+Session\s+([0-9a-fA-F-]{8,64})")
_TITLE = re.compile(r"^#{1,2}\s+(.*?)\s*(?:\(([^()]*\d[^()]*)\))?\s*$")
_TURN_TIMES = ("%Y-%m-%d %H:%M:%SZ", "%Y-%m-%d %H:%MZ", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M",
               "%d/%m/%Y, %H:%M:%S", "%d/%m/%Y, %H:%M")
_BLOCKS = (re.compile(r"<think>.*?</think>", re.S), re.compile(r"<tool-use\b.*?</tool-use>", re.S),
           re.compile(r"<details\b.*?</details>", re.S), re.compile(r"^\s*(`{3,}|~{3,}).*?^\s*\1\s*$", re.S | re.M),
           re.compile(r"<!--.*?-->", re.S))


def start_from_name(name: str) -> float | None:
    found = _NAME_TIME.match(name)
    if not found:
        return None
    day, hour, minute, second = found.groups()
    return utc(f"{day} {hour}:{minute}:{second or '00'}", ("%Y-%m-%d %H:%M:%S",))


def agent_words(text: str) -> str:
    """The agent's section less its tool calls, thinking and code blocks."""
    for block in _BLOCKS:
        text = block.sub("", text)
    lines = [line for line in text.splitlines() if line.strip() not in ("---", "_****_")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def read_specstory(path: Path, data: bytes) -> list[HistorySession]:
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    lines = text.split("\n")
    title, title_time = "", None
    for line in lines[:12]:
        found = _TITLE.match(line)
        if found and not line.startswith("# aider"):
            title = found.group(1)
            title_time = utc(found.group(2).strip(), _TURN_TIMES) if found.group(2) else utc(title.strip(), _TURN_TIMES)
            break
    started = start_from_name(path.name) or title_time
    if started is None:
        raise InvalidInput(f"{path}: a SpecStory file with no start time in its name or title; nothing was read")
    last = next((line for line in reversed(lines) if line.strip()), "")
    if last.startswith("_**") and not _HEADER.match(last) and not _TOOL.match(last):
        raise InvalidInput(f"{path}: truncated (it ends inside a section header: {last[:40]!r}); nothing was read")
    found_id = _SESSION.search(text)
    session = HistorySession(session_id=f"cursor-{found_id.group(1)}" if found_id else session_key(str(path)),
                             fmt="specstory", source=str(path), name=path.name, started_at=started, title=title)
    role, at, body = None, None, []

    def close() -> None:
        if role is None:
            return
        chunk = "\n".join(body)
        if role == "user":
            words = re.sub(r"(?:^|\n)\s*-{3,}\s*$", "", chunk.strip()).strip()
            if words:
                session.turns.append(Turn("user", words, at))
        else:
            words = agent_words(chunk)
            if not words:
                return
            if session.turns and session.turns[-1].role == "assistant":
                session.turns[-1].text += "\n\n" + words
            else:
                session.turns.append(Turn("assistant", words, at))

    for line in lines:
        header = _HEADER.match(line)
        if header:
            close()
            role = "user" if header.group(1) == "User" else "assistant"
            at = utc(header.group(2).strip(), _TURN_TIMES) if header.group(2) else None
            body = []
        elif _TOOL.match(line) and role is not None:
            close()
            role, body = "assistant", []
        elif role is not None:
            body.append(line)
    close()
    return [session]
