"""Ingest: from agent sessions into the store (memdeck's write path).

`ingest_file` and `ingest_stream` read a Claude Code transcript, `claude -p --output-format
stream-json` output or plain text, detect which it is, pick the session (from the input, or
`IngestOptions.session_id`), and hand the lines to the pipeline (`pipeline.py`), which records
the session's activities, its memories and the inbox candidates, idempotently.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import BinaryIO, Callable

from store.engine.core import Store
from store.engine.errors import InvalidInput, NotFound
from store.capture.ingest.entries import parse_time, session_facts
from store.capture.ingest.formats import FORMATS, detect_format
from store.capture.ingest.pipeline import CHECKPOINT_BYTES, IngestOptions, IngestReport, Ingestion
from store.capture.ingest.sources import POLL_SECONDS, FileSource, StreamSource
from store.engine.redaction import clean_field, whole_characters

__all__ = ["FORMATS", "IngestOptions", "IngestReport", "ingest_file", "ingest_stream"]

HEAD_BYTES = 64 * 1024
_SESSION_FIELD = re.compile(rb'"(?:sessionId|session_id)"\s*:\s*"([^"\\]{1,200})"')
AGENTS = {"transcript": "claude-code", "stream-json": "claude-code", "text": None}


def _sniff(head: bytes, fmt: str) -> tuple[str | None, float | None, dict]:
    """The session id, start time and session facts found in the first lines of JSON input."""
    if fmt == "text":
        return None, None, {}
    session_id, started, meta = None, None, {}
    for raw in head.split(b"\n")[:50]:
        try:
            obj = whole_characters(json.loads(raw.decode("utf-8", "replace")))
        except (ValueError, RecursionError):
            # A line longer than the head: its id is still there to be read.
            found = _SESSION_FIELD.search(raw)
            session_id = session_id or (found.group(1).decode("utf-8", "replace") if found else None)
            continue
        if not isinstance(obj, dict):
            continue
        found = obj.get("sessionId") or obj.get("session_id")
        session_id = session_id or (found if isinstance(found, str) and found else None)
        started = started or parse_time(obj.get("timestamp"))
        meta = {**session_facts(obj), **meta}
        if session_id and started:
            break
    return session_id, started, meta


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def ingest_file(store: Store, path: Path | str, options: IngestOptions | None = None, *,
                stopping: Callable[[], bool] = lambda: False) -> IngestReport:
    """Ingest a file, from where the last ingest of its session stopped."""
    options = options or IngestOptions()
    _check_format(options.format)
    path = Path(path)
    if not path.exists():
        raise NotFound(f"{path}: no such file")
    if not path.is_file():
        raise InvalidInput(f"{path}: not a regular file")
    head = _read_head(path)
    if options.format == "auto" and not options.follow:
        from store.capture.ingest.history import detect_history

        history = detect_history(path, head)
        if history is not None:  # SpecStory, aider or Codex: each session as a transcript
            from store.capture.ingest.history_ingest import ingest_history

            return ingest_history(store, path, history, options)
    if options.follow and options.format == "auto" and not _decidable(head):
        head = _wait_for_a_line(path, head, options.idle_exit, stopping)
    fmt = detect_format(head, str(path)) if options.format == "auto" else options.format
    found_id, started, meta = _sniff(head, fmt)
    resolved = str(path.resolve())
    prefix = "text" if fmt == "text" else "file"
    session_id = (clean_field(options.session_id) or clean_field(found_id)
                  or f"{prefix}-{hashlib.sha1(resolved.encode('utf-8', 'replace')).hexdigest()[:12]}")
    run = Ingestion(store, options, fmt, session_id, str(path), source_key=resolved)
    state = run.start(started_at=started, meta=meta, source_path=resolved, agent=AGENTS[fmt])
    start_byte, start_line = int(state.get("bytes", 0)), int(state.get("lines", 0))
    if start_byte:
        _check_continuation(path, head, state, session_id, run)
    run.head = {"head_bytes": len(head[:CHECKPOINT_BYTES]), "head": run.checkpoint(head[:CHECKPOINT_BYTES])}
    source = FileSource(path, start_line=start_line, start_byte=start_byte, follow=options.follow,
                        idle_exit=options.idle_exit, stopping=stopping)
    report = run.consume(source.batches(options.batch_lines))
    if source.problem:
        raise InvalidInput(f"{source.problem}; stopped following. The {report.lines} lines read before it "
                           f"changed are kept in session {session_id}; to read the new content, ingest it "
                           "again with --session NEW")
    return report


def _read_head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read: {exc.strerror}") from None


def _decidable(head: bytes) -> bool:
    """Whether the format can be told from `head`: it holds a whole non-empty line (or is a
    whole head's worth of one line)."""
    if len(head) >= HEAD_BYTES:
        return True
    return any(line.strip() for line in head.split(b"\n")[:-1])


def _wait_for_a_line(path: Path, head: bytes, idle_exit: float | None,
                     stopping: Callable[[], bool]) -> bytes:
    """A followed file with no whole line yet (a live session's transcript starts empty): wait
    for its first line before deciding its format, which an empty file does not tell (it would
    be read as text, and the JSON records appended later as paragraphs)."""
    waited_since = time.monotonic()
    while not _decidable(head) and not stopping():
        if idle_exit is not None and time.monotonic() - waited_since >= idle_exit:
            break
        time.sleep(POLL_SECONDS)
        head = _read_head(path)
    return head


def _check_continuation(path: Path, head: bytes, state: dict, session_id: str, run: Ingestion) -> None:
    """A file is continued only if the part already ingested is still there, unchanged: its
    first and last 4 KiB are compared with checksums taken when they were ingested."""
    start_byte = int(state["bytes"])
    size = path.stat().st_size
    if size < start_byte:
        raise InvalidInput(f"{path}: shorter ({size} bytes) than what was already ingested for session "
                           f"{session_id} ({start_byte} bytes); nothing was ingested. Use --session NEW "
                           "to ingest it as a new session")
    with path.open("rb") as handle:
        handle.seek(max(0, start_byte - CHECKPOINT_BYTES))
        window = handle.read(start_byte - max(0, start_byte - CHECKPOINT_BYTES))
    run.prime_window(window)
    head_changed = "head" in state and run.checkpoint(head[:int(state["head_bytes"])]) != state["head"]
    if head_changed or (state.get("checkpoint") and run.checkpoint(window) != state["checkpoint"]):
        raise InvalidInput(f"{path}: changed before the part already ingested for session {session_id} "
                           f"(its first {state.get('lines')} lines); nothing was ingested. Use --session NEW "
                           "to ingest it as a new session")


def ingest_stream(store: Store, fd: int, options: IngestOptions | None = None, *,
                  tee: BinaryIO | None = None, stopping: Callable[[], bool] = lambda: False,
                  name: str = "stdin") -> IngestReport:
    """Ingest a stream (stdin) as it arrives. With `tee`, the stream is copied there unchanged,
    to the end, even if ingest fails half-way."""
    options = options or IngestOptions()
    _check_format(options.format)
    source = StreamSource(fd, tee=tee, stopping=stopping)
    batches = source.batches(options.batch_lines)
    try:
        first: list = []
        for batch in batches:
            first += batch
            if any(line.data.strip() for line in first):
                break
        head = b"\n".join(line.data for line in first)
        fmt = detect_format(head, name) if options.format == "auto" else options.format
        found_id, started, meta = _sniff(head, fmt)
        # Plain text on stdin has no id of its own: a fresh session each time, unless --session.
        session_id = (clean_field(options.session_id) or clean_field(found_id)
                      or f"stdin-{int(time.time())}-{os.urandom(3).hex()}")
        run = Ingestion(store, options, fmt, session_id, name, source_key=name)
        run.start(started_at=started, meta=meta, source_path=None, agent=AGENTS[fmt])
        return run.consume(_chain([first], batches), verify_skipped=True)
    except BaseException:
        source.drain()
        raise
    finally:
        source.close()


def _chain(*parts):
    for part in parts:
        yield from part
