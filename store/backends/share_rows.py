"""The SQL of `memdeck share` (`store.interop.sharing`): a memory's row and its anchors read from
the own store, and written into the team store as they were read.

Which columns go (an import's columns of a memory, an anchor's that are not the sharer's
checkout's) and what changes on the way (project, status, owner, meta) are the share's; the
columns arrive here as arguments, names of the schema's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from store.engine.ports import Backend


def memory_row(backend: "Backend", memory_id: str, columns: Sequence[str]) -> tuple | None:
    """`columns` of the memory's row, as stored (None: no such memory)."""
    return backend.db.execute_sql(f"SELECT {', '.join(columns)} FROM memory WHERE id = {backend.param}",
                                  (memory_id,)).fetchone()


def insert_memory(backend: "Backend", columns: Sequence[str], row: Sequence, words: str) -> None:
    """A memory's row (values in `columns` order) with its identifier words: written already, so
    it does not wait to be indexed."""
    p = backend.param
    backend.db.execute_sql(
        f"INSERT INTO memory ({', '.join(columns)}, words) VALUES ({', '.join([p] * (len(row) + 1))})", (*row, words))
    backend.db.execute_sql(f"DELETE FROM memory_pending WHERE memory_id = {p}", (row[columns.index("id")],))


def anchors(backend: "Backend", memory_id: str, columns: Sequence[str]) -> list[tuple]:
    """`columns` of the memory's anchors, oldest first."""
    return backend.db.execute_sql(
        f"SELECT {', '.join(columns)} FROM anchor WHERE memory_id = {backend.param} ORDER BY id",
        (memory_id,)).fetchall()


def insert_anchors(backend: "Backend", memory_id: str, columns: Sequence[str], rows: Sequence[tuple]) -> None:
    """Anchors of the memory, each row's values in `columns` order."""
    p = backend.param
    for row in rows:
        backend.db.execute_sql(
            f"INSERT INTO anchor (memory_id, {', '.join(columns)}) VALUES ({', '.join([p] * (len(row) + 1))})",
            (memory_id, *row))
