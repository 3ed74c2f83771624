"""`memdeck ingest` of a SpecStory, aider or Codex history file: each session in it is written
as Claude Code transcript records (`history.transcript_lines`) and read by the same pipeline,
into its own session, so the same capture rules apply to every format. Idempotent like any
ingest: progress is kept per session of the file, and a second run finds nothing new."""

from __future__ import annotations

import math
from pathlib import Path

from store.capture.ingest.history import read_file, transcript_lines, turn_times
from store.capture.ingest.pipeline import IngestOptions, IngestReport, Ingestion
from store.capture.ingest.sources import Line
from store.engine.core import Store


def _merge(into: IngestReport, report: IngestReport) -> None:
    for name, value in report.__dict__.items():
        if name in ("session_id", "format", "source"):
            continue
        current = getattr(into, name)
        if isinstance(value, (int, list)):
            setattr(into, name, current + value)
        elif hasattr(current, "update"):
            current.update(value)


def ingest_history(store: Store, path: Path, fmt: str, options: IngestOptions) -> IngestReport:
    """Ingest every session of the history file at `path` (format `fmt`); one report for all."""
    sessions = read_file(path, fmt)
    resolved = str(path.resolve())
    total = IngestReport(session_id=", ".join(s.session_id for s in sessions[:3]) + ("…" if len(sessions) > 3 else ""),
                         format=fmt, source=str(path))
    for index, session in enumerate(sessions):
        ceiling = sessions[index + 1].started_at if index + 1 < len(sessions) else math.inf
        lines, _ = transcript_lines(session, turn_times(session, -math.inf, ceiling))
        session_id = options.session_id if options.session_id and len(sessions) == 1 else session.session_id
        run = Ingestion(store, IngestOptions(format="transcript", session_id=session_id, hat=options.hat,
                                             task=options.task, batch_lines=options.batch_lines),
                        "transcript", session_id, str(path), source_key=f"{resolved}#{session.session_id}")
        run.start(started_at=session.started_at, meta={"history": fmt, "title": session.title} if session.title
                  else {"history": fmt}, source_path=resolved, agent=fmt)
        offset, numbered = 0, []
        for number, data in enumerate(lines, 1):
            offset += len(data) + 1
            numbered.append(Line(number, data, offset))
        _merge(total, run.consume(iter([numbered])))
    return total
