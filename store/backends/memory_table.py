"""The SQL of the memory, project and event tables, as the Store and its collaborators ask for it
(`store.backend.memory_table`; the engine names what it needs in `store.engine.ports.MemoryTable`).

Each method is one statement, in the back-end's own spelling: the rules (what may change, which
event a write records) stay in the engine, and only the SQL lives here. Plain SQL rather than
the Peewee models: these are the hot paths of bulk adds and of every prime, and a layer's store
(the team store) is read through them while the models are bound to the person's own.
"""

from __future__ import annotations

import json
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Sequence

from store.engine.records import Memory
from store.engine.rows import id_chunks

if TYPE_CHECKING:
    from store.engine.ports import Backend

# The columns read into a `Memory`, in the order of its fields (`records.Memory` says them once);
# reads select exactly these for speed. Two are not the memory's own columns: its project's name,
# and the worst status of its anchors' last check (None without anchors: the stale badge).
_SELECTED = {
    "project": "project.name",
    "anchor_status": "(SELECT anchor.status FROM anchor WHERE anchor.memory_id = memory.id ORDER BY CASE "
                     "anchor.status WHEN 'missing' THEN 3 WHEN 'changed' THEN 2 WHEN 'moved' THEN 1 ELSE 0 END "
                     "DESC LIMIT 1)",
}
# The layer is no column: the store it was read from (store.layers.layers) says it.
MEMORY_COLUMNS = tuple(_SELECTED.get(f.name, f"memory.{f.name}") for f in fields(Memory) if f.name != "layer")
MEMORY_COLUMNS_SQL = ", ".join(MEMORY_COLUMNS)
MEMORY_SELECT = f"SELECT {MEMORY_COLUMNS_SQL} FROM memory JOIN project ON project.id = memory.project_id"
_EVENT_COLUMNS = "id, memory_id, kind, at, actor, session_id, confidence_before, confidence_after, detail, author"


class MemoryTable:
    """The memory, project and event tables of one store."""

    def __init__(self, backend: "Backend") -> None:
        self.backend = backend
        self.db = backend.db
        self.p = backend.param

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple]:
        return self.db.execute_sql(sql, tuple(args)).fetchall()

    # -- projects --------------------------------------------------------------------------

    def project_id(self, name: str) -> int | None:
        found = self.db.execute_sql(f"SELECT id FROM project WHERE name = {self.p}", (name,)).fetchone()
        return None if found is None else found[0]

    def add_project(self, name: str, root: str | None, created_at: float) -> None:
        """The project, unless another writer added it first."""
        self.db.execute_sql(self.backend.insert_ignore("project", ("name", "root", "created_at")),
                            (name, root, created_at))

    def projects(self) -> list[tuple]:
        """(id, name, root, created_at, memories outside the trash) of every project, by name."""
        return self._all(
            "SELECT project.id, project.name, project.root, project.created_at, "
            "(SELECT COUNT(*) FROM memory WHERE memory.project_id = project.id "
            " AND memory.status != 'deleted') FROM project ORDER BY project.name")

    # -- reading memories ------------------------------------------------------------------

    def row(self, memory_id: str) -> tuple | None:
        return self.db.execute_sql(MEMORY_SELECT + f" WHERE memory.id = {self.p}", (memory_id,)).fetchone()

    def rows(self, memory_ids: Sequence[str]) -> list[tuple]:
        """The rows of the memories with these ids that exist, in slices a statement can take."""
        found: list[tuple] = []
        for chunk, marks in id_chunks(list(memory_ids), self.p):
            found += self._all(MEMORY_SELECT + f" WHERE memory.id IN ({marks})", chunk)
        return found

    def exists(self, memory_id: str) -> bool:
        return self.db.execute_sql(f"SELECT 1 FROM memory WHERE id = {self.p}", (memory_id,)).fetchone() is not None

    def recent_titles(self, project_id: int, limit: int) -> list[tuple[str, str]]:
        """(id, title) outside the trash, most recently changed first."""
        p = self.p
        return self._all(f"SELECT memory.id, memory.title FROM memory WHERE memory.project_id = {p} "
                         f"AND memory.status != 'deleted' ORDER BY memory.updated_at DESC, memory.created_at DESC, memory.id "
                         f"LIMIT {p}",
                         (project_id, limit))

    def in_statuses(self, project_id: int, statuses: Sequence[str]) -> list[tuple]:
        """The project's memories of these statuses, oldest first."""
        return self._all(MEMORY_SELECT + f" WHERE memory.project_id = {self.p} AND memory.status IN "
                         f"({self.backend.marks(len(statuses))}) ORDER BY memory.created_at, memory.id",
                         (project_id, *statuses))

    def in_trash(self, project_id: int) -> list[tuple]:
        """The project's deleted memories, most recently deleted first."""
        return self._all(MEMORY_SELECT + f" WHERE memory.project_id = {self.p} AND memory.status = 'deleted' "
                         "ORDER BY memory.status_changed_at DESC", (project_id,))

    def same_text(self, project_id: int, text_hash: str, type: str, scope: str | None) -> str | None:
        """An active or pending memory of the project, type and scope with this content hash."""
        p = self.p
        same_scope, scope_args = self._scope(scope)
        found = self.db.execute_sql(
            f"SELECT id FROM memory WHERE project_id = {p} AND content_hash = {p} AND type = {p} "
            f"AND {same_scope} AND status IN ('active', 'pending') LIMIT 1",
            (project_id, text_hash, type) + scope_args).fetchone()
        return None if found is None else found[0]

    def related(self, project_id: int, type: str, scope: str | None, query: str, limit: int) -> list[tuple[str, str]]:
        """(id, content) of active or pending memories of the project, type and scope that the
        full-text `query` matches. The match first (SQLite would otherwise walk every memory of
        the type and probe the index for each); no ranking: BM25 costs more than comparing the
        few candidates that pass the filter."""
        p = self.p
        same_scope, scope_args = self._scope(scope)
        match = self.backend.fts_match(query)
        return self._all(
            f"SELECT memory.id, memory.content FROM {self.backend.fts_source(matches_first=True)} "
            f"WHERE {match.sql} AND memory.project_id = {p} AND memory.type = {p} AND {same_scope} "
            f"AND memory.status IN ('active', 'pending') LIMIT {p}",
            (*match.params, project_id, type) + scope_args + (limit,))

    def _scope(self, scope: str | None) -> tuple[str, tuple]:
        return ("memory.scope IS NULL", ()) if scope is None else (f"memory.scope = {self.p}", (scope,))

    def news_since(self, project_id: int, since: float, kinds: Sequence[str], session_id: str) -> set[str]:
        """Ids of the project's memories with an event of these kinds since a time, recorded by
        a session other than `session_id` (or by none)."""
        p = self.p
        rows = self._all(
            "SELECT DISTINCT event.memory_id FROM event JOIN memory ON memory.id = event.memory_id "
            f"WHERE event.at >= {p} AND event.kind IN ({self.backend.marks(len(kinds))}) AND memory.project_id = {p} "
            f"AND (event.session_id IS NULL OR event.session_id != {p})",
            (since, *kinds, project_id, session_id))
        return {row[0] for row in rows}

    def personal_ids(self, scope: str, owner: str, other_than_project: int, limit: int) -> list[str]:
        """Ids of an owner's active memories of a scope kept in other projects, most confident first."""
        p = self.p
        rows = self._all(
            f"SELECT id FROM memory WHERE scope = {p} AND owner = {p} AND status = 'active' AND project_id != {p} "
            f"ORDER BY owner, confidence DESC LIMIT {p}", (scope, owner, other_than_project, limit))
        return [r[0] for r in rows]

    def project_ids(self, memory_ids: Sequence[str]) -> list[tuple[str, int]]:
        """(id, project id) of the memories with these ids that exist."""
        return self._all(f"SELECT id, project_id FROM memory WHERE id IN ({self.backend.marks(len(memory_ids))})",
                         tuple(memory_ids))

    def count(self) -> int:
        """Every memory of every project, the trash included."""
        return self.db.execute_sql("SELECT count(*) FROM memory").fetchone()[0]

    def decay_inputs(self, project_id: int | None) -> list[tuple]:
        """(id, confidence, created_at, updated_at, last_used_at, verified_at, decayed_at, status,
        project_id) of the unprotected active and inactive memories of a project (of all with None)."""
        sql = ("SELECT id, confidence, created_at, updated_at, last_used_at, verified_at, decayed_at, status, "
               "project_id "
               "FROM memory WHERE status IN ('active', 'inactive') AND protected = 0")
        if project_id is None:
            return self._all(sql)
        return self._all(sql + f" AND project_id = {self.p}", (project_id,))

    def cleanup_candidates(self, project_id: int, below: float, unchanged_since: float) -> list[tuple]:
        """Inactive or deleted memories never used nor protected, below a confidence, unchanged
        (status or text) since a time."""
        p = self.p
        return self._all(
            MEMORY_SELECT + f" WHERE memory.project_id = {p} AND memory.status IN ('inactive', 'deleted') "
            f"AND memory.use_count = 0 AND memory.protected = 0 AND memory.confidence < {p} "
            f"AND memory.status_changed_at < {p} AND memory.updated_at < {p} ORDER BY memory.id",
            (project_id, below, unchanged_since, unchanged_since))

    def learned_in_sessions(self) -> list[tuple]:
        """(session_id, id, type, title, created_at) of every memory a session learned, in time order."""
        return self._all("SELECT session_id, id, type, title, created_at FROM memory WHERE session_id IS NOT NULL "
                         "ORDER BY created_at, id")

    def blame(self, project_id: int, change_kinds: Sequence[str], include_deleted: bool) -> list[tuple]:
        """(id, title, status, owner, created_at, first event's author, last change's author, at
        and kind) of the project's memories, oldest first."""
        p = self.p
        kinds = ", ".join([p] * len(change_kinds))
        return self._all(
            "SELECT memory.id, memory.title, memory.status, memory.owner, memory.created_at, "
            "(SELECT event.author FROM event WHERE event.memory_id = memory.id ORDER BY event.id LIMIT 1), "
            f"last.author, last.at, last.kind FROM memory LEFT JOIN event AS last ON last.id = ("
            f"SELECT max(event.id) FROM event WHERE event.memory_id = memory.id AND event.kind IN ({kinds})) "
            f"WHERE memory.project_id = {p}" + ("" if include_deleted else " AND memory.status != 'deleted'")
            + " ORDER BY memory.created_at, memory.id",
            (*change_kinds, project_id))

    # -- writing memories ------------------------------------------------------------------

    def insert(self, columns: dict[str, Any]) -> None:
        p = self.p
        self.db.execute_sql(f"INSERT INTO memory ({', '.join(columns)}) VALUES ({', '.join([p] * len(columns))})",
                            tuple(columns.values()))

    def update_at_version(self, memory_id: str, version: int, changes: dict[str, Any]) -> bool:
        """Write `changes` only if the memory is still at `version` (a compare-and-set on a store
        whose writers do not all hold one lock: PostgreSQL); whether it was written."""
        p = self.p
        assignments = ", ".join(f"{name} = {p}" for name in changes)
        cursor = self.db.execute_sql(
            f"UPDATE memory SET {assignments}, version = version + 1 WHERE id = {p} AND version = {p}",
            (*changes.values(), memory_id, version))
        return cursor.rowcount == 1

    def update(self, memory_id: str, changes: dict[str, Any]) -> None:
        """Write `changes`, planned under the write lock by the caller."""
        p = self.p
        sets = ", ".join(f"{column} = {p}" for column in changes)
        self.db.execute_sql(f"UPDATE memory SET {sets}, version = version + 1 WHERE id = {p}",
                            (*changes.values(), memory_id))

    def record_use(self, memory_id: str, at: float, confidence: float) -> None:
        """Used once more: the count goes up in the statement, so two members at once both count."""
        p = self.p
        self.db.execute_sql(
            f"UPDATE memory SET use_count = use_count + 1, last_used_at = {p}, confidence = {p}, "
            f"decayed_at = NULL, version = version + 1 WHERE id = {p}", (at, confidence, memory_id))

    # -- events ----------------------------------------------------------------------------

    def events(self, memory_id: str) -> list[tuple]:
        """A memory's events, in the order recorded."""
        return self._all(f"SELECT {_EVENT_COLUMNS} FROM event WHERE memory_id = {self.p} ORDER BY id", (memory_id,))

    def add_event(self, memory_id: str, kind: str, at: float, actor: str, session_id: str | None,
                  before: float | None, after: float | None, detail: dict[str, Any], author: str) -> None:
        p = self.p
        self.db.execute_sql(
            "INSERT INTO event (memory_id, kind, at, actor, session_id, confidence_before, "
            f"confidence_after, detail, author) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})",
            (memory_id, kind, at, actor, session_id, before, after, json.dumps(detail, ensure_ascii=False), author))
