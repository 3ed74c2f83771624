"""The PostgreSQL back-end (`store.backends.base.Backend`): a store on a server, by URL.

Full text is `memory.fts`, a weighted tsvector (title A, tags B, content C, identifier words D)
kept by a trigger, in a GIN index; FTS5's queries are parsed into tsquery and its BM25 computed
in SQL from the same term statistics (`store.backends.postgres_search`), so a ranking means the
same on both back-ends. Every change bumps the `memdeck_change` sequence (the data version) and
notifies the `memdeck` channel at commit (`listen`).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from store.backends import postgres, postgres_bulk, postgres_doctor, postgres_schema, postgres_search
from store.backends.base import Backend, Fragment, Weights, quote_fts_term
from store.backends.spelling import PostgresSpelling


# The schema version with the index of file refs' keys (`postgres_schema.FILE_REF_KEYS_FUNCTION`).
REF_KEYS_VERSION = 13
GLOB_CHARACTERS = frozenset("*?[")


class PostgresBackend(PostgresSpelling, Backend):
    name = "postgresql"
    reads_matches_in_order = False  # newest matches are found by testing rows newest first
    words_in_one_statement = True  # one round trip, not one a word
    ref_keys = True  # the store has `memdeck_ref_keys` and its index
    _may_index: bool | None = None  # `may_index`, once asked

    @classmethod
    def open(cls, location: Path | str, *, target_version: int) -> tuple["PostgresBackend", Path | None]:
        backend = cls(postgres.connect(str(location), target_version=target_version), str(location))
        backend.ref_keys = target_version >= REF_KEYS_VERSION
        return backend, None

    @classmethod
    def schema_version(cls, db) -> int:
        return postgres_schema.version(db)

    # -- full text -----------------------------------------------------------------------------------

    def fts_source(self, *, matches_first: bool = False) -> str:
        return "memory"

    @property
    def fts_table(self) -> str:
        return "memory"

    @property
    def fts_rowid(self) -> str:
        return "memory.rowid"

    def fts_match(self, query: str) -> Fragment:
        return Fragment("memory.fts @@ %s::tsquery", (postgres_search.parse_fts(query, self.db).tsquery,))

    def fts_rank(self, query: str, weights: Weights) -> Fragment:
        args = postgres_search.bm25_args(self.db, postgres_search.parse_fts(query, self.db), weights)
        return Fragment("memdeck_bm25(memory.fts, memory.doclen, %s::text[], %s::int[], %s::float8[], "
                        "%s::float8[], %s::float8)", tuple(args))

    def newest_matches(self, query: str, limit: int) -> list[int]:
        return postgres_search.newest_matches(self.db, query, limit)

    def memory_count(self) -> int:
        return postgres_search.corpus(self.db)[0]  # counted once per change of the store's text

    def project_size(self, project_id: int) -> int:
        return postgres_search.project_size(self.db, project_id)  # counted once per change of the text

    def word_matches(self, project_id: int, words: Sequence[str], cap: int) -> dict[str, set[str]] | None:
        postgres_search._stems(words, self.db)  # every word stemmed in one round trip, not one a word
        queries = [postgres_search.parse_fts(quote_fts_term(word), self.db) for word in words]
        found = postgres_search.word_matches(self.db, project_id, queries, cap)
        return None if found is None else dict(zip(words, found))

    def file_ref_candidates(self, paths: Sequence[str]) -> Fragment | None:
        # A ref covering a path (or a path inside the ref's folder) has a literal part that,
        # without trailing slashes, begins the path: one of the path's prefixes. A ref inside a
        # folder in play names that folder literally. (A path that is itself a glob: every ref.)
        # A B-tree orders equal keys by their row's place in the table (`ctid`). The keys alone
        # select, not the project: a planner without statistics (a store just copied) would walk
        # the project's memories with refs by confidence instead, computing each one's keys.
        if not self.ref_keys or any(GLOB_CHARACTERS & set(path) for path in paths):
            return None
        keys = {f"p:{path[:n]}" for path in paths for n in range(len(path) + 1)} | {f"d:{path}" for path in paths}
        return Fragment("SELECT memory.id, memory.project_id, memory.status, memory.confidence, memory.file_refs, "
                        "memory.ctid AS place FROM memory WHERE memory.file_refs != '[]' "
                        "AND memdeck_ref_keys(memory.file_refs) && %s::text[]", (sorted(keys),))

    def rebuild_full_text(self) -> None:
        self.db.execute_sql("UPDATE memory SET words = words")  # the trigger computes each tsvector again

    # -- writing many rows ----------------------------------------------------------------------------

    @contextmanager
    def writing_in_bulk(self, rows: int) -> Iterator[None]:
        with postgres_bulk.writing_in_bulk(self.db, rows):
            yield

    def insert_rows(self, table: str, columns: Sequence[str], rows) -> None:
        postgres_bulk.copy_rows(self.db, table, columns, rows)

    @property
    def new_rows_pending(self) -> bool:
        return not self.db.bulk_active

    def rows_copied(self, tables: Sequence[tuple[str, str]]) -> None:
        for table, column in tables:
            self.db._execute_cursor(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"GREATEST((SELECT max({column}) FROM {table}), 1))", ())
        # The memories vacuumed and analyzed once the copy commits, as after a large import
        # (`postgres_bulk`): until autovacuum came round, the first primes after a copy were
        # planned without statistics (a fetch of a few memories by id ANDed with a walk of the
        # project's index) and read rows no VACUUM had marked visible yet. A user who does not
        # own the table is skipped with a warning, not an error.
        if any(table == "memory" for table, _ in tables):
            self.db._vacuum_after_commit = ("VACUUM (SKIP_LOCKED, ANALYZE) memory",)

    # -- changes ---------------------------------------------------------------------------------------

    def data_version(self) -> int:
        return self.db._execute_cursor("SELECT memdeck_changes()", ()).fetchone()[0]

    def database_user(self) -> str | None:
        from store.backends.postgres_roles import team_user

        return team_user(self.db)

    def may_index(self) -> bool:
        # Asked once a connection: a role is not taken away from a session that holds it.
        if self._may_index is None:
            self._may_index = bool(self.db.execute_sql(
                "SELECT has_table_privilege('memory_pending', 'DELETE') "
                "AND has_column_privilege('memory', 'words', 'UPDATE')").fetchone()[0])
        return self._may_index

    def own_changes(self) -> int:
        return 0  # the server's change counter (`data_version`) moves with this connection's writes too

    def listen(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        return postgres.listen(str(self.location), on_change)

    # -- doctor ------------------------------------------------------------------------------------------

    @classmethod
    def doctor_check(cls, location: Path | str):
        return postgres_doctor.check(str(location))

    @classmethod
    def doctor_repair(cls, location: Path | str):
        return postgres_doctor.repair(str(location))

    @classmethod
    @contextmanager
    def scratch(cls, location: Path | str | None) -> Iterator[Path | str]:
        with postgres.temporary_database(str(location)) as url:
            yield url

