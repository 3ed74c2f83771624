"""What one ingest run is asked to do (`IngestOptions`) and what it did (`IngestReport`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


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
