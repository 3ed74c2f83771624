"""The ingest pipeline: lines of a session in, a session log and memories out.

For each batch of lines, in one transaction: the session's ingest state is read again (so two
processes ingesting one transcript share the work instead of repeating it), lines already
ingested are skipped, each new record becomes activities in the session log, markers in the
agent's own text become memories (through `Store.add`, which reinforces a repeated one), the
heuristics propose inbox candidates, and the new state (how many lines and bytes, a checksum of
the last 4 KiB, counts) is saved on the session, per input, with the heuristics' state. Re-ingesting a transcript
therefore changes nothing, and a transcript that grew is ingested from where it stopped.

Lines with another `sessionId` than the input's own (a file that holds two sessions) go to their
own session, with its own log and heuristics. A session ends when its input says so (a
stream-json `result`), or when the run ends (at the end of a one-shot ingest, or when `--follow`
stops): its end is the time of its last record, and the heuristics' open signals become
candidates then. A following run reopens the session until it stops.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any, Iterable

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.capture.said_again import SaidAgain
from store.capture.heuristics import Settings, Tracker
from store.capture.ingest.anchoring import RecentEdits
from store.capture.ingest.entries import Entry, Record, read_record, session_facts
from store.capture.ingest.sources import Line
from store.capture.ingest.activity_log import ActivityLog
# Re-exported: what a run is asked and what it did are read with the pipeline.
from store.capture.ingest.run import IngestOptions, IngestReport  # noqa: F401
from store.capture.ingest.writing import Writer
from store.capture.markers import has_marker
from store.engine.redaction import clean_field, summary_line, whole_characters

CHECKPOINT_BYTES = 4096

try:
    # memdeck[fast]: orjson reads a record in about half the time. It reads bytes, so only lines
    # it cannot read (not UTF-8, half a character, not JSON, not a record) are decoded and read
    # again by the standard library, which says what is wrong with them.
    from orjson import JSONDecodeError as _FastError, loads as _fast_loads
except ImportError:
    _fast_loads = None


def _fast_record(data: bytes) -> dict[str, Any] | None:
    if _fast_loads is None:
        return None
    try:
        obj = _fast_loads(data)
    except _FastError:
        return None
    return obj if isinstance(obj, dict) else None


def _whole_result(raw: dict[str, Any], text: str) -> bool:
    """Whether a tool result's text is Claude Code's own result for the call as a whole (its
    `toolUseResult` says the same), so that a rejection or a hook block in it is one. A
    structured `toolUseResult` (a command's stdout and stderr, a fetched page) makes the text a
    tool's output, whatever it says; without a `toolUseResult` (stream-json) the text is taken
    as it is."""
    result = raw.get("toolUseResult", None)
    if result is None:
        return True
    if not isinstance(result, str):
        return False
    result = result[:400].strip()
    result = result[len("Error:"):].strip() if result.startswith("Error:") else result
    head = text[:600].lstrip()
    bare = head.removeprefix("<tool_use_error>").lstrip()
    return result == "User rejected tool use" or bare.startswith(result[:200].removesuffix("</tool_use_error>"))



class Ingestion:
    """One run of ingest into one session."""

    def __init__(self, store: Store, options: IngestOptions, fmt: str, session_id: str,
                 source: str, source_key: str) -> None:
        self.store = store
        # Fields from outside are cleaned at the door, like memory text: no escape sequence, control
        # or invisible character is stored in a hat, task, scope, tag or session id.
        options = replace(options, hat=clean_field(options.hat), task=clean_field(options.task))
        # A session can be fed by several inputs (Claude Code writes a subagent's transcript to
        # its own file under the same session id): progress is kept per input.
        self.source_key = source_key
        self.options = options
        self.format = fmt
        self.session_id = session_id
        self.report = IngestReport(session_id=session_id, format=fmt, source=source)
        marker_status = store.config.ingest.marker_status
        if marker_status not in ("active", "pending"):
            raise InvalidInput(f"ingest.marker_status must be active or pending, not {marker_status!r}")
        self.settings = Settings.from_config(store.config)
        # Records of other sessions in this input: their id -> (tracker, known facts), per batch.
        self.route = options.session_id is None and fmt != "text"
        self.others: dict[str, tuple[Tracker, dict[str, Any]]] = {}
        self.last_at: dict[str, float] = {}  # session id -> its latest record's time in this run
        self.ended: set[str] = set()  # sessions whose input said they ended
        self.current = session_id  # the session of the record being read
        self.window = bytearray()  # the last CHECKPOINT_BYTES consumed, for the checkpoint
        self.head: dict[str, Any] = {}  # a file's first bytes' checksum, saved with the state
        self.paragraph: list[Line] = []  # text format: lines of the paragraph being read
        self.in_fence = False
        self.log = ActivityLog(store, session_id)  # the session log's entries, per session
        self.files: dict[str, list[str]] = {}  # session id -> files its tools edited, not yet saved
        self.last_uuid: str | None = None  # the latest record's uuid: does the next one continue it?
        self.recent_edits = RecentEdits(int(store.config.anchors.ingest_recent_edits))
        self.writer = Writer(store, options, self.report, self.log, self.recent_edits, session_id)
        self.said_again = SaidAgain(store)

    # -- the session and its saved state -----------------------------------------------------

    def start(self, *, started_at: float | None, meta: dict[str, Any], source_path: str | None,
              agent: str | None) -> dict[str, Any]:
        """Create or continue the session; returns its saved ingest state."""
        session = self.store.sessions.ensure(
            self.session_id, agent=agent, hat=self.options.hat, task=self.options.task,
            started_at=started_at, source_path=source_path, meta=meta or None)
        state = dict((session.meta.get("ingest") or {}).get(self.source_key) or {})
        if state and state.get("format") not in (None, self.format):
            raise InvalidInput(
                f"session {self.session_id} was ingested as {state['format']}, not {self.format}; "
                "pass the same --format, or --session NEW for a new session")
        if self.options.follow:
            self.store.sessions.reopen(self.session_id)  # live again while it is followed
        return state

    def _load(self) -> tuple[dict[str, Any], Tracker, dict[str, Any]]:
        meta = self.store.sessions.get(self.session_id).meta
        self.inputs = dict(meta.get("ingest") or {})
        state = dict(self.inputs.get(self.source_key) or {"format": self.format, "lines": 0, "bytes": 0})
        tracker = Tracker(self.settings, dict(meta.get("heuristics") or {}))
        known = {k: meta[k] for k in ("cwd", "version", "git_branch", "model") if k in meta}
        return state, tracker, known

    @staticmethod
    def checkpoint(window: bytes) -> str:
        return hashlib.sha1(bytes(window)).hexdigest()

    def prime_window(self, window: bytes) -> None:
        self.window = bytearray(window[-CHECKPOINT_BYTES:])

    def _slide_window(self, lines: list[Line]) -> None:
        """Move the checkpoint window past `lines`, looking only at as many as it needs."""
        pieces, size = [], 0
        for line in reversed(lines):
            pieces.append(line.data + (b"\n" if line.terminated else b""))
            size += len(pieces[-1])
            if size >= CHECKPOINT_BYTES:
                break
        self.window = bytearray((bytes(self.window) + b"".join(reversed(pieces)))[-CHECKPOINT_BYTES:])

    def _consume(self, line: Line) -> None:
        self.window += line.data
        if line.terminated:
            self.window += b"\n"
        if len(self.window) > 2 * CHECKPOINT_BYTES:
            del self.window[:-CHECKPOINT_BYTES]

    # -- batches -----------------------------------------------------------------------------

    def consume(self, batches: Iterable[list[Line]], *, verify_skipped: bool = False) -> IngestReport:
        for lines in batches:
            self._batch(lines, verify_skipped)
        if self.paragraph:
            self._batch([], verify_skipped, final=True)
        # Nothing new and already ended (ingesting a finished transcript again): nothing to end.
        if self.report.lines or self.store.sessions.get(self.session_id).ended_at is None:
            self._finish()
        return self.report

    def _finish(self) -> None:
        """The run is over: each session it read ends at its last record, and the signals still
        open become candidates."""
        with self.store.transaction():
            self.state, self.tracker, self.known = self._load()
            self.others, self.current = {}, self.session_id
            self.log.switch(self.session_id)
            for session_id in [self.session_id, *[s for s in self.last_at if s != self.session_id]]:
                self._switch(session_id)
                for candidate in self.tracker.finish():
                    self.writer.candidate(candidate, self.last_at.get(session_id), None, session=self.current, tracker=self.tracker)
                self._flush_session(session_id, self.tracker, self.known)
                self.store.sessions.end(session_id, self.last_at.get(session_id))
            self._switch(self.session_id)
            self._flush(self.state, self.tracker, self.known)

    def _switch(self, session_id: str, at: float | None = None) -> None:
        """Read the next records into `session_id` (first seen at `at`): its tracker, facts and log."""
        if session_id == self.current:
            return
        if self.current == self.session_id:
            self._main = (self.tracker, self.known)
        if session_id == self.session_id:
            self.tracker, self.known = self._main
        else:
            if session_id not in self.others:
                session = self.store.sessions.ensure(
                    session_id, agent=self.store.sessions.get(self.session_id).agent, hat=self.options.hat,
                    task=self.options.task, started_at=at or self.last_at.get(session_id),
                    source_path=self.store.sessions.get(self.session_id).source_path)
                self.others[session_id] = (Tracker(self.settings, dict(session.meta.get("heuristics") or {})),
                                           {k: session.meta[k] for k in ("cwd", "version", "git_branch", "model")
                                            if k in session.meta})
            self.tracker, self.known = self.others[session_id]
        self.current = session_id
        self.log.switch(session_id)

    def _batch(self, lines: list[Line], verify_skipped: bool, final: bool = False) -> None:
        with self.store.transaction():
            state, tracker, known = self.state, self.tracker, self.known = self._load()
            self.others, self.current = {}, self.session_id
            self.log.switch(self.session_id)
            done = int(state.get("lines", 0))
            progressed = False
            self._committed: list[Line] = []
            for line in lines:
                if line.number <= done:
                    self.report.already += 1
                    self._consume(line)
                    if verify_skipped and line.number == done:
                        self._verify(state)
                    continue
                if not line.terminated and not line.data.strip():
                    continue
                if self.format == "text":
                    finished = self._text_line(line)
                    if finished is not None:
                        self._commit_units(state, finished)
                        progressed = True
                    continue
                if self._json_line(line):
                    self._commit_units(state, [line])
                    progressed = True
            if final and self.paragraph:
                paragraph, self.paragraph = self.paragraph, []
                self._paragraph(paragraph)
                self._commit_units(state, paragraph)
                progressed = True
            if progressed:
                self._slide_window(self._committed)
                self._switch(self.session_id)
                for other, (other_tracker, other_known) in self.others.items():
                    self._flush_session(other, other_tracker, other_known)
                self._flush(state, tracker, known)
                for session_id in self.ended:  # a stream-json result: ended even while followed
                    self.store.sessions.end(session_id, self.last_at.get(session_id))
                self.ended.clear()

    def _commit_units(self, state: dict[str, Any], lines: list[Line]) -> None:
        self._committed += lines
        state["lines"] = lines[-1].number
        state["bytes"] = lines[-1].end
        self.report.lines += len(lines)

    def _verify(self, state: dict[str, Any]) -> None:
        if state.get("checkpoint") and self.checkpoint(self.window[-CHECKPOINT_BYTES:]) != state["checkpoint"]:
            raise InvalidInput(
                f"this input differs from what was ingested before for session {self.session_id} "
                f"(its first {state['lines']} lines changed); nothing more was ingested. "
                "Use --session NEW to ingest it as a new session")

    def _write_log(self, session_id: str) -> None:
        self.report.activities += self.log.write(session_id)

    def _flush_session(self, session_id: str, tracker: Tracker, known: dict[str, Any]) -> None:
        """Save another session of this input: its log and its heuristics' state."""
        if session_id == self.session_id:
            return
        self._write_log(session_id)
        files = list(dict.fromkeys(self.files.pop(session_id, [])))
        self.store.sessions.save(session_id, files_touched=files or None, meta={"heuristics": tracker.state, **known})

    def _flush(self, state: dict[str, Any], tracker: Tracker, known: dict[str, Any]) -> None:
        self._write_log(self.session_id)
        state["format"] = self.format
        state["checkpoint"] = self.checkpoint(self.window[-CHECKPOINT_BYTES:])
        state.update(self.head)
        meta = {"ingest": {**self.inputs, self.source_key: state}, "heuristics": tracker.state, **known}
        files = list(dict.fromkeys(self.files.pop(self.session_id, [])))
        self.report.files_touched += [f for f in files if f not in self.report.files_touched]
        self.store.sessions.save(self.session_id, files_touched=files or None, meta=meta)

    # -- one JSON record ---------------------------------------------------------------------


    def _json_line(self, line: Line) -> bool:
        """Ingest one line of a JSON session; False if it is an unfinished last line left for later."""
        obj = _fast_record(line.data)
        if obj is None:
            parsed = self._parse(line)
            if not isinstance(parsed, dict):
                return parsed
            obj = parsed
        record = read_record(obj)
        self._count(record.type)
        if self.route and record.session_id is not None and record.session_id != self.current:
            before = self.tracker
            self._switch(record.session_id, record.at)
            parent = record.raw.get("parentUuid")
            if parent is not None and parent == self.last_uuid:
                # The same conversation under another id (a resumed session, a merged log): the
                # signals waiting for the agent's reply or the user's next words go along.
                self.tracker.take_thread(before)
        uuid = record.raw.get("uuid")
        self.last_uuid = uuid if isinstance(uuid, str) else None
        if record.at is not None:
            self.last_at[self.current] = record.at
        if record.type == "result":
            self.ended.add(self.current)
        if "cwd" not in self.known:  # the facts are the same on every record: read them once
            for key, value in session_facts(record.raw).items():
                self.known.setdefault(key, value)
        for entry in record.entries:
            self._entry(entry, record, line.number)
        return True

    def _parse(self, line: Line) -> dict[str, Any] | bool:
        """The record on a line, read by the standard library, which says what is wrong with a
        line that is not one. Not a record: whether the line is done with (False: it is an
        unfinished last line, left for later)."""
        text = self._decode(line)
        try:
            obj = json.loads(text)
            if "\\ud" in text or "\\uD" in text:  # maybe half a character, which SQLite cannot store
                obj = whole_characters(obj)
        except ValueError as exc:
            if not line.terminated:
                self.report.incomplete_tail = len(line.data)
                return False
            # Not only a syntax error: a number of more than 4,300 digits is a plain ValueError.
            why = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)[:120]
            self._unreadable(line, f"not JSON ({why})", text)
            return True
        except RecursionError:
            self._unreadable(line, "JSON nested too deeply to be a record", text)
            return True
        if not text.strip():
            return True
        if not isinstance(obj, dict):
            self._unreadable(line, f"a JSON {type(obj).__name__}, not a record", text)
            return True
        return obj

    def _count(self, record_type: str) -> None:
        self.report.records[record_type] += 1
        records = self.state.setdefault("records", {})
        records[record_type] = records.get(record_type, 0) + 1

    def _decode(self, line: Line) -> str:
        try:
            return line.data.decode("utf-8")
        except UnicodeDecodeError:
            self.report.invalid_utf8 += 1
            return line.data.decode("utf-8", "replace")

    def _unreadable(self, line: Line, reason: str, text: str) -> None:
        preview = summary_line(text, 80)
        self.report.unreadable.append({"line": line.number, "reason": reason})
        self._count("(unreadable)")
        self.log.add("note", f"line {line.number}: unreadable record, {reason}: {preview}", None,
                  {"line": line.number, "reason": reason, "bytes": len(line.data)})

    def _entry(self, entry: Entry, record: Record, number: int) -> None:
        at, tracker = record.at, self.tracker
        detail: dict[str, Any] = {"line": number}
        kind = entry.kind
        if kind not in ("tool_use", "tool_result", "tool_error") and record.raw.get("isSidechain") is True:
            # A subagent's prompt is its parent agent's words, not the user's, and its text is
            # not the user's to agree with: logged, and read for nothing but markers. Its tool
            # calls and results are real work in the project, read like the parent's.
            self.log.add(kind, entry.text, at, detail)
            if kind == "assistant" and tracker.state.get("explaining"):
                tracker.explains(entry.text)  # a subagent saying why its call failed
            if has_marker(entry.text):
                self.writer.markers(entry, number, at)
            return
        if kind == "tool_use":
            detail.update(tool=entry.tool, tool_use_id=entry.tool_use_id)
            tracker.tool_call(entry.tool_use_id, entry.tool or "tool", entry.tool_input or {})
            self.recent_edits.call(entry.tool_use_id, entry.tool, entry.tool_input or {})
            self.log.add("tool_use", entry.text, at, detail)
            return
        if kind == "tool_result" or kind == "tool_error":
            tool = (tracker.state["calls"].get(entry.tool_use_id) or [None])[0]
            detail.update(tool=tool, tool_use_id=entry.tool_use_id)
            self.log.add(kind, f"{tool}: {entry.text}" if tool else entry.text, at, detail)
            edited, candidates = tracker.tool_result(entry.tool_use_id, kind == "tool_error", entry.text,
                                                     self.known.get("cwd"), number, at,
                                                     whole=kind == "tool_result" or _whole_result(record.raw, entry.text))
            if edited:
                self.files.setdefault(self.current, []).append(edited)
            self.recent_edits.result(entry.tool_use_id, edited, self.known.get("cwd"))
            for candidate in candidates:
                self.writer.candidate(candidate, at, number, session=self.current, tracker=self.tracker)
        else:
            self.log.add(kind, entry.text, at, detail)
            if kind == "prompt" or (kind == "note" and (record.type != "system" or "hook" in entry.text)):
                self._user_text(entry, record, number)
            elif kind == "assistant":
                tracker.assistant_text(entry.text, number, at)
        if has_marker(entry.text):
            self.writer.markers(entry, number, at)
        if entry.own:
            self.recent_edits.clear()  # edits before earlier text are not what later memories are about







    def _user_text(self, entry: Entry, record: Record, number: int) -> None:
        """A turn of the user's (or a note a hook wrote into it): the heuristics read it, and a
        sentence an earlier session was told already is a standing lesson (`SaidAgain`)."""
        at, tracker = record.at, self.tracker
        # Meta text and compaction summaries are the client's: only a hook's feedback counts
        # there. A system record is not a turn of the user's, unless a hook spoke.
        if record.raw.get("isCompactSummary"):
            tracker.new_task()
        typed = entry.kind == "prompt" and not record.raw.get("isCompactSummary")
        for candidate in tracker.user_text(entry.text, number, at, typed=typed):
            self.writer.candidate(candidate, at, number, session=self.current, tracker=tracker)
        if typed:
            for candidate in self.said_again.said(self.current, entry.text, number, at, tracker.state):
                self.writer.candidate(candidate, at, number, session=self.current, tracker=tracker)

    # -- text --------------------------------------------------------------------------------

    def _text_line(self, line: Line) -> list[Line] | None:
        """Add a line to the paragraph; a blank line outside a code fence ends it."""
        self.paragraph.append(line)
        if line.data.lstrip().startswith((b"```", b"~~~")):
            self.in_fence = not self.in_fence
        if line.data.strip() or self.in_fence:
            return None
        paragraph, self.paragraph = self.paragraph, []
        self._paragraph(paragraph)
        return paragraph

    def _paragraph(self, lines: list[Line]) -> None:
        """Plain text is all the agent's own output: one `assistant` entry per paragraph."""
        text = "\n".join(self._decode(line) for line in lines).rstrip("\n")
        self._count("paragraph")
        if not text.strip():
            return
        self.log.add("assistant", text, None, {"line": lines[0].number})
        if has_marker(text):
            self.writer.markers(Entry("assistant", text, own=True), lines[0].number, None, text_lines_are_absolute=True)






