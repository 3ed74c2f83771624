"""Which kind of input a file or stream is: a Claude Code session transcript, `claude -p
--output-format stream-json` output, or plain text. Detected from the first lines; `--format`
overrides."""

from __future__ import annotations

import json
from pathlib import Path

from store.engine.errors import InvalidInput

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

    Raises `InvalidInput` for text that looks binary: reading it would store garbage, and
    `--format text` is there for whoever means it. (A NUL byte in a JSON session is one damaged
    record, reported by the pipeline, not a reason to refuse the file.)"""
    fmt = _sniff_format(head)
    nul = looks_binary(head)
    if fmt == "text" and nul is not None:
        raise InvalidInput(f"{name}: looks binary (a NUL byte at byte {nul}); nothing was ingested. "
                           "Pass --format text to read it as text anyway")
    return fmt


def _sniff_format(head: bytes) -> str:
    lines = head.split(b"\n")
    partial = lines.pop() if lines else b""  # the head may end inside a long line
    seen = 0
    for raw in lines:
        if not raw.strip():
            continue
        seen += 1
        if seen > _SNIFF_LINES:
            break
        try:
            record = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
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
    if seen == 0 and partial.strip():
        # One line longer than the head: judge it by its start.
        if not partial.lstrip().startswith(b"{"):
            return "text"
        return "stream-json" if b'"session_id"' in partial and b'"sessionId"' not in partial else "transcript"
    return "text" if seen == 0 else "transcript"


def transcript_problem(path: Path) -> str | None:
    """Why the file at `path` is not a Claude Code transcript, or None when it is one: a regular
    `.jsonl` file whose first lines are transcript records. The Stop hook names its file in its
    input; any other file named there (a key, a log, `/dev/zero`) is refused, not ingested. An
    empty `.jsonl` file is one (a session that has written nothing yet)."""
    if path.suffix != ".jsonl":
        return "not a Claude Code transcript (its name does not end in .jsonl)"
    try:
        if not path.is_file():
            return "no such file" if not path.exists() else "not a regular file"
        with path.open("rb") as handle:
            head = handle.read(64 * 1024)
    except OSError as exc:
        return f"cannot read it: {exc.strerror}"
    if head and not _transcript_records(head, whole=len(head) < 64 * 1024):
        return "not a Claude Code transcript (its first lines are not transcript records)"
    return None


def _transcript_records(head: bytes, whole: bool) -> bool:
    """The first lines are JSON records, each with a type, and one at least is Claude Code's."""
    pieces = head.split(b"\n")
    partial = b"" if whole else pieces.pop()  # the head may end inside a line
    lines = [line for line in pieces if line.strip()][:_SNIFF_LINES]
    if not lines:
        # One line longer than the head: judged by its start.
        start = partial.lstrip()
        return start.startswith(b"{") and b'"type"' in start and b'"sessionId"' in start
    found = False
    for raw in lines:
        try:
            record = json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return False
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return False
        found = found or "sessionId" in record or record["type"] in _TRANSCRIPT_ONLY
    return found
