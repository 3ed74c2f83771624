"""The SQL of the session log ingest writes (`store.capture.ingest.activity_log`): a session's
last entry number, and its new entries written in one statement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from store.engine.ports import Backend


def last_seq(backend: "Backend", session_id: str) -> int | None:
    """The number of the session's last log entry (None: it has none)."""
    return backend.db.execute_sql(
        f"SELECT MAX(seq) FROM activity WHERE session_id = {backend.param}", (session_id,)).fetchone()[0]


def add(backend: "Backend", rows: Sequence[tuple]) -> None:
    """Log entries, each (session id, seq, at, kind, summary, memory id, detail as JSON)."""
    p = backend.param
    backend.db.cursor().executemany(
        "INSERT INTO activity (session_id, seq, at, kind, summary, memory_id, detail) "
        f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})", rows)


def prompts_of_other_sessions(backend: "Backend", project_id: int, session_id: str, limit: int) -> list[tuple[str, str]]:
    """(session id, the prompt's log summary) of the project's other sessions, the newest `limit`
    first (`store.capture.said_again` reads what the user said before)."""
    p = backend.param
    return backend.db.execute_sql(
        "SELECT a.session_id, a.summary FROM activity AS a JOIN session AS s ON s.id = a.session_id "
        f"WHERE s.project_id = {p} AND a.session_id <> {p} AND a.kind = 'prompt' "
        f"ORDER BY a.at DESC, a.id DESC LIMIT {int(limit):d}", (project_id, session_id)).fetchall()
