"""The SQL of the index's bookkeeping (`store.index.reindex`): the memories waiting to be indexed
(`memory_pending`, filled by triggers on every write), their identifier words, and the count of
memories without a vector from the current model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from store.backends.vectors import has_vector_sql

if TYPE_CHECKING:
    from store.engine.ports import Backend


def pending(backend: "Backend", limit: int) -> list[tuple]:
    """(id, project id, title, content, tags) of up to `limit` memories waiting to be indexed."""
    return backend.db.execute_sql(
        "SELECT memory.id, memory.project_id, title, content, tags FROM memory_pending "
        f"JOIN memory ON memory.id = memory_pending.memory_id LIMIT {backend.param}", (limit,)).fetchall()


def write_words(backend: "Backend", words: Sequence[tuple[str, str]]) -> None:
    """Each (words, memory id): the memory's identifier words, and it is no longer waiting."""
    p = backend.param
    backend.db.cursor().executemany(f"UPDATE memory SET words = {p} WHERE id = {p}", words)
    backend.db.cursor().executemany(f"DELETE FROM memory_pending WHERE memory_id = {p}",
                                    [(memory_id,) for _, memory_id in words])


def indexed(backend: "Backend", memory_ids: Sequence[str]) -> None:
    """These memories' words are written already: they no longer wait to be indexed."""
    backend.db.cursor().executemany(f"DELETE FROM memory_pending WHERE memory_id = {backend.param}",
                                    [(memory_id,) for memory_id in memory_ids])


def without_vector(backend: "Backend", model: str) -> int:
    """How many memories have no vector made by `model`."""
    p = backend.param
    return backend.db.execute_sql(f"SELECT count(*) FROM memory WHERE NOT {has_vector_sql(p)}", (model,)).fetchone()[0]


def all_pending(backend: "Backend") -> None:
    """Every memory waits to be indexed again."""
    backend.db.execute_sql(backend.insert_ignore("memory_pending", ("memory_id",), "SELECT id FROM memory"))
