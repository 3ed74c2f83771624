"""The bulk write path: many new memories (and their events) inserted with one prepared statement
each, inside the caller's transaction, already carrying their identifier words.

`Store.add` and an import used to insert a memory, let the triggers index its text in FTS5, and
then (in `store.index.reindex.index_pending`) compute its identifier words and `UPDATE` them in: FTS5
indexed every memory's text twice and deleted it once. Here the words are computed before the
insert, so the full-text index takes each memory once, and the rows leave `memory_pending` at
once. Vectors (the semantic extra) are embedded in the same pass, except for an import of
`DEFER_VECTORS_FROM` memories or more: those are left for `memdeck reindex`, which the import's
summary says (embedding a million memories is minutes of CPU the import should not hold the write
lock for).

How the rows go in and how the full-text index takes them is the back-end's
(`Backend.insert_rows`, `Backend.writing_in_bulk`): prepared INSERTs and FTS5's index built at
the end on SQLite, COPY on PostgreSQL.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from store.engine.models import MemoryRow
from store.index import embedding
from store.index.identifiers import index_words
from store.backends import index_rows

# What an import writes of a memory: every column of the model but its version (a new row's is 1)
# and its identifier words (computed here).
MEMORY_INSERT_COLUMNS = tuple(f.column_name for f in MemoryRow._meta.sorted_fields if f.name not in ("version", "words"))
EVENT_INSERT_COLUMNS = ("memory_id", "kind", "at", "actor", "session_id", "confidence_before",
                        "confidence_after", "detail", "author")
# Rows handed to SQLite per `executemany`: bounds the memory a large import holds at once.
CHUNK = 5_000
# From this many memories in one import, vectors are left for `memdeck reindex`.
DEFER_VECTORS_FROM = 50_000
# From this many, the full-text index takes the new rows in one statement at the end
# (`store.backends.sqlite.FTS_SUSPEND_SQL`); below, dropping and making a trigger costs more than it saves.
FTS_AT_END_FROM = 5_000

_ID, _PROJECT, _TITLE, _CONTENT, _TAGS = (MEMORY_INSERT_COLUMNS.index(c)
                                          for c in ("id", "project_id", "title", "content", "tags"))


@contextmanager
def writing_in_bulk(store, rows: int) -> Iterator[None]:
    """Inside the caller's transaction, when `rows` (how many new memories the caller expects)
    is `FTS_AT_END_FROM` or more: memories inserted in the block are added to the full-text
    index when it ends, in one statement, and the connection has a larger page cache meanwhile.
    Nothing in the block may search the full text for them; an error in the block leaves the
    transaction to be rolled back, trigger and all."""
    if rows < FTS_AT_END_FROM:
        yield
        return
    with store.backend.writing_in_bulk(rows):
        yield


def insert_memories(store, rows: Sequence[tuple], events: Sequence[tuple], *, vectors: bool = True) -> None:
    """Insert `rows` (values in `MEMORY_INSERT_COLUMNS` order, ids not in the store) and `events`
    (in `EVENT_INSERT_COLUMNS` order) within the caller's transaction. With `vectors` and the
    semantic extra installed, their vectors are written too; without, they are left missing for
    `memdeck reindex` (`store.index.reindex.stale_vectors` counts them)."""
    backend = store.backend
    model = embedding.model_id() if vectors else None
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start:start + CHUNK]
        worded = ((*row, index_words(row[_TITLE], row[_CONTENT], row[_TAGS])) for row in chunk)
        backend.insert_rows("memory", (*MEMORY_INSERT_COLUMNS, "words"), worded)
        if model is not None:
            from store.index.reindex import write_vectors

            write_vectors(store, [(r[_ID], r[_PROJECT], r[_TITLE], r[_CONTENT], r[_TAGS]) for r in chunk], model)
        # The insert trigger marked them pending (unless a large import on PostgreSQL disabled
        # it); their words are in already.
        if backend.new_rows_pending:
            index_rows.indexed(backend, [row[_ID] for row in chunk])
    for start in range(0, len(events), CHUNK):
        backend.insert_rows("event", EVENT_INSERT_COLUMNS, events[start:start + CHUNK])
