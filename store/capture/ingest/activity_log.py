"""The session log ingest writes: each session's new entries, kept until the batch's transaction
writes them (`activity` rows, numbered after the session's last; the statements are
`store/backends/activity_rows.py`'s)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from store.backends import activity_rows
from store.engine.redaction import summary_line

if TYPE_CHECKING:
    from store.engine.core import Store

# One encoder for every activity's detail: `json.dumps` with options builds a new one per call.
_ENCODE_DETAIL = json.JSONEncoder(ensure_ascii=False).encode


class ActivityLog:
    """The entries waiting to be written, per session; `add` writes to the session being read."""

    def __init__(self, store: "Store", session_id: str) -> None:
        self.store = store
        self.pending: dict[str, list[tuple]] = {}  # session id -> its new log entries
        self.entries: list[tuple] = self.pending.setdefault(session_id, [])

    def switch(self, session_id: str) -> None:
        """The next entries are `session_id`'s."""
        self.entries = self.pending.setdefault(session_id, [])

    def add(self, kind: str, text: str, at: float | None, detail: dict[str, Any], *,
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
        self.entries.append((self.store.now() if at is None else at, kind, summary, memory_id, encoded))

    def write(self, session_id: str) -> int:
        """Write `session_id`'s waiting entries, in the open transaction; how many."""
        entries = self.pending.get(session_id)
        if not entries:
            return 0
        last = activity_rows.last_seq(self.store.backend, session_id)
        start = 0 if last is None else last + 1
        rows = [(session_id, start + i, *entry) for i, entry in enumerate(entries)]
        activity_rows.add(self.store.backend, rows)
        entries.clear()
        return len(rows)


_PLAIN = re.compile(r"[A-Za-z0-9_.:-]*")


def _plain(value: Any) -> bool:
    """None, or text JSON writes as it is (no quote, backslash or character to escape)."""
    return value is None or (type(value) is str and _PLAIN.fullmatch(value) is not None)


def _json_plain(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'
