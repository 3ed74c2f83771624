"""The one shape every history reader gives (`history.py` reads the files): a session's turns,
in order, with their times when the format keeps them."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from store.engine.errors import InvalidInput

HISTORY_FORMATS = ("specstory", "aider", "codex", "transcript")
CONTINUATION = re.compile(r"^\s*this session is being continued from a previous conversation", re.I)


@dataclass(slots=True)
class Turn:
    role: str  # "user" or "assistant"
    text: str
    at: float | None = None  # when the format saved it; None when it did not
    own: bool = True  # a user turn typed by the user (not a summary, not inserted text)
    own_text: str | None = None  # the user's words with inserted paragraphs taken out


@dataclass
class HistorySession:
    session_id: str
    fmt: str  # one of HISTORY_FORMATS
    source: str  # the file it was read from
    name: str  # the file name (with `#N` for one of several sessions in a file)
    started_at: float
    title: str = ""
    turns: list[Turn] = field(default_factory=list)
    lines: list[bytes] | None = None  # a Claude Code transcript's own lines
    cwd: str | None = None
    notes: list[str] = field(default_factory=list)  # what reading it noticed (times out of order, ...)

    @property
    def prompts(self) -> list[Turn]:
        return [t for t in self.turns if t.role == "user"]

    @property
    def ended_at(self) -> float:
        times = [t.at for t in self.turns if t.at is not None]
        return max([self.started_at, *times])


def utc(text: str, formats: Iterable[str]) -> float | None:
    """`text` read by the first of `formats` that fits, as UTC unix seconds."""
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
    return None


def session_key(source: str, index: int = 0) -> str:
    digest = hashlib.sha1(f"{source}#{index}".encode("utf-8", "replace")).hexdigest()[:12]
    return f"history-{digest}"


def json_records(path: Path, data: bytes) -> tuple[list[bytes], list[dict[str, Any]]]:
    """A JSON-lines session file's lines (a final blank one dropped) and the records among them
    (a line that is no JSON object is passed over). A last line that is not a whole record is a
    file cut short: refused, nothing read."""
    lines = data.split(b"\n")
    if lines and not lines[-1].strip():
        lines.pop()
    if lines:
        try:
            json.loads(lines[-1])
        except (ValueError, RecursionError):
            raise InvalidInput(f"{path}: truncated (its last line, {len(lines)}, is not a whole JSON record); "
                               "nothing was read") from None
    records = []
    for raw in lines:
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return lines, records
