"""Which kind of input a file or stream is: a Claude Code session transcript, `claude -p
--output-format stream-json` output, or plain text. Detected from the first lines; `--format`
overrides."""

from __future__ import annotations

import json

from store.errors import InvalidInput

FORMATS = ("auto", "transcript", "stream-json", "text")
# Record types only Claude Code's own transcript files have.
_TRANSCRIPT_ONLY = {"summary", "file-history-snapshot", "queue-operation", "attachment", "progress",
                    "custom-title"}
# Record types of the stream-json protocol (seed 001's input).
_STREAM_TYPES = {"system", "assistant", "user", "result", "stream_event"}
_SNIFF_LINES = 5


def looks_binary(head: bytes) -> int | None:
    """The offset of the first NUL byte in `head`, if any: text and JSON lines have none."""
    at = head.find(b"\x00")
    return None if at < 0 else at


def detect_format(head: bytes, name: str = "input") -> str:
    """`transcript`, `stream-json` or `text`, from the first non-empty lines of `head`.

    Raises `InvalidInput` for input that looks binary: reading it as text would store garbage,
    and `--format text` is there for whoever means it."""
    nul = looks_binary(head)
    if nul is not None:
        raise InvalidInput(f"{name}: looks binary (a NUL byte at byte {nul}); nothing was ingested. "
                           "Pass --format text to read it as text anyway")
    seen = 0
    for raw in head.split(b"\n"):
        if not raw.strip():
            continue
        seen += 1
        if seen > _SNIFF_LINES:
            break
        try:
            record = json.loads(raw)
        except ValueError:
            if seen == 1:
                return "text"
            continue  # a damaged line further down does not make a JSON file text
        if not isinstance(record, dict):
            return "text" if seen == 1 else "transcript"
        kind = record.get("type")
        if kind in _TRANSCRIPT_ONLY or "sessionId" in record or "parentUuid" in record:
            return "transcript"
        if "session_id" in record and kind in _STREAM_TYPES:
            return "stream-json"
    return "text" if seen == 0 else "transcript"
