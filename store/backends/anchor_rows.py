"""The SQL of anchors (`store.anchors.anchoring`, `store.anchors.verify`): the anchor table's
reads and writes, and the few reads and writes of the memory and project tables that anchoring
and checking make (a project's recorded root, a memory's project name and confidence, the
version raised when its anchors change or a check finds it holds).

Which anchors to store, drop or save a check for is decided above; only the statements are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from store.engine.rows import id_chunks

if TYPE_CHECKING:
    from store.engine.ports import Backend

# An anchor's columns in the order of `store.anchors.anchoring.Anchor`'s fields, which is built
# from each row as it is.
ANCHOR_COLUMNS = ("anchor.id, anchor.memory_id, anchor.path, anchor.start_line, anchor.end_line, "
                  "anchor.line_hash, anchor.snapshot, anchor.commit_id, anchor.blob_id, anchor.status, "
                  "anchor.checked_at, anchor.created_at, anchor.file_size, anchor.file_mtime_ns")


# -- reading anchors ------------------------------------------------------------------------------

def for_memories(backend: "Backend", memory_ids: Sequence[str]) -> list[tuple]:
    """The anchors (`ANCHOR_COLUMNS`) of these memories (ids given once each), in the order they
    were made within each slice of 500 ids."""
    found: list[tuple] = []
    for chunk, marks in id_chunks(memory_ids, backend.param):
        found += backend.db.execute_sql(
            f"SELECT {ANCHOR_COLUMNS} FROM anchor WHERE anchor.memory_id IN ({marks}) ORDER BY anchor.id",
            chunk).fetchall()
    return found


def in_project(backend: "Backend", project_id: int) -> list[tuple]:
    """The anchors (`ANCHOR_COLUMNS`) of a project's memories outside the trash, by memory id,
    each memory's in the order they were made."""
    p = backend.param
    return backend.db.execute_sql(
        f"SELECT {ANCHOR_COLUMNS} FROM anchor JOIN memory ON memory.id = anchor.memory_id "
        f"WHERE memory.project_id = {p} AND memory.status != 'deleted' ORDER BY anchor.memory_id, anchor.id",
        (project_id,)).fetchall()


def still_held(backend: "Backend", memory_id: str, anchor_ids: Sequence[int]) -> int:
    """How many of these anchors the memory still has."""
    p = backend.param
    return backend.db.execute_sql(
        f"SELECT COUNT(*) FROM anchor WHERE memory_id = {p} AND id IN ({', '.join([p] * len(anchor_ids))})",
        (memory_id, *anchor_ids)).fetchone()[0]


# -- writing anchors ------------------------------------------------------------------------------

def delete(backend: "Backend", anchor_ids: Sequence[int]) -> None:
    """Drop these anchors."""
    p = backend.param
    backend.db.execute_sql(f"DELETE FROM anchor WHERE id IN ({', '.join([p] * len(anchor_ids))})",
                           list(anchor_ids))


def add(backend: "Backend", memory_id: str, path: str, start: int | None, end: int | None, line_hash: str,
        snapshot: str, commit: str | None, blob: str | None, file_size: int, file_mtime_ns: int,
        at: float) -> None:
    """A new anchor of the memory, made at `at` and fresh as checked then."""
    p = backend.param
    backend.db.execute_sql(
        "INSERT INTO anchor (memory_id, path, start_line, end_line, line_hash, snapshot, commit_id, "
        "blob_id, status, checked_at, file_size, file_mtime_ns, created_at) "
        f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, 'fresh', {p}, {p}, {p}, {p})",
        (memory_id, path, start, end, line_hash, snapshot, commit, blob, at, file_size, file_mtime_ns, at))


def save_check(backend: "Backend", anchor_id: int, status: str, path: str, start: int | None, end: int | None,
               checked_at: float, file_size: int | None, file_mtime_ns: int | None) -> None:
    """An anchor's check: its status, where its lines are now, and its file's stamp."""
    p = backend.param
    backend.db.execute_sql(
        f"UPDATE anchor SET status = {p}, path = {p}, start_line = {p}, end_line = {p}, checked_at = {p}, "
        f"file_size = {p}, file_mtime_ns = {p} WHERE id = {p}",
        (status, path, start, end, checked_at, file_size, file_mtime_ns, anchor_id))


# -- the memory and project tables, as anchors need them ----------------------------------------------

def project_root(backend: "Backend", name: str) -> str | None:
    """The root recorded for the project of this name (None: none recorded, or no such project)."""
    row = backend.db.execute_sql(f"SELECT root FROM project WHERE name = {backend.param}", (name,)).fetchone()
    return row[0] if row else None


def project_names(backend: "Backend", memory_ids: Sequence[str]) -> dict[str, str]:
    """Each of these memories' project name, by memory id (those that exist)."""
    found: dict[str, str] = {}
    for chunk, marks in id_chunks(memory_ids, backend.param):
        found.update(backend.db.execute_sql(
            "SELECT memory.id, project.name FROM memory JOIN project ON project.id = memory.project_id "
            f"WHERE memory.id IN ({marks})", chunk).fetchall())
    return found


def confidence(backend: "Backend", memory_id: str) -> float:
    """The memory's confidence as stored now."""
    return backend.db.execute_sql(f"SELECT confidence FROM memory WHERE id = {backend.param}",
                                  (memory_id,)).fetchone()[0]


def memory_anchored(backend: "Backend", memory_id: str, at: float) -> None:
    """The memory's anchors changed at `at`: its version raised, and it was updated then."""
    p = backend.param
    backend.db.execute_sql(f"UPDATE memory SET version = version + 1, updated_at = {p} WHERE id = {p}",
                           (at, memory_id))


def memory_verified(backend: "Backend", memory_id: str, at: float) -> None:
    """A check found the memory holds at `at`: its `verified_at`, and its version raised."""
    p = backend.param
    backend.db.execute_sql(f"UPDATE memory SET verified_at = {p}, version = version + 1 WHERE id = {p}",
                           (at, memory_id))
