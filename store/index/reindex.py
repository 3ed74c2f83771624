"""What the store derives from a memory's text in Python: the identifier words of the full-text
index (`memory.words`) and the embedding vector of the semantic extra (`store.backends.vectors`).

A memory in `memory_pending` is still to be indexed: a new one, one whose text changed (triggers
put it there, whoever wrote it), or every memory after the migration that introduced them.
`index_pending` indexes those, and runs after every write of the store. `reindex` (the `memdeck
reindex` command) rebuilds the index and brings every vector up to the current model: after
installing the extra or after a model change, since a vector made by another model is never
compared with the task's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from store.index import embedding
from store.index.identifiers import index_words
from store.backends.vectors import drop_other_models, has_vector_sql, put

BATCH = 256


@dataclass(frozen=True)
class ReindexResult:
    indexed: int  # memories whose identifier words were written
    embedded: int  # vectors written
    model: str | None  # None: the semantic extra is not installed


def _write(store, rows: Sequence[tuple], model: str | None) -> int:
    """Words (and, with the extra, vectors) for rows of (id, project id, title, content, tags)."""
    p = store.backend.param
    store.db.cursor().executemany(f"UPDATE memory SET words = {p} WHERE id = {p}",
                                  [(index_words(title, content, tags), memory_id)
                                   for memory_id, _, title, content, tags in rows])
    store.db.cursor().executemany(f"DELETE FROM memory_pending WHERE memory_id = {p}", [(row[0],) for row in rows])
    if model is None:
        return 0
    return write_vectors(store, rows, model)


def write_vectors(store, rows: Sequence[tuple], model: str) -> int:
    """The vectors of rows of (id, project id, title, content, tags), made by `model`."""
    vectors = embedding.embedder().embed([embedding.memory_text(t, c, g) for _, _, t, c, g in rows])
    put(store.db, [(row[0], row[1], model, embedding.to_blob(vector)) for row, vector in zip(rows, vectors)])
    return len(rows)


def index_pending(store) -> int:
    """Index every pending memory; how many there were."""
    p = store.backend.param
    model = embedding.model_id()
    done = 0
    while True:
        with store.transaction():
            rows = store.db.execute_sql(
                "SELECT memory.id, memory.project_id, title, content, tags FROM memory_pending "
                f"JOIN memory ON memory.id = memory_pending.memory_id LIMIT {p}", (BATCH,)).fetchall()
            if not rows:
                return done
            _write(store, rows, model)
        done += len(rows)


def stale_vectors(store) -> int:
    """Memories with no vector from the current model (all of them without the extra)."""
    p = store.backend.param
    return store.db.execute_sql(f"SELECT count(*) FROM memory WHERE NOT {has_vector_sql(p)}",
                                (embedding.model_id() or "",)).fetchone()[0]


def reindex(store) -> ReindexResult:
    """Every memory's words again, the full-text index rebuilt, and a vector from the current
    model for every memory that lacks one."""
    model = embedding.model_id()
    with store.transaction():
        store.db.execute_sql(store.backend.insert_ignore("memory_pending", ("memory_id",), "SELECT id FROM memory"))
    indexed = index_pending(store)  # words and vectors for every memory
    with store.transaction():
        drop_other_models(store.db, model)
        store.backend.rebuild_full_text()
    return ReindexResult(indexed, indexed if model else 0, model)
