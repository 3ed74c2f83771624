"""The one interface a store's back-end offers (`store.backends.sqlite.SqliteBackend`,
`store.backends.postgres.PostgresBackend`): everything that is not the same SQL on both.

The rest of memdeck writes plain SQL and asks `store.backend` for what differs, by name:
parameter marks (`param`, `marks`), the full-text match and its BM25 rank (SQL fragments with
their own parameters, which the caller composes), a query's newest matches, bulk writes, the
data version a view watches, live change notices, doctor's checks, the schema's migrations, and
the small differences of spelling (case-insensitive order, globs, GREATEST/LEAST, JSON array
elements, insert-or-ignore, a new row's id, booleans, a truncating cast).

No SQL is rewritten on its way to the server: a fragment is each back-end's own SQL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Sequence

# Re-exported: the values the engine's interface (`store.engine.ports`) speaks in, and memdeck's
# full-text query language, which is the engine's (`store.engine.text`).
from store.backends.memory_table import MemoryTable
from store.backends.session_table import SessionTable
from store.engine.ports import Fragment, Weights
from store.engine.text import quote_fts_term  # noqa: F401


class Spelling(ABC):
    """The SQL that is spelt differently on each back-end and needs no connection: parameter marks
    and the small differences (case-insensitive order, globs, GREATEST/LEAST, JSON array elements,
    insert-or-ignore, a new row's id, booleans, a truncating cast). `Backend` has all
    of it; `spelling_of(db)` gives it for a bare connection (a migration's data step)."""

    param: ClassVar[str]  # the parameter mark: "?" or "%s"
    true: ClassVar[str]  # a condition that holds
    false: ClassVar[str]  # one that does not
    empty_blob: ClassVar[str]  # an empty binary value

    # -- parameters ----------------------------------------------------------------------------------

    def marks(self, count: int) -> str:
        """`count` parameter marks, comma-separated (an `IN (...)` list, a VALUES row)."""
        return ", ".join([self.param] * count)

    def fmt(self, sql: str) -> str:
        """`sql` written with `{p}` for each parameter, in this back-end's mark (braces for a
        literal are doubled, as `str.format` wants them)."""
        return sql.format(p=self.param)

    @abstractmethod
    def in_integers(self, expr: str, values: Sequence[int]) -> Fragment:
        """The condition that `expr` is one of `values` (integers: a list of rowids, thousands long)."""

    @abstractmethod
    def nocase(self, expr: str) -> str:
        """`expr` for a case-insensitive comparison or order."""

    @abstractmethod
    def glob(self, subject: str, pattern: str) -> str:
        """The condition that `subject` matches the glob `pattern` (* any run, ? one character)."""

    @abstractmethod
    def greatest(self, *exprs: str) -> str:
        """The largest of several values (none NULL)."""

    @abstractmethod
    def least(self, *exprs: str) -> str:
        """The smallest of several values (none NULL)."""

    @abstractmethod
    def json_elements(self, expr: str, alias: str) -> str:
        """A table expression (after FROM) of the elements of the JSON array `expr`, as text, in
        a column `value` of `alias`."""

    @abstractmethod
    def trunc_int(self, expr: str) -> str:
        """`expr` cast to an integer, truncated toward zero."""

    @abstractmethod
    def count_true(self, condition: str) -> str:
        """How many rows `condition` holds for (an aggregate)."""

    @abstractmethod
    def unindexed(self, table: str) -> str:
        """`table` after FROM, looked up by rowid rather than walked by one of its indexes."""

    @property
    @abstractmethod
    def fixed_join(self) -> str:
        """A JOIN that keeps the tables in the order written."""

    @abstractmethod
    def insert_ignore(self, table: str, columns: Sequence[str], values: str | None = None) -> str:
        """INSERT of `columns` that skips a row whose key is taken. `values`: the rows' source (a
        SELECT, or a VALUES row); one row of parameters by default."""


    @abstractmethod
    def insert_returning_id(self, table: str, columns: Sequence[str], values: str) -> str:
        """INSERT of one row whose new `id` `inserted_id` reads."""

    @abstractmethod
    def inserted_id(self, cursor) -> int:
        """The new id of the row `insert_returning_id`'s statement inserted."""


class Backend(Spelling):
    """An open store's database and what its SQL needs. `db` is the Peewee database the models
    are bound to; `location` the path or URL it was opened by. Writers take turns on both: every
    transaction (`db.atomic()`) takes the store's write lock first (SQLite's at `BEGIN
    IMMEDIATE`, an advisory lock on PostgreSQL), so a write that reads first sees every write
    before it; reads outside a transaction never wait."""

    name: ClassVar[str]  # "sqlite" or "postgresql"
    # Whether a query's newest matches come from the full-text index in order, cheaply (FTS5),
    # rather than by testing rows newest first (`store.browse.paging.head_matches`).
    reads_matches_in_order: ClassVar[bool]
    # Whether a prime's task words are searched in one statement (a branch a word) rather than
    # one statement a word (`store.retrieval.ranking.word_hits`): whichever this back-end answers faster.
    words_in_one_statement: ClassVar[bool] = False

    def __init__(self, db: Any, location: Path | str) -> None:
        self.db = db
        self.location = location
        # The tables' SQL the engine asks for (`store.engine.ports`), in this back-end's spelling.
        self.memory_table = MemoryTable(self)
        self.session_table = SessionTable(self)

    # -- opening -----------------------------------------------------------------------------------

    @classmethod
    @abstractmethod
    def open(cls, location: Path | str, *, target_version: int) -> tuple["Backend", Path | None]:
        """Open (creating if needed) the store at `location`, migrated to `target_version`: the
        back-end and the path of the backup made before migrating, if one was."""

    @classmethod
    @abstractmethod
    def schema_version(cls, db: Any) -> int:
        """The schema version of an open database (0: no store yet)."""

    def close(self) -> None:
        self.db.close()

    # -- full text -----------------------------------------------------------------------------------

    @abstractmethod
    def fts_source(self, *, matches_first: bool = False) -> str:
        """What a query reads its full-text matches from (after FROM): `memory`'s rows with the
        full-text index. `matches_first`: the index is read first, each match's row after (SQLite
        would otherwise walk `memory` by another index)."""

    @property
    @abstractmethod
    def fts_table(self) -> str:
        """The full-text index alone (after FROM), for a query that reads no column of `memory`:
        `fts_match` and `fts_rowid` work on it."""

    @property
    @abstractmethod
    def fts_rowid(self) -> str:
        """The column of `fts_source` that orders matches by age (the newest has the largest)."""

    @abstractmethod
    def fts_match(self, query: str) -> Fragment:
        """The condition that a row matches the full-text `query` (FTS5's syntax)."""

    @abstractmethod
    def fts_rank(self, query: str, weights: Weights) -> Fragment:
        """The BM25 rank of a match of `query` (smaller is better, as FTS5 returns it), its
        columns weighted title, content, tags, words. Only beside `fts_match(query)`."""

    @abstractmethod
    def newest_matches(self, query: str, limit: int) -> list[int]:
        """The rowids of the newest `limit` matches of `query` in the whole store, newest first."""

    @abstractmethod
    def memory_count(self) -> int:
        """How many memories the store holds, every project: BM25's corpus size."""

    def project_size(self, project_id: int) -> int:
        """How many memories a project holds, every status (BM25's corpus size in a prime)."""
        return self.db.execute_sql(f"SELECT count(*) FROM memory WHERE project_id = {self.param}",
                                   (project_id,)).fetchone()[0]

    def word_matches(self, project_id: int, words: Sequence[str], cap: int) -> dict[str, set[str]] | None:
        """Each word's first `cap` matches among the project's memories by rowid (all of them
        when fewer), found the back-end's own way; None: by one full-text query a word
        (`store.retrieval.word_statistics.word_hits`)."""
        return None

    def file_ref_candidates(self, paths: Sequence[str]) -> Fragment | None:
        """The memories, of any project and status, that may have a file ref glob covering one
        of `paths` or inside one of them, found by an index of the refs: a SELECT of `id`,
        `project_id`, `status`, `confidence`, `file_refs` and `place` (the order among equal
        confidences of a walk of the confidence index), for a prime's path candidates. None
        where testing each memory with file refs is quick enough (SQLite's GLOB)."""
        return None

    @abstractmethod
    def rebuild_full_text(self) -> None:
        """Compute every memory's full-text entry again from its text."""

    # -- writing many rows ----------------------------------------------------------------------------

    @abstractmethod
    @contextmanager
    def writing_in_bulk(self, rows: int) -> Iterator[None]:
        """A large import of `rows` new memories inside the caller's transaction: the full-text
        index takes them the cheapest way this back-end has. Nothing in the block may search the
        full text for them."""

    @abstractmethod
    def insert_rows(self, table: str, columns: Sequence[str], rows) -> None:
        """Insert `rows` (tuples in `columns` order) into `table`, as fast as this back-end can."""

    @property
    @abstractmethod
    def new_rows_pending(self) -> bool:
        """Whether a memory inserted now is marked pending by its trigger (off during a large
        import on PostgreSQL, which writes the words itself)."""

    @abstractmethod
    def rows_copied(self, tables: Sequence[tuple[str, str]]) -> None:
        """After rows were written with their own ids (`memdeck copy`): each (table, column)'s
        generator continues after the highest id."""

    # -- changes ---------------------------------------------------------------------------------------

    @abstractmethod
    def data_version(self) -> int:
        """A number that moves when another connection commits a change to the store."""

    @abstractmethod
    def own_changes(self) -> int:
        """A number that moves when this connection changes the store (with `data_version`: the
        store did not change while both hold)."""

    def database_user(self) -> str | None:
        """Who the database says this connection is, where the store records it on every write
        (a team store on PostgreSQL, whose roles and triggers name the user); None elsewhere."""
        return None

    def may_index(self) -> bool:
        """Whether this connection may write the derived index (identifier words, vectors, the
        memories waiting for them): always on SQLite; on a team store only a writer's, reviewer's
        or the owner's (a reader's client leaves the index to theirs)."""
        return True

    @abstractmethod
    def listen(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Call `on_change()` soon after any connection commits a change, on a thread of its own;
        the function that stops it. None where a view polls `data_version` instead."""

    # -- doctor ------------------------------------------------------------------------------------------

    @classmethod
    @abstractmethod
    def doctor_check(cls, location: Path | str):
        """`memdeck doctor`: every check that makes sense on this back-end, writing nothing."""

    @classmethod
    @abstractmethod
    def doctor_repair(cls, location: Path | str):
        """`memdeck doctor --fix`: the safe repairs, then the checks again."""

    @classmethod
    @abstractmethod
    @contextmanager
    def scratch(cls, location: Path | str | None) -> Iterator[Path | str]:
        """A new, empty store's location for a while (an eval's corpora), removed afterwards:
        beside `location`'s server, or a temporary file."""
