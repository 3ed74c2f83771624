"""The SQLite back-end (`store.backends.base.Backend`): a store in one file, its full text in an
FTS5 index (`store.backends.sqlite_schema`), its file checked and opened by
`store.backends.sqlite_file`, examined by `store.backends.sqlite_doctor`.
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from store.backends import sqlite_doctor
from store.backends.base import Backend, Fragment, Weights
from store.backends.spelling import SqliteSpelling
from store.backends.sqlite_file import connect_file
from store.backends.sqlite_schema import (  # noqa: F401 (re-exported: the tests check the index with them)
    FILE_REF_INDEX, FTS_DOCUMENTS_SQL, FTS_INTEGRITY_SQL, FTS_REBUILD_SQL, FTS_SCHEMA, PENDING_INSERT_TRIGGER,
    PRAGMAS,
)


def fts_rank_sql(title_weight: float, content_weight: float, tags_weight: float,
                 words_weight: float = 1.0) -> str:
    """BM25 rank expression (smaller is better, as SQLite returns it), title weighted highest."""
    return (f"bm25(memory_fts, {float(title_weight)}, {float(content_weight)}, {float(tags_weight)}, "
            f"{float(words_weight)})")


# A large import indexes its rows in one statement instead of row by row through the insert
# trigger (a fifth less CPU per memory): the trigger is dropped inside the import's transaction,
# the rows inserted, the new rows (rowids past `?`) added to the index, and the trigger made again.
# All of it is one transaction, so a failed import leaves the trigger as it was; no other
# process can write meanwhile (the import holds the write lock).
# The trigger that marks a new memory pending is dropped too: the bulk path writes the words (and
# vectors, or leaves them to `memdeck reindex`) itself (a tenth less CPU per memory).
FTS_SUSPEND_SQL = ["DROP TRIGGER memory_fts_insert", "DROP TRIGGER memory_text_added"]
FTS_RESUME_SQL = [
    "INSERT INTO memory_fts(rowid, title, content, tags, words) "
    "SELECT rowid, title, content, tags, words FROM memory WHERE rowid > ?",
    FTS_SCHEMA[1],
    PENDING_INSERT_TRIGGER,
]
# FTS5 gathers new terms in an in-memory hash and writes a segment whenever it passes `hashsize`
# (1 MiB by default), merging segments as they pile up. For a large import's one statement above
# the hash is 64 MiB: a few large segments instead of dozens of small ones to merge (a third less
# CPU for that statement at 100,000 memories, the prefix index making three entries of most
# words). The setting is FTS5's own, kept in `memory_fts_config`: `FTS_BULK_END_SQL` sets it back
# to the default, then removes its row, so the store is left as it was (and a failed import rolls
# it all back). `SqliteBackend.writing_in_bulk` runs these; PostgreSQL has no such index.
FTS_BULK_HASHSIZE = 64 << 20
FTS_DEFAULT_HASHSIZE = 1 << 20
FTS_BULK_START_SQL = [f"INSERT INTO memory_fts(memory_fts, rank) VALUES ('hashsize', {FTS_BULK_HASHSIZE})"]
FTS_BULK_END_SQL = [
    f"INSERT INTO memory_fts(memory_fts, rank) VALUES ('hashsize', {FTS_DEFAULT_HASHSIZE})",
    "DELETE FROM memory_fts_config WHERE k = 'hashsize'",
]
# A large import's page cache: at a million memories, its inserts into nine indexes of `memory`
# miss the usual 32 MB cache (a sixth more CPU per memory). Back to `PRAGMAS` afterwards.
BULK_PRAGMAS_SQL = ["PRAGMA cache_size = -262144"]
BULK_PRAGMAS_END_SQL = [f"PRAGMA cache_size = {PRAGMAS['cache_size']}"]
# How many memories the store holds (every project): BM25's corpus size. SQLite counts a b-tree's
# entries quickly; PostgreSQL's count(*) reads every row (60 ms at a million memories), so
# `store.backends.postgres_search.corpus` counts once per change of the store's text.
MEMORY_COUNT_SQL = "SELECT count(*) FROM memory"
# The highest rowid: rows inserted later have larger ones (no AUTOINCREMENT gaps matter here).
LAST_ROWID_SQL = "SELECT COALESCE(MAX(rowid), 0) FROM memory"


class SqliteBackend(SqliteSpelling, Backend):
    name = "sqlite"
    reads_matches_in_order = True  # FTS5 reads a query's matches backwards and stops at a limit

    @classmethod
    def open(cls, location: Path | str, *, target_version: int) -> tuple["SqliteBackend", Path | None]:
        db, backup = connect_file(location, target_version=target_version)
        return cls(db, location), backup

    @classmethod
    def schema_version(cls, db) -> int:
        return db.execute_sql("PRAGMA user_version").fetchone()[0]

    # -- full text -----------------------------------------------------------------------------------

    def fts_source(self, *, matches_first: bool = False) -> str:
        join = "CROSS JOIN" if matches_first else "JOIN"
        return f"memory_fts {join} memory ON memory.rowid = memory_fts.rowid"

    @property
    def fts_table(self) -> str:
        return "memory_fts"

    @property
    def fts_rowid(self) -> str:
        return "memory_fts.rowid"

    def fts_match(self, query: str) -> Fragment:
        return Fragment("memory_fts MATCH ?", (query,))

    def fts_rank(self, query: str, weights: Weights) -> Fragment:
        return Fragment(fts_rank_sql(*weights))

    def newest_matches(self, query: str, limit: int) -> list[int]:
        # One pass over the index: FTS5 reads its matches backwards and stops at `limit` (a
        # prefix without a prefix index is merged first, once).
        return [r[0] for r in self.db.execute_sql(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT ?", (query, limit))]

    def memory_count(self) -> int:
        return self.db.execute_sql(MEMORY_COUNT_SQL).fetchone()[0]

    def rebuild_full_text(self) -> None:
        self.db.execute_sql(FTS_REBUILD_SQL)

    # -- writing many rows ----------------------------------------------------------------------------

    @contextmanager
    def writing_in_bulk(self, rows: int) -> Iterator[None]:
        # FTS5's insert trigger suspended, the new rows indexed at the end with FTS5's larger
        # in-memory hash (`FTS_BULK_START_SQL`), and the page cache enlarged.
        db = self.db
        for statement in BULK_PRAGMAS_SQL:
            db.execute_sql(statement)
        try:
            last = db.execute_sql(LAST_ROWID_SQL).fetchone()[0]
            for statement in FTS_SUSPEND_SQL:
                db.execute_sql(statement)
            yield
            for statement in FTS_BULK_START_SQL:
                db.execute_sql(statement)
            db.execute_sql(FTS_RESUME_SQL[0], (last,))
            for statement in [*FTS_BULK_END_SQL, *FTS_RESUME_SQL[1:]]:
                db.execute_sql(statement)
        finally:
            for statement in BULK_PRAGMAS_END_SQL:
                db.execute_sql(statement)

    def insert_rows(self, table: str, columns: Sequence[str], rows) -> None:
        self.db.cursor().executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({self.marks(len(columns))})",
                                     list(rows))

    @property
    def new_rows_pending(self) -> bool:
        return True

    def rows_copied(self, tables: Sequence[tuple[str, str]]) -> None:
        pass  # an INTEGER PRIMARY KEY continues after the highest by itself

    # -- changes ---------------------------------------------------------------------------------------

    def data_version(self) -> int:
        return self.db.execute_sql("PRAGMA data_version").fetchone()[0]

    def own_changes(self) -> int:
        return self.db.connection().total_changes  # sqlite3's count of this connection's changes

    def listen(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        return None  # a view polls `data_version` (a read of shared memory)

    # -- doctor ------------------------------------------------------------------------------------------

    @classmethod
    def doctor_check(cls, location: Path | str):
        return sqlite_doctor.check(Path(location))

    @classmethod
    def doctor_repair(cls, location: Path | str):
        return sqlite_doctor.repair(Path(location))

    @classmethod
    @contextmanager
    def scratch(cls, location: Path | str | None) -> Iterator[Path | str]:
        with tempfile.TemporaryDirectory(prefix="memdeck-eval-") as folder:
            yield Path(folder) / "eval.db"

