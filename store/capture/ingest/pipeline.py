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
from typing import Any, Iterable, Sequence

from store.anchors.anchoring import AnchorSpec, anchor_memory, project_root
from store.engine.core import Store
from store.engine.errors import InvalidInput, NotFound
from store.capture.heuristics import Candidate, Settings, Tracker
from store.capture.ingest.anchoring import RecentEdits, cited
from store.capture.ingest.entries import Entry, Record, read_record, session_facts
from store.capture.ingest.sources import Line
from store.capture.markers import Marker, has_marker, scan
from store.capture.redaction import clean, clean_field, summary_line, whole_characters
from store.engine.limits import fit_field, fit_list

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

# One encoder for every activity's detail: `json.dumps` with options builds a new one per call.
_ENCODE_DETAIL = json.JSONEncoder(ensure_ascii=False).encode
_INSERT_ACTIVITY = ("INSERT INTO activity (session_id, seq, at, kind, summary, memory_id, detail) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)")


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
    candidates: list[str] = field(default_factory=list)
    redacted: int = 0
    cut: int = 0
    activities: int = 0
    files_touched: list[str] = field(default_factory=list)
    incomplete_tail: int = 0  # bytes of an unfinished last line, left for the next ingest

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["records"] = dict(self.records)
        return data


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
        self.max_length = int(store.config.get("ingest.max_length"))
        self.marker_status = store.config.get("ingest.marker_status")
        if self.marker_status not in ("active", "pending"):
            raise InvalidInput(f"ingest.marker_status must be active or pending, not {self.marker_status!r}")
        self.settings = Settings.from_config(store.config)
        self.max_evidence = int(store.config.get("capture.max_evidence"))
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
        self.recent_edits = RecentEdits(int(store.config.get("anchors.ingest_recent_edits")))

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
        entries = self.logs.get(session_id)
        if not entries:
            return
        last = self.store.db.execute_sql(
            "SELECT MAX(seq) FROM activity WHERE session_id = ?", (session_id,)).fetchone()[0]
        start = 0 if last is None else last + 1
        rows = [(session_id, start + i, *entry) for i, entry in enumerate(entries)]
        self.store.db.cursor().executemany(_INSERT_ACTIVITY, rows)
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
            self._switch(record.session_id, record.at)
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
            self._unreadable(line, f"not JSON ({exc.msg} at column {exc.colno})", text)
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
        self._log("note", f"line {line.number}: unreadable record, {reason}: {preview}", None,
                  {"line": line.number, "reason": reason, "bytes": len(line.data)})

    def _entry(self, entry: Entry, record: Record, number: int) -> None:
        at, tracker = record.at, self.tracker
        detail: dict[str, Any] = {"line": number}
        kind = entry.kind
        if kind == "tool_use":
            detail.update(tool=entry.tool, tool_use_id=entry.tool_use_id)
            tracker.tool_call(entry.tool_use_id, entry.tool or "tool", entry.tool_input or {})
            self.recent_edits.call(entry.tool_use_id, entry.tool, entry.tool_input or {})
            self._log("tool_use", entry.text, at, detail)
            return
        if kind == "tool_result" or kind == "tool_error":
            tool = (tracker.state["calls"].get(entry.tool_use_id) or [None])[0]
            detail.update(tool=tool, tool_use_id=entry.tool_use_id)
            self._log(kind, f"{tool}: {entry.text}" if tool else entry.text, at, detail)
            edited, candidates = tracker.tool_result(entry.tool_use_id, kind == "tool_error", entry.text,
                                                     self.known.get("cwd"), number, at)
            if edited:
                self.files.setdefault(self.current, []).append(edited)
            self.recent_edits.result(entry.tool_use_id, edited, self.known.get("cwd"))
            for candidate in candidates:
                self._candidate(candidate, at, number)
        else:
            self._log(kind, entry.text, at, detail)
            if kind == "prompt" or kind == "note":
                # A subagent's prompt is its parent's words, and meta text the client's: only a
                # hook's feedback counts there.
                typed = kind == "prompt" and not record.raw.get("isSidechain")
                for candidate in tracker.user_text(entry.text, number, at, typed=typed):
                    self._candidate(candidate, at, number)
            elif kind == "assistant" and tracker.state["open"]:
                tracker.assistant_text(entry.text, number, at)
        if has_marker(entry.text):
            self._markers(entry, number, at)
        if entry.own:
            self.recent_edits.clear()  # edits before earlier text are not what later memories are about

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

    def _markers(self, entry: Entry, number: int, at: float | None, *,
                 text_lines_are_absolute: bool = False) -> None:
        found = scan(entry.text, first_line=number if text_lines_are_absolute else 1)
        where = (lambda n: {"line": n}) if text_lines_are_absolute else (lambda n: {"line": number, "text_line": n})
        if not entry.own:
            quoted = len(found.markers) + len(found.rejected) + len(found.quoted)
            if quoted:
                self.report.quoted += quoted
                self._log("note", f"{quoted} marker(s) quoted in a {entry.kind}: not memories, "
                                  "only the agent's own text counts", at, {"line": number, "quoted": quoted})
            return
        if found.quoted:
            self.report.quoted += len(found.quoted)
            self._log("note", f"{len(found.quoted)} marker(s) inside a code block: quoted examples, not memories",
                      at, {"line": number, "text_lines": found.quoted})
        for rejected in found.rejected:
            source = summary_line(rejected.source_line, 160)
            self.report.rejected.append({**where(rejected.line), "reason": rejected.reason, "source": source})
            self._log("marker_rejected", f"{rejected.reason}: {source}", at,
                      {**where(rejected.line), "reason": rejected.reason, "source": source})
        edits = self.recent_edits.take(project_root(self.store)) if found.markers else []
        for marker in found.markers:
            self._memory(marker, at, where(marker.line), edits)

    def _memory(self, marker: Marker, at: float | None, where: dict[str, Any],
                edits: Sequence[AnchorSpec] = ()) -> None:
        self.report.markers += 1
        resolution = self.store.vocabulary.resolve_type(marker.word)
        cleaned = clean(marker.text, self.max_length)
        scope = fit_field("scope", clean_field(marker.scope))
        head = f"[{resolution.type}{':' + scope if scope else ''}]"
        marker_detail = {**where, "word": marker.word, "type": resolution.type, "scope": scope,
                         "grammar": marker.grammar}
        self._log("marker", f"{head} {summary_line(cleaned.text, 160)}", at, marker_detail)
        if not cleaned.text.strip():
            self.report.rejected.append({**where, "reason": "no text left after cleaning", "source": head})
            self._log("marker_rejected", f"no text left after cleaning: {head}", at, {**where, "reason": "empty"})
            return
        tags = () if resolution.known else fit_list("tags", filter(None, [clean_field(marker.word.lower())]))
        meta = {"marker": {"word": marker.word, "grammar": marker.grammar}, **cleaned.meta()}
        result = self.store.add(
            cleaned.text, type=resolution.type, scope=scope, tags=tags, hat=self.options.hat,
            task=self.options.task, source="explicit", status=self.marker_status,
            session_id=self.session_id, actor="ingest", meta=meta)
        memory = result.memory
        (self.report.created if result.created else self.report.reinforced).append(memory.id)
        if anchors := [*edits, *cited(cleaned.text)]:
            anchor_memory(self.store, memory.id, anchors, actor="ingest", strict=False, session_id=self.session_id)
        kind = "memory_created" if result.created else "memory_reinforced"
        self._log(kind, f"{memory.id} {memory.type}: {summary_line(memory.title, 120)} "
                        f"(confidence {memory.confidence:.2f})", at,
                  {**where, **cleaned.meta()}, memory_id=memory.id, clean_summary=False)
        if not resolution.known:
            if memory.id not in {f["memory_id"] for f in self.report.fallback}:
                self.report.fallback.append({"word": marker.word, "memory_id": memory.id})
            self._log("note", f"unknown type {marker.word!r} kept as {resolution.type} with tag "
                              f"{marker.word.lower()!r}", at, {**where, "word": marker.word},
                      memory_id=memory.id)
        if cleaned.redactions:
            self.report.redacted += 1
            kinds = ", ".join(f"{k} ×{n}" for k, n in cleaned.redactions.items())
            self._log("note", f"secret redacted before storing {memory.id}: {kinds}", at,
                      {**where, "redactions": cleaned.redactions}, memory_id=memory.id)
        if cleaned.cut_from is not None:
            self.report.cut += 1
            self._log("note", f"{memory.id} cut to {self.max_length} characters (from {cleaned.cut_from})",
                      at, {**where, "cut_from": cleaned.cut_from}, memory_id=memory.id)

    def _candidate(self, candidate: Candidate, at: float | None, number: int | None) -> None:
        """Store a candidate in the inbox, or strengthen the memory it repeats (an earlier
        candidate of the session, or a memory it is similar to), adding its evidence."""
        evidence = [{**item, "session": self.current,
                     "text": clean(item["text"], self.max_length).text} for item in candidate.evidence]
        memories = self.tracker.state.setdefault("memories", {})
        earlier = memories.get(candidate.repeats) if candidate.repeats else None
        if earlier is not None:
            try:
                memory = self.store.get(earlier)
            except NotFound:  # purged since: the repeat is a candidate of its own
                memory = None
            if memory is None or memory.status == "deleted":
                return  # a person rejected it: a repeat does not bring it back
            result = self.store.add(memory.content, type=memory.type, scope=memory.scope, source="automatic",
                                    status="pending", session_id=self.current, actor="ingest")
        else:
            cleaned = clean(candidate.content, self.max_length)
            result = self.store.add(
                cleaned.text, type=candidate.type, title=summary_line(candidate.title, 100),
                tags=fit_list("tags", _clean_all(candidate.tags)),
                file_refs=fit_list("file_refs", _clean_all(candidate.file_refs)), hat=self.options.hat, task=self.options.task,
                confidence=candidate.confidence, source="automatic", status="pending", session_id=self.current,
                actor="ingest", meta={"heuristic": candidate.rule, "evidence": evidence, **cleaned.meta()})
            memories[candidate.key] = result.memory.id
        if not result.created:
            self._add_evidence(result.memory, evidence)
        self.report.candidates.append(result.memory.id)
        line = number if number is not None else (evidence[-1]["line"] if evidence else None)
        verb = "" if result.created else " reinforced"
        self._log("candidate", f"{candidate.type} candidate {result.memory.id}{verb}: "
                               f"{summary_line(result.memory.title, 120)}", at,
                  {"line": line, "rule": candidate.rule, "action": result.action,
                   "confidence": candidate.confidence},
                  memory_id=result.memory.id, clean_summary=False)

    def _add_evidence(self, memory, evidence: list[dict[str, Any]]) -> None:
        """A repeat's evidence joins the memory's, up to `capture.max_evidence` lines (the latest)."""
        known = list(memory.meta.get("evidence") or [])
        seen = {(e.get("session"), e.get("line")) for e in known}
        added = [e for e in evidence if (e.get("session"), e.get("line")) not in seen]
        if not added:
            return
        meta = {**memory.meta, "evidence": (known + added)[-self.max_evidence:]}
        # Evidence is ingest's own field: appended under ingest's write lock, with the version
        # bumped so that an editor holding an older read still sees the memory changed.
        self.store.db.execute_sql("UPDATE memory SET meta = ?, version = version + 1 WHERE id = ?",
                                  (json.dumps(meta, ensure_ascii=False), memory.id))

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


def _clean_all(values) -> tuple[str, ...]:
    return tuple(filter(None, map(clean_field, values)))


_PLAIN = re.compile(r"[A-Za-z0-9_.:-]*")


def _plain(value: Any) -> bool:
    """None, or text JSON writes as it is (no quote, backslash or character to escape)."""
    return value is None or (type(value) is str and _PLAIN.fullmatch(value) is not None)


def _json_plain(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'
