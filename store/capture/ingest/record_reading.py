"""Reading one line of a JSON transcript: the record parsed (orjson where installed), counted, and
handed to the session's tracker as an entry; an unreadable line said as such."""

from __future__ import annotations

import json
from typing import Any

from store.capture.ingest.entries import Entry, Record, read_record, session_facts
from store.capture.ingest.sources import Line
from store.capture.markers import has_marker
from store.engine.redaction import summary_line, whole_characters

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


class RecordReading:
    """Mixed into `Ingestion` (uses its session state, `tracker`, `report`, `_switch`, `_markers` and `_log`)."""

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
        if kind not in ("tool_use", "tool_result", "tool_error") and record.raw.get("isSidechain") is True:
            # A subagent's prompt is its parent agent's words, not the user's, and its text is
            # not the user's to agree with: logged, and read for nothing but markers. Its tool
            # calls and results are real work in the project, read like the parent's.
            self._log(kind, entry.text, at, detail)
            if kind == "assistant" and tracker.state.get("explaining"):
                tracker.explains(entry.text)  # a subagent saying why its call failed
            if has_marker(entry.text):
                self._markers(entry, number, at)
            return
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
                                                     self.known.get("cwd"), number, at,
                                                     whole=kind == "tool_result" or _whole_result(record.raw, entry.text))
            if edited:
                self.files.setdefault(self.current, []).append(edited)
            self.recent_edits.result(entry.tool_use_id, edited, self.known.get("cwd"))
            for candidate in candidates:
                self._candidate(candidate, at, number)
        else:
            self._log(kind, entry.text, at, detail)
            if kind == "prompt" or (kind == "note" and (record.type != "system" or "hook" in entry.text)):
                # Meta text and compaction summaries are the client's: only a hook's feedback
                # counts there. A system record is not a turn of the user's, unless a hook spoke.
                if record.raw.get("isCompactSummary"):
                    tracker.new_task()
                typed = kind == "prompt" and not record.raw.get("isCompactSummary")
                for candidate in tracker.user_text(entry.text, number, at, typed=typed):
                    self._candidate(candidate, at, number)
            elif kind == "assistant":
                tracker.assistant_text(entry.text, number, at)
        if has_marker(entry.text):
            self._markers(entry, number, at)
        if entry.own:
            self.recent_edits.clear()  # edits before earlier text are not what later memories are about
