"""The SQL of an import (`store.interop.importer`) beyond its bulk insert of new memories
(`store.interop.import_writes`): a memory's anchors as a file gives them, and the sessions and
activities a memdeck export carries.

Which rows are new and what is written of them are the importer's; a memory known by its id is
updated through `memory_table.update`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from store.engine.ports import Backend

_ANCHOR_COLUMNS = ("memory_id", "path", "start_line", "end_line", "line_hash", "snapshot", "commit_id", "blob_id",
                   "status", "checked_at", "created_at")
_SESSION_COLUMNS = ("id", "project_id", "agent", "hat", "task", "started_at", "ended_at", "source_path",
                    "files_touched", "meta")
_ACTIVITY_COLUMNS = ("session_id", "seq", "at", "kind", "summary", "memory_id", "detail")


def anchor_places(backend: "Backend", memory_id: str) -> list[tuple]:
    """(path, start line, end line) of each of the memory's anchors."""
    return [tuple(r) for r in backend.db.execute_sql(
        f"SELECT path, start_line, end_line FROM anchor WHERE memory_id = {backend.param}", (memory_id,))]


def add_anchor(backend: "Backend", values: Sequence) -> None:
    """An anchor: (memory id, path, start line, end line, line hash, snapshot, commit, blob,
    status, checked at, created at)."""
    p = backend.param
    backend.db.execute_sql(
        f"INSERT INTO anchor ({', '.join(_ANCHOR_COLUMNS)}) VALUES ({', '.join([p] * len(_ANCHOR_COLUMNS))})",
        tuple(values))


def has_session(backend: "Backend", session_id: str) -> bool:
    """Whether the store holds the session."""
    return bool(backend.db.execute_sql(f"SELECT 1 FROM session WHERE id = {backend.param}", (session_id,)).fetchone())


def add_session(backend: "Backend", values: Sequence) -> None:
    """A session: (id, project id, agent, hat, task, started at, ended at, source path, files
    touched as JSON, meta as JSON)."""
    p = backend.param
    backend.db.execute_sql(
        f"INSERT INTO session ({', '.join(_SESSION_COLUMNS)}) VALUES ({', '.join([p] * len(_SESSION_COLUMNS))})",
        tuple(values))


def activity_count(backend: "Backend", session_id: str) -> int:
    """How many activities the session's log holds."""
    return backend.db.execute_sql(f"SELECT COUNT(*) FROM activity WHERE session_id = {backend.param}",
                                  (session_id,)).fetchone()[0]


def add_activities(backend: "Backend", rows: Sequence[tuple]) -> None:
    """Activities, each (session id, seq, at, kind, summary, memory id, detail as JSON), but
    those whose session and seq the log holds already."""
    backend.db.cursor().executemany(backend.insert_ignore("activity", _ACTIVITY_COLUMNS), rows)
