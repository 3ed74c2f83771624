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
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from store.engine.core import Store
from store.engine.errors import InvalidInput
from store.capture.heuristics import Settings, Tracker
from store.capture.ingest.anchoring import RecentEdits
from store.capture.ingest.entries import Entry
from store.capture.ingest.sources import Line
from store.capture.ingest.record_reading import RecordReading
from store.capture.ingest.writing import Writing
from store.capture.markers import has_marker
from store.capture.redaction import clean_field, summary_line

CHECKPOINT_BYTES = 4096

# One encoder for every activity's detail: `json.dumps` with options builds a new one per call.
_ENCODE_DETAIL = json.JSONEncoder(ensure_ascii=False).encode
_INSERT_ACTIVITY = ("INSERT INTO activity (session_id, seq, at, kind, summary, memory_id, detail) "
                    "VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})")  # `{p}`: the back-end's mark (`Backend.fmt`)


@dataclass
class IngestOptions:
    format: str = "auto"  # auto | transcript | stream-json | text
    session_id: str | None = None
    hat: str | None = None
    task: str | None = None
    follow: bool = False
    idle_exit: float | None = None  # with follow: stop after this many seconds without new lines
    batch_lines: int = 2000


@dataclass
class IngestReport:
    """What one ingest run did, for the summary printed at the end."""

    session_id: str = ""
    format: str = ""
    source: str = ""
    lines: int = 0  # lines read and ingested by this run
    already: int = 0  # lines skipped because they were ingested before
    records: Counter = field(default_factory=Counter)  # by record type
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    invalid_utf8: int = 0
    markers: int = 0
    created: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    fallback: list[dict[str, Any]] = field(default_factory=list)
    quoted: int = 0
    candidates: list[str] = field(default_factory=list)  # each candidate the run proposed, repeats too
    new_candidates: list[str] = field(default_factory=list)  # those that added a memory to the inbox
    redacted: int = 0
    cut: int = 0
    activities: int = 0
    files_touched: list[str] = field(default_factory=list)
    incomplete_tail: int = 0  # bytes of an unfinished last line, left for the next ingest

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["records"] = dict(self.records)
        return data


class Ingestion(RecordReading, Writing):
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
        self.max_length = int(store.config.ingest.max_length)
        self.marker_status = store.config.ingest.marker_status
        if self.marker_status not in ("active", "pending"):
            raise InvalidInput(f"ingest.marker_status must be active or pending, not {self.marker_status!r}")
        self.settings = Settings.from_config(store.config)
        self.max_evidence = int(store.config.capture.max_evidence)
        # Records of other sessions in this input: their id -> (tracker, known facts), per batch.
        self.route = options.session_id is None and fmt != "text"
        self.others: dict[str, tuple[Tracker, dict[str, Any]]] = {}
        self.logs: dict[str, list[tuple]] = {}  # session id -> its new log entries
        self.last_at: dict[str, float] = {}  # session id -> its latest record's time in this run
        self.ended: set[str] = set()  # sessions whose input said they ended
        self.current = session_id  # the session of the record being read
        self.window = bytearray()  # the last CHECKPOINT_BYTES consumed, for the checkpoint
        self.head: dict[str, Any] = {}  # a file's first bytes' checksum, saved with the state
        self.paragraph: list[Line] = []  # text format: lines of the paragraph being read
        self.in_fence = False
        self._activities: list[tuple] = self.logs.setdefault(session_id, [])
        self.files: dict[str, list[str]] = {}  # session id -> files its tools edited, not yet saved
        self.last_uuid: str | None = None  # the latest record's uuid: does the next one continue it?
        self.recent_edits = RecentEdits(int(store.config.anchors.ingest_recent_edits))

    # -- the session and its saved state -----------------------------------------------------

    def start(self, *, started_at: float | None, meta: dict[str, Any], source_path: str | None,
              agent: str | None) -> dict[str, Any]:
        """Create or continue the session; returns its saved ingest state."""
        session = self.store.ensure_session(
            self.session_id, agent=agent, hat=self.options.hat, task=self.options.task,
            started_at=started_at, source_path=source_path, meta=meta or None)
        state = dict((session.meta.get("ingest") or {}).get(self.source_key) or {})
        if state and state.get("format") not in (None, self.format):
            raise InvalidInput(
                f"session {self.session_id} was ingested as {state['format']}, not {self.format}; "
                "pass the same --format, or --session NEW for a new session")
        if self.options.follow:
            self.store.reopen_session(self.session_id)  # live again while it is followed
        return state

    def _load(self) -> tuple[dict[str, Any], Tracker, dict[str, Any]]:
        meta = self.store.session(self.session_id).meta
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
        if self.report.lines or self.store.session(self.session_id).ended_at is None:
            self._finish()
        return self.report

    def _finish(self) -> None:
        """The run is over: each session it read ends at its last record, and the signals still
        open become candidates."""
        with self.store.transaction():
            self.state, self.tracker, self.known = self._load()
            self.others, self.current = {}, self.session_id
            self._activities = self.logs.setdefault(self.session_id, [])
            for session_id in [self.session_id, *[s for s in self.last_at if s != self.session_id]]:
                self._switch(session_id)
                for candidate in self.tracker.finish():
                    self._candidate(candidate, self.last_at.get(session_id), None)
                self._flush_session(session_id, self.tracker, self.known)
                self.store.end_session(session_id, self.last_at.get(session_id))
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
                session = self.store.ensure_session(
                    session_id, agent=self.store.session(self.session_id).agent, hat=self.options.hat,
                    task=self.options.task, started_at=at or self.last_at.get(session_id),
                    source_path=self.store.session(self.session_id).source_path)
                self.others[session_id] = (Tracker(self.settings, dict(session.meta.get("heuristics") or {})),
                                           {k: session.meta[k] for k in ("cwd", "version", "git_branch", "model")
                                            if k in session.meta})
            self.tracker, self.known = self.others[session_id]
        self.current = session_id
        self._activities = self.logs.setdefault(session_id, [])

    def _batch(self, lines: list[Line], verify_skipped: bool, final: bool = False) -> None:
        with self.store.transaction():
            state, tracker, known = self.state, self.tracker, self.known = self._load()
            self.others, self.current = {}, self.session_id
            self._activities = self.logs.setdefault(self.session_id, [])
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
                    self.store.end_session(session_id, self.last_at.get(session_id))
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
        p = self.store.backend.param
        entries = self.logs.get(session_id)
        if not entries:
            return
        last = self.store.db.execute_sql(
            f"SELECT MAX(seq) FROM activity WHERE session_id = {p}", (session_id,)).fetchone()[0]
        start = 0 if last is None else last + 1
        rows = [(session_id, start + i, *entry) for i, entry in enumerate(entries)]
        self.store.db.cursor().executemany(self.store.backend.fmt(_INSERT_ACTIVITY), rows)
        self.report.activities += len(rows)
        entries.clear()

    def _flush_session(self, session_id: str, tracker: Tracker, known: dict[str, Any]) -> None:
        """Save another session of this input: its log and its heuristics' state."""
        if session_id == self.session_id:
            return
        self._write_log(session_id)
        files = list(dict.fromkeys(self.files.pop(session_id, [])))
        self.store.update_session(session_id, files_touched=files or None, meta={"heuristics": tracker.state, **known})

    def _flush(self, state: dict[str, Any], tracker: Tracker, known: dict[str, Any]) -> None:
        self._write_log(self.session_id)
        state["format"] = self.format
        state["checkpoint"] = self.checkpoint(self.window[-CHECKPOINT_BYTES:])
        state.update(self.head)
        meta = {"ingest": {**self.inputs, self.source_key: state}, "heuristics": tracker.state, **known}
        files = list(dict.fromkeys(self.files.pop(self.session_id, [])))
        self.report.files_touched += [f for f in files if f not in self.report.files_touched]
        self.store.update_session(self.session_id, files_touched=files or None, meta=meta)

    # -- one JSON record ---------------------------------------------------------------------







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
        self._log("assistant", text, None, {"line": lines[0].number})
        if has_marker(text):
            self._markers(Entry("assistant", text, own=True), lines[0].number, None, text_lines_are_absolute=True)

    # -- markers and memories ----------------------------------------------------------------





    # -- the session log ---------------------------------------------------------------------

    def _log(self, kind: str, text: str, at: float | None, detail: dict[str, Any], *,
             memory_id: str | None = None, clean_summary: bool = True) -> None:
        summary = summary_line(text) if clean_summary else text
        # Most entries carry only their line, or their line and tool: written directly, they
        # cost a tenth of the encoder.
        if len(detail) == 1 and "line" in detail:
            encoded = f'{{"line": {detail["line"]}}}'
        elif len(detail) == 3 and "tool_use_id" in detail and _plain(detail["tool"]) and _plain(detail["tool_use_id"]):
            encoded = (f'{{"line": {detail["line"]}, "tool": {_json_plain(detail["tool"])}, '
                       f'"tool_use_id": {_json_plain(detail["tool_use_id"])}}}')
        else:
            encoded = _ENCODE_DETAIL(detail)
        self._activities.append((self.store.now() if at is None else at, kind, summary, memory_id, encoded))


_PLAIN = re.compile(r"[A-Za-z0-9_.:-]*")


def _plain(value: Any) -> bool:
    """None, or text JSON writes as it is (no quote, backslash or character to escape)."""
    return value is None or (type(value) is str and _PLAIN.fullmatch(value) is not None)


def _json_plain(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'
