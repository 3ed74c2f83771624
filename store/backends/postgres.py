"""A store on a PostgreSQL server: connecting by URL, the schema's migrations there, and the one
place where the SQLite SQL the rest of memdeck writes is turned into PostgreSQL's.

memdeck writes its queries once, in SQLite's dialect (`?` parameters, FTS5's `MATCH` and
`bm25()`, `json_each`, `INSERT OR IGNORE`, `PRAGMA data_version`). `PgDatabase.execute_sql`
rewrites each query shape it meets (cached per SQL text), so the modules that read the store do
not branch on the back-end. Full text: a weighted `tsvector` (title A, tags B, content C,
identifier words D) kept by a trigger, in a GIN index; FTS5's BM25 is computed in SQL from the
same term statistics (`memdeck_bm25`), so a ranking means the same on both back-ends.

psycopg 3 is an optional extra (`pip install 'memdeck[postgres]'`); without it a PostgreSQL URL
is refused with a message saying so.
"""

from __future__ import annotations

import math
import re
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Iterator, Sequence

from peewee import PostgresqlDatabase

from store.backends import sqlite as dialect
from store.backends import postgres_fts
from store.capture.redaction import hide_passwords
from store.engine.errors import StoreError
from store.engine.peewee_import import give_peewee_psycopg

# The advisory lock every transaction of a store takes first (any number that is memdeck's own).
WRITE_LOCK = 7_316_843_191
# The memory a large import gives the sorts that build its indexes again (`writing_in_bulk`).
BULK_INDEX_MEMORY = "256MB"
# Whether a large import's COPYs run on a thread of their own (`_BulkWriter`).
BULK_WRITER_THREAD = True
URL = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)


def is_url(location: object) -> bool:
    """Whether a `--db` / MEMDECK_DB value names a PostgreSQL server rather than an SQLite file."""
    return isinstance(location, str) and bool(URL.match(location))


def location(text: str):
    """A `--db` value as memdeck keeps it: a URL stays text (a `Path` would fold its `//`), any
    other value is an SQLite path."""
    from pathlib import Path

    return text if is_url(text) else Path(text)


# A URL's user information: everything up to its last `@` (a password typed with an `@`, a `/`
# or a `#` in it, not percent-encoded, is still all of it).
_USERINFO = re.compile(r"^(postgres(?:ql)?://)(\S*)@", re.IGNORECASE)
_PASSWORD_PARAM = re.compile(r"[?&]([^=&]*)=([^&]*)")


def driver_url(url: str) -> str:
    """The URL as Peewee hands it to the driver: Peewee passes a URL as one only when it starts
    with `postgresql://` (any other it takes for a database name, losing host, port and user),
    so the `postgres://` form and any capitals are written that way."""
    return URL.sub("postgresql://", url, count=1)


def password_of(url: str) -> str | None:
    """The password a URL holds, as typed (user information or a `password=` parameter, its
    key percent-encoded or not)."""
    from urllib.parse import unquote

    match = _USERINFO.match(url)
    if match and ":" in match.group(2):
        return match.group(2).split(":", 1)[1]
    for key, value in _PASSWORD_PARAM.findall(url):
        if unquote(key).strip().lower() == "password":
            return value
    return None


def redacted(url: str) -> str:
    """The URL (or any message holding one) without its password, for messages:
    `user:***@host`, `?password=***`, `password=***`. One function: `hide_passwords`."""
    return hide_passwords(url)


def unreachable(url: str, exc: BaseException, doing: str = "cannot connect to the PostgreSQL server") -> StoreError:
    """The error for a server that refused or could not be reached, without the URL's password:
    in the URL (redacted) nor in the driver's words (which quote a host or port it could not
    parse, and a password with an `@` in it, not percent-encoded, is parsed as part of the host)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    password = password_of(url)
    if password:
        pieces = {password, *(p for p in re.split(r"[@/?#:]", password) if len(p) >= 2)}
        for piece in sorted(pieces, key=len, reverse=True):
            reason = reason.replace(piece, "***")
        if re.search(r"[@/?#]", password):
            reason += " (a password holding @ / ? or # must be percent-encoded in the URL: %40 %2F %3F %23)"
    return StoreError(f"{redacted(url)}: {doing}: {reason}")


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise StoreError("a PostgreSQL store needs psycopg 3: pip install 'memdeck[postgres]'") from None
    give_peewee_psycopg()
    return psycopg


class PgDatabase(PostgresqlDatabase):
    """Peewee's PostgreSQL database, taking memdeck's SQLite-dialect SQL in `execute_sql`."""


    def _connect(self):
        psycopg = _psycopg()
        conn = super()._connect()
        conn.adapters.register_dumper(bool, _bool_dumper(psycopg))
        # psycopg prepares a query run five times, and PostgreSQL may then plan it once for any
        # parameters: for a full-text match read newest first, a backward walk of the rowid
        # index filtering every row (107 ms at 100,000 memories for a query matching 1,225)
        # where the GIN index with these words finds them in 9 ms. Planned at every run instead.
        conn.execute("SET plan_cache_mode = force_custom_plan")
        return conn

    def begin(self, isolation_level=None):
        # Writers take turns, as on SQLite (whose write lock memdeck takes at BEGIN): a write
        # that reads first (is this text already stored? is this id free?) sees every earlier
        # write. Reads outside a transaction never wait.
        super().begin(isolation_level)
        self.cursor().execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))

    # Set by a large import (`writing_in_bulk`, as the table's owner): its rows are vacuumed once
    # it commits. Until a VACUUM marks their pages all-visible, every index-only scan over them
    # (the workbench's counts) fetches each row from the table: at a million imported memories
    # its first screen took 230 ms instead of 20 (first paint 1.4 s instead of 0.45) for the
    # minute or so autovacuum took to come round. VACUUM cannot run inside a transaction; it
    # skips the pages already all-visible (0.1 s for 100,000 new memories, 1.3 s for a million)
    # and takes no lock that readers or writers wait for. With ANALYZE too when the import
    # grew the table by more than a tenth of what the planner last counted (autovacuum's own
    # measure of stale statistics): after ten imports of 100,000, statistics gathered at the
    # first put every rowid past 100,000 beyond the histogram, and the window a broad search
    # reads its newest matches from (`newest_matches`) was planned as a backward walk of the
    # rowid index (87 ms for `billing worker` at a million, 30 ms once analyzed).
    # The events' statistics are left to autovacuum: they are read by memory, through an index,
    # and analyzing them too cost a 100,000-memory import at a million another 0.12 s.
    _vacuum_after_commit: tuple[str, ...] = ()

    def commit(self):
        super().commit()
        statements, self._vacuum_after_commit = self._vacuum_after_commit, ()
        try:
            for statement in statements:
                self.cursor().execute(statement)
        except Exception:  # the import has committed; autovacuum will come round instead
            pass

    def rollback(self):
        self._vacuum_after_commit = ()
        super().rollback()

    def execute(self, query, **context_options):
        # Peewee's own queries are already PostgreSQL's: they skip the translation.
        ctx = self.get_sql_context(**context_options)
        sql, params = ctx.sql(query).query()
        return self._execute_cursor(sql, params)

    def execute_sql(self, sql, params=None):
        if sql == dialect.MEMORY_COUNT_SQL:  # the store's size: counted once per text change
            return _Rows([(_corpus(self)[0],)])
        own = _sqlite_maintenance(sql)
        if own is not None:
            sql, params = own, ()
        translated, params = translate_call(self, sql, params)
        cursor = self._execute_cursor(translated, params)
        if " RETURNING " in translated and translated.lstrip().upper().startswith("INSERT"):
            return _Inserted(cursor)
        return cursor

    # -- a match's newest rows (`store.browse.search.newest_matches`) --------------------------------

    def newest_matches(self, query: str, limit: int) -> list[int]:
        """The rowids of the newest `limit` matches of the FTS5 `query`, newest first: what
        `ORDER BY rowid DESC LIMIT` over every match gives, read from a window of the newest
        rows when the planner expects it to hold them (`newest_window`). A window that holds
        fewer is followed by the window below it, sized by the share of matches found, then by
        every older match: the answer never depends on the estimate, only its cost does."""
        tsquery = parse_fts(query, self).tsquery
        first, last = self._execute_cursor("SELECT min(rowid), max(rowid) FROM memory", ()).fetchone()
        if last is None:
            return []
        plan = self._execute_cursor("EXPLAIN (FORMAT JSON) SELECT 1 FROM memory WHERE fts @@ %s::tsquery",
                                    (tsquery,)).fetchone()[0]
        estimate = plan[0]["Plan"]["Plan Rows"]
        rowids: list[int] = []
        top = None  # the windows read cover the rowids above `top` (None: none read yet)

        def newest(*bounds: tuple[str, int]) -> list[int]:
            where = "".join(f" AND rowid {op} %s" for op, _ in bounds)
            return [r[0] for r in self._execute_cursor(
                f"SELECT rowid FROM memory WHERE fts @@ %s::tsquery{where} ORDER BY rowid DESC LIMIT %s",
                (tsquery, *(value for _, value in bounds), limit - len(rowids)))]

        for _ in range(2):
            ceiling = last if top is None else top
            start = newest_window(estimate, first, ceiling, limit - len(rowids))
            if start is None:
                break
            found = newest((">=", start), *((("<=", top),) if top is not None else ()))
            rowids += found
            if len(rowids) == limit or start <= first:
                return rowids
            # The share of the window that matched, over the rowids below it.
            estimate = len(found) * (start - first) / (ceiling - start + 1)
            top = start - 1
        return rowids + (newest(("<=", top)) if top is not None else newest())

    # -- the bulk path (`store.interop.import_writes`) ---------------------------------------------------------

    # Inside `writing_in_bulk`: new memories are not marked pending (the bulk path writes their
    # words itself).
    bulk_active = False

    # Inside `writing_in_bulk`, for the table's owner: what computes new memories' full-text
    # columns in this process (`store.backends.postgres_fts`), or None.
    fts_builder = None

    def copy_rows(self, table: str, columns: Sequence[str], rows) -> None:
        """`rows` into `table` through `COPY ... FROM STDIN` (psycopg 3's `cursor.copy()`):
        one statement streaming every row, which the server processes as it arrives, instead
        of one prepared INSERT per row. Inside `writing_in_bulk`, for the table's owner: new
        memories come with their tsvector and token count (the trigger that would compute them
        is off for their COPY), and the COPY runs on the `_BulkWriter` thread while this one
        prepares the next rows."""
        writer = self._bulk_writer
        before = after = None
        if table == "memory" and self.fts_builder is not None:
            rows = list(rows)  # their identifier words computed while the writer's COPY runs
            if writer is not None and not writer.own_builder:
                writer.wait()  # the builder's queries below need the connection
            columns, rows = (*columns, "fts", "doclen"), self._with_fts(columns, rows)
            before, after = "ALTER TABLE memory DISABLE TRIGGER memory_fts", "ALTER TABLE memory ENABLE TRIGGER memory_fts"
        statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        if writer is not None:
            writer.put(statement, rows, before=before, after=after)
        else:
            _copy(PostgresqlDatabase.cursor(self), statement, rows, before, after)

    _bulk_writer = None

    def cursor(self, named_cursor=None):
        # Any other statement waits until the COPYs handed to the bulk writer are done (and
        # raises what failed in them).
        if self._bulk_writer is not None:
            self._bulk_writer.wait()
        return _Cursor(super().cursor())

    def _with_fts(self, columns: Sequence[str], rows) -> Iterator[tuple]:
        """`rows` each with its tsvector (as text) and token count appended: built in this
        process when `store.backends.postgres_fts` can vouch for them, else computed by the server with
        the trigger's own expression. The server is asked what it must be before the COPY; the
        rest is built while the COPY streams, as the server takes the rows before."""
        builder = self.fts_builder
        rows = list(rows)
        where = [columns.index(c) for c, _ in postgres_fts.COLUMNS]
        texts = [tuple(row[i] for i in where) for row in rows]
        plans = builder.plan(texts)
        left = [i for i, ok in enumerate(plans) if not ok]
        by_server = dict(zip(left, builder.server_rows([texts[i] for i in left])))
        # The queries above run now, before the COPY starts; the rows are built as it streams.
        return ((*row, *(builder.row(text) if ok else by_server[i]))
                for i, (row, text, ok) in enumerate(zip(rows, texts, plans)))

    def _side_connection(self):
        """Another connection to this database, as this one's user (autocommit), or None."""
        try:
            return _psycopg().connect(self.database, autocommit=True, **self.connect_params)
        except Exception:  # then the builder's questions take turns with the COPYs
            return None

    @contextmanager
    def writing_in_bulk(self, rows: int) -> Iterator[None]:
        """A large import on PostgreSQL, inside the caller's transaction (which holds the write
        lock): the trigger that marks new memories pending is disabled (`ALTER TABLE ... DISABLE
        TRIGGER`, which blocks other writers of `memory` but no reader), and when the import
        brings at least as many memories as the store holds, the GIN index and the other
        secondary indexes are dropped and built once at the end (a build sorts every entry
        once; growing an index row by row costs several times that). Everything is one
        transaction: a failed import rolls the triggers and the indexes back with its rows.
        Dropping an index takes a lock readers wait on until the import commits, hence only for
        an import the size of the store or more; then the table is analyzed. A user who does not own the table imports through COPY alone."""
        cursor = PostgresqlDatabase.cursor(self)
        owner = cursor.execute("SELECT pg_has_role(relowner, 'USAGE') FROM pg_class "
                               "WHERE oid = 'memory'::regclass").fetchone()[0]
        if not owner:
            # Only the table's owner may disable its triggers or rebuild its index: a team
            # member granted rights to write gets COPY alone.
            yield
            return
        # Whether the store holds `rows` memories or fewer, counting no further (at a million
        # memories a full count is half a second of every import).
        rebuild = cursor.execute("SELECT count(*) <= %s FROM (SELECT FROM memory LIMIT %s) AS m",
                                 (rows, rows + 1)).fetchone()[0]
        counted = cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'memory'::regclass").fetchone()[0]
        stale = not rebuild and rows > 0.1 * max(counted, 0)  # a rebuild analyzes in the transaction
        cursor.execute("ALTER TABLE memory DISABLE TRIGGER memory_text_added")
        cursor.execute(f"SET LOCAL maintenance_work_mem = '{BULK_INDEX_MEMORY}'")
        if rebuild:
            # Every index of `memory` but its keys (which the import's own checks and foreign
            # keys use) is built again at the end: one sort each instead of a b-tree insert per
            # row. Their definitions are read from the catalog, so whatever migrations made.
            indexes = cursor.execute(
                "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index AS i "
                "WHERE i.indrelid = 'memory'::regclass AND NOT i.indisprimary AND NOT i.indisunique").fetchall()
            for name, _ in indexes:
                cursor.execute(f"DROP INDEX {name}")
        else:
            # The GIN index takes new rows into its pending list, merged into the index when
            # the list outgrows its limit, in batches of `work_mem`: larger both, fewer and
            # larger merges (each lexeme's postings are reached once per merge). What is left
            # pending is merged before the import commits, so no search scans it.
            cursor.execute(f"SET LOCAL gin_pending_list_limit = '{BULK_INDEX_MEMORY}'")
            cursor.execute(f"SET LOCAL work_mem = '{BULK_INDEX_MEMORY}'")
        self.bulk_active = True
        # The builder asks its questions (how a character is normalised, how a word is parsed:
        # functions of the schema, not of this transaction's rows) on a second connection when
        # one can be opened, so they need not wait for the COPYs the writer thread is running.
        side = self._side_connection() if BULK_WRITER_THREAD else None
        self.fts_builder = postgres_fts.FtsBuilder.open(side.cursor() if side is not None else cursor)
        if self.fts_builder is not None and BULK_WRITER_THREAD:
            self._bulk_writer = _BulkWriter(self.connection(), own_builder=side is not None)
        try:
            yield
            if self._bulk_writer is not None:
                self._bulk_writer.wait()
        finally:
            writer, self._bulk_writer = self._bulk_writer, None
            if writer is not None:
                writer.stop()
            if side is not None:
                side.close()
            self.bulk_active = False
            self.fts_builder = None
        if rebuild:
            for _, definition in indexes:
                cursor.execute(definition)
            # The planner's statistics, for a table that is now mostly new rows (autovacuum
            # would gather them later; the first searches and listings would be planned blind).
            cursor.execute("ANALYZE memory")
        else:
            cursor.execute("SELECT gin_clean_pending_list('memory_fts_index')")
            for setting in ("gin_pending_list_limit", "work_mem"):
                cursor.execute(f"SET LOCAL {setting} TO DEFAULT")
        cursor.execute("SET LOCAL maintenance_work_mem TO DEFAULT")
        cursor.execute("ALTER TABLE memory ENABLE TRIGGER memory_text_added")
        self._vacuum_after_commit = (f"VACUUM (SKIP_LOCKED{', ANALYZE' if stale else ''}) memory",
                                     "VACUUM (SKIP_LOCKED) event")


# A broad query's newest matches (`PgDatabase.newest_matches`). Read from every match, they cost
# PostgreSQL a walk of the rowid index backwards testing each row's tsvector until `limit` match
# (`billing worker*`, in 1.2% of 1,000,000 memories: 159,000 rows for its newest 2,001, 85 ms),
# or the GIN index's whole bitmap and a fetch of every matching row to sort them (12,262 rows
# here, 50 ms). Restricted to the newest rows (`rowid >= start`) that should hold `limit`
# matches, the planner ANDs the GIN bitmap with the rowid index's range and fetches only the
# matches in it (30 ms), or for a word in most rows walks that range alone. The window is the
# rowids `limit` matches need at the planner's estimated share of matching rows, times
# `WINDOW_MARGIN`; past `WINDOW_MOST` of the rowids, the rowid range's bitmap costs more than
# the fetches it saves, and the whole is read.
WINDOW_MARGIN = 1.25
WINDOW_MOST = 1 / 3


def newest_window(estimate: float, first: int, last: int, limit: int) -> int | None:
    """The lowest rowid of the window a query's newest `limit` matches are read from, for a
    query the planner expects to match `estimate` rows of a table whose rowids run from `first`
    to `last`; None to read every match."""
    span = last - first + 1
    if estimate < limit:
        return None
    window = math.ceil(limit / estimate * span * WINDOW_MARGIN)
    return last - window + 1 if window <= span * WINDOW_MOST else None


def _copy(cursor, statement: str, rows, before: str | None = None, after: str | None = None) -> None:
    """One COPY, between the statements that must run right before and after it."""
    if before:
        cursor.execute(before)
    with cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
    if after:
        cursor.execute(after)


class _BulkWriter:
    """A thread running a large import's COPYs, one after another on the import's connection,
    while the importing thread builds the next rows: the server then has rows to take while the
    client works (on one connection the two would take turns). Every other use of the
    connection first `wait`s for the COPYs handed over, and gets the first error raised there;
    after an error the rest are dropped (the transaction is failed and will be rolled back)."""

    def __init__(self, connection, *, own_builder: bool = False) -> None:
        import queue

        self._connection = connection
        self.own_builder = own_builder  # the full-text builder asks on a connection of its own
        self._jobs: "queue.Queue" = queue.Queue(maxsize=2)  # bounds the rows held in memory
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="memdeck-bulk-copy", daemon=True)
        self._thread.start()

    def put(self, statement: str, rows, *, before: str | None = None, after: str | None = None) -> None:
        self._raise()
        self._jobs.put((statement, rows, before, after))

    def wait(self) -> None:
        if threading.current_thread() is self._thread:
            return
        self._jobs.join()
        self._raise()

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._failed = True
            raise error

    _failed = False

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._error is None and not self._failed:
                    with self._connection.cursor() as cursor:
                        _copy(cursor, *job)
            except BaseException as exc:  # raised to the importing thread at its next statement
                self._error = exc
            finally:
                self._jobs.task_done()


class _Cursor:
    """A psycopg cursor whose `executemany` takes SQLite-dialect SQL (memdeck's bulk writes)."""

    def __init__(self, cursor) -> None:
        self._cursor = cursor

    def executemany(self, sql, rows):
        rows = list(rows)
        translated = translate(sql)
        if translated.match_params:
            raise StoreError("a full-text match cannot be run for many rows at once")
        return self._cursor.executemany(translated.sql, rows)

    def __getattr__(self, name):
        return getattr(self._cursor, name)

    def __iter__(self):
        return iter(self._cursor)


class _Inserted:
    """The cursor of an INSERT ... RETURNING id, with that id as `lastrowid` (as SQLite's)."""

    def __init__(self, cursor) -> None:
        row = cursor.fetchone()
        self.lastrowid = row[0] if row else None
        self.rowcount = cursor.rowcount
        self._cursor = cursor

    def __getattr__(self, name):
        return getattr(self._cursor, name)


# SQLite's upkeep of its FTS5 index and connection, as `store.backends.sqlite` writes it, and what each is on
# PostgreSQL. A large import (`store.interop.import_writes`) drops FTS5's insert trigger and indexes its rows in one
# statement at the end: here nothing is suspended, since each row's tsvector is computed once by a
# trigger on the row being written (no second write, unlike FTS5's index table), the GIN index
# takes many new rows through its pending list, and dropping the trigger would take a lock every
# reader waits on. A pragma set for a while (a larger page cache) has no meaning on a server.
_NOTHING = "SELECT 1 WHERE FALSE"
_MAINTENANCE = (
    (re.compile(r"\s*DROP TRIGGER memory_fts_insert\s*$"), _NOTHING),
    (re.compile(r"\s*CREATE TRIGGER memory_fts_insert\b"), _NOTHING),
    # The pending mark of a new memory stays too: the bulk path clears the marks it wrote words for.
    (re.compile(r"\s*DROP TRIGGER memory_text_added\s*$"), _NOTHING),
    (re.compile(r"\s*CREATE TRIGGER memory_text_added AFTER INSERT ON memory BEGIN\b"), _NOTHING),
    (re.compile(r"\s*INSERT INTO memory_fts\s*\(\s*rowid\b"), _NOTHING),
    # Rebuilding FTS5's index: the trigger computes every row's tsvector again.
    (re.compile(r"\s*INSERT INTO memory_fts\s*\(\s*memory_fts\s*\)\s*VALUES\s*\('rebuild'\)\s*$"),
     "UPDATE memory SET words = words"),
    (re.compile(r"\s*PRAGMA \w+\s*=", re.I), _NOTHING),
)


def _sqlite_maintenance(sql: str) -> str | None:
    """PostgreSQL's statement for one of SQLite's upkeep statements (a no-op for most), else None."""
    for pattern, replacement in _MAINTENANCE:
        if pattern.match(sql):
            return replacement
    return None


def _bool_dumper(psycopg):
    """memdeck's flags are integers (0/1) on both back-ends: `protected = 1` reads the same."""
    from psycopg.adapt import Dumper

    class BoolAsInt(Dumper):
        oid = psycopg.adapters.types["int2"].oid

        def dump(self, obj):
            return b"1" if obj else b"0"

    return BoolAsInt


# -- connecting ---------------------------------------------------------------------------------

def connect(url: str, *, target_version: int | None = None) -> PgDatabase:
    """Open the store at `url`, migrated to `target_version` (the newest by default)."""
    from store.backends import postgres_schema

    _psycopg()
    db = PgDatabase(driver_url(url), autoconnect=True)
    try:
        db.connect()
    except Exception as exc:  # psycopg's OperationalError, wrapped by Peewee
        raise unreachable(url, exc) from None
    postgres_schema.migrate(db, target_version)
    return db


# -- translating SQLite SQL -----------------------------------------------------------------------

class Translated:
    def __init__(self, sql: str, match_params: tuple[int, ...], bm25: tuple[tuple[int, tuple[float, ...]], ...],
                 arrays: tuple[tuple[int, int], ...] = ()):
        self.sql = sql
        self.match_params = match_params  # indexes (in the original) of FTS5 query parameters
        self.bm25 = bm25  # (index of the parameter list position it takes, column weights)
        self.arrays = arrays  # (index, count) of the parameters of a `rowid IN (...)`, sent as one array


_FTS_JOIN = re.compile(r"FROM memory_fts\s+(?:CROSS\s+)?JOIN memory ON memory\.rowid = memory_fts\.rowid", re.I)
_BM25 = re.compile(r"bm25\(memory_fts(?:,\s*([-\d.eE]+)\s*,\s*([-\d.eE]+)\s*,\s*([-\d.eE]+)(?:\s*,\s*([-\d.eE]+))?)?\)")


@lru_cache(maxsize=512)
def translate(sql: str) -> Translated:
    s = sql
    s = _FTS_JOIN.sub("FROM memory", s)
    s = re.sub(r"SELECT rowid FROM memory_fts WHERE memory_fts MATCH \?", "SELECT memory.rowid FROM memory "
               "WHERE memory_fts MATCH ?", s)
    s = s.replace("FROM memory_fts WHERE", "FROM memory WHERE")
    s = s.replace("memory_fts.rowid", "memory.rowid")
    # SQLite's CROSS JOIN with ON is a join in a fixed order; PostgreSQL plans the order itself.
    s = re.sub(r"\bCROSS JOIN (\w+) ON\b", r"JOIN \1 ON", s)
    s = s.replace("FROM memory NOT INDEXED ", "FROM memory ")  # SQLite's plan hint
    s = re.sub(r"ORDER BY rowid DESC", "ORDER BY memory.rowid DESC", s)
    # A subquery in FROM needs a name on PostgreSQL.
    s = re.sub(r"(LIMIT \?)\)\s*$", r"\1) AS sub", s)
    s = re.sub(r"\bjson_each\(([\w.]+)\) AS (\w+)", r"json_array_elements_text(\1::json) AS \2(value)", s)
    s = re.sub(r"\bjson_each\(([\w.]+)\)", r"json_array_elements_text(\1::json) AS json_each(value)", s)
    s = s.replace("? GLOB rtrim(ref.value, '/') || '/*'", "memdeck_glob(?, rtrim(ref.value, '/') || '/*')")
    s = s.replace("ref.value GLOB ? || '/*'", "memdeck_glob(ref.value, ? || '/*')")
    s = s.replace("? GLOB ref.value", "memdeck_glob(?, ref.value)")
    s = re.sub(r"([\w.]+) COLLATE NOCASE", r"lower(\1)", s)
    s = re.sub(r"MAX\(COALESCE\(ended_at, \?\), \?, started_at\)", "GREATEST(COALESCE(ended_at, ?), ?, started_at)", s)
    s = re.sub(r"PRAGMA data_version", "SELECT memdeck_changes()", s)
    # Scalar MIN/MAX of several values; SQLite's CAST to INTEGER truncates, PostgreSQL's rounds.
    s = re.sub(r"MIN\(MAX\((.*?), ([^,()]+)\), ([^,()]+)\)", r"LEAST(GREATEST(\1, \2), \3)", s)
    s = re.sub(r"CAST\(([^()]*) AS INTEGER\)", r"trunc(\1)::integer", s)
    # A condition counted as 0 or 1, and a bare 1 or 0 as a condition.
    s = re.sub(r"SUM\((\w+ IN \([^()]*\))\)", r"SUM((\1)::int)", s)
    s = re.sub(r"\b(WHERE|AND|OR) ([01])(?=\s+(?:GROUP|ORDER|LIMIT|AND|OR)\b|\s*\)|\s*$)",
               lambda m: f"{m.group(1)} {'TRUE' if m.group(2) == '1' else 'FALSE'}", s)
    # Rebuilding FTS5's index: the trigger computes each row's tsvector again.
    s = s.replace("INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')", "UPDATE memory SET words = words")
    s = s.replace("total_changes()", "memdeck_changes()")
    if re.match(r"\s*INSERT OR IGNORE INTO", s, re.I):
        s = re.sub(r"INSERT OR IGNORE INTO", "INSERT INTO", s, count=1, flags=re.I) + " ON CONFLICT DO NOTHING"
    elif m := re.match(r"\s*INSERT OR REPLACE INTO (\w+) \(([^)]*)\)", s, re.I):
        table, columns = m.group(1), [c.strip() for c in m.group(2).split(",")]
        key = _KEYS.get(table, columns[0])
        rest = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != key)
        s = re.sub(r"INSERT OR REPLACE INTO", "INSERT INTO", s, count=1, flags=re.I)
        s += f" ON CONFLICT ({key}) DO UPDATE SET {rest}"
    # SQLite's empty blob literal (PostgreSQL reads X'' as a bit string).
    s = s.replace("X''", "''::bytea")
    if m := re.match(r"\s*INSERT INTO (\w+) ", s):
        if m.group(1) in _RETURNING and "ON CONFLICT" not in s:
            s += f" RETURNING {_RETURNING[m.group(1)]}"  # the cursor's `lastrowid`
    # Walk the parameters: find which are FTS5 queries and where bm25 ranks go.
    out: list[str] = []
    match_params: list[int] = []
    bm25: list[tuple[int, tuple[float, ...]]] = []
    index = 0
    pos = 0
    # `%s` is a parameter too: what SQL written with the connection's own mark (`db.param`) uses.
    # A list of rowids (a broad search's newest 2,001 matches) goes as one array parameter: binding
    # and planning 2,001 parameters cost more than the query (5 ms against 2 ms).
    token = re.compile(r"\?|%s|%|'(?:[^']|'')*'|memory_fts MATCH \?|" + _ROWIDS_IN.pattern + "|" + _BM25.pattern)
    arrays: list[tuple[int, int]] = []
    for m in token.finditer(s):
        out.append(s[pos:m.start()])
        text = m.group(0)
        if _ROWIDS_IN.fullmatch(text):
            count = text.count("?")
            out.append(text[:text.index(" IN")] + " = ANY(%s::bigint[])")
            arrays.append((index, count))
            index += count
        elif text in ("?", "%s"):
            out.append("%s")
            index += 1
        elif text == "%":
            out.append("%%")
        elif text.startswith("'"):
            out.append(text.replace("%", "%%"))
        elif text.startswith("memory_fts MATCH"):
            out.append("memory.fts @@ %s::tsquery")
            match_params.append(index)
            index += 1
        else:  # bm25(...)
            weights = tuple(float(w) if w is not None else 1.0 for w in m.groups()[-4:])
            out.append("memdeck_bm25(memory.fts, memory.doclen, %s::text[], %s::int[], %s::float8[], "
                       "%s::float8[], %s::float8)")
            bm25.append((index, weights))
        pos = m.end()
    out.append(s[pos:])
    return Translated("".join(out), tuple(match_params), tuple(bm25), tuple(arrays))


_ROWIDS_IN = re.compile(r"\b(?:memory\.)?rowid IN \(\?(?:\s*,\s*\?)*\)")


_KEYS = {"memory_vector": "memory_id"}
# Tables whose new row's id memdeck reads as `cursor.lastrowid` after a plain INSERT.
_RETURNING = {"vector_block": "id"}


def translate_call(db: PgDatabase, sql: str, params) -> tuple[str, list]:
    translated = translate(sql)
    params = list(params or ())
    if not translated.match_params and not translated.arrays:
        return translated.sql, params
    queries = {i: parse_fts(params[i], db) for i in translated.match_params}
    # bm25 ranks come before the MATCH they rank: each takes the terms of the first match.
    query = queries[translated.match_params[0]] if queries else None
    out: list[Any] = []
    bm25 = dict(translated.bm25)
    arrays = dict(translated.arrays)
    i = 0
    while i <= len(params):
        if i in bm25:
            out.extend(_bm25_args(db, query, bm25[i]))
        if i in arrays:
            out.append(params[i:i + arrays[i]])
            i += arrays[i]
            continue
        if i < len(params):
            out.append(queries[i].tsquery if i in queries else params[i])
        i += 1
    return translated.sql, out


# -- FTS5 queries as tsquery --------------------------------------------------------------------

class FtsQuery:
    def __init__(self, tsquery: str, terms: list[tuple[str, bool]]):
        self.tsquery = tsquery
        self.terms = terms  # (lexeme, prefix) of every term, for BM25


_FTS_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*)?|\{([^}]*)\}\s*:|\(|\)|\bAND\b|\bOR\b|\bNOT\b|\S+')
_COLUMN_WEIGHTS = {"title": "A", "tags": "B", "content": "C", "words": "D"}
_PIECE = re.compile(r"[^\W_]+", re.UNICODE)


def parse_fts(query: str, db: PgDatabase | None = None) -> FtsQuery:
    """An FTS5 query as memdeck writes them (quoted terms, a trailing `*`, AND/OR, parentheses, a
    `{columns}:` filter) as tsquery text over stemmed lexemes."""
    out: list[str] = []
    terms: list[tuple[str, bool]] = []
    weights = ""
    words: list[tuple[str, bool]] = []
    for m in _FTS_TOKEN.finditer(query):
        if m.group(1) is not None:
            words.append((m.group(1).replace('""', '"'), bool(m.group(2))))
    stems = _stems([w for w, _ in words], db)  # FTS5 stems a prefix too
    for m in _FTS_TOKEN.finditer(query):
        text = m.group(0)
        if m.group(3) is not None:
            weights = "".join(_COLUMN_WEIGHTS[c] for c in m.group(3).split() if c in _COLUMN_WEIGHTS)
        elif m.group(1) is not None:
            word, prefix = m.group(1).replace('""', '"'), bool(m.group(2))
            pieces = _PIECE.findall(word.lower())
            # PostgreSQL indexes no word of 2 KB or more: such a term matches nothing.
            lexemes = [s for p in pieces for s in stems.get(p, [p]) if len(s.encode()) < 2047]
            if len(lexemes) < len(pieces):
                lexemes = []
            if not lexemes:
                out.append("'_'")  # no row holds it: the index keeps letters and digits only
                continue
            parts = []
            for j, lexeme in enumerate(lexemes):
                last_prefix = prefix and j == len(lexemes) - 1
                parts.append("'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'"
                             + (":*" if last_prefix else "") + (("" if last_prefix else ":") + weights if weights else ""))
                terms.append((lexeme, last_prefix))
            out.append("(" + " <-> ".join(parts) + ")" if len(parts) > 1 else parts[0])
        elif text == "AND":
            out.append("&")
        elif text == "OR":
            out.append("|")
        elif text == "NOT":
            out.append("& !")
        elif text in "()":
            out.append(text)
    return FtsQuery(" ".join(out), terms)


_stem_cache: dict[str, list[str]] = {}


def _stems(words: Sequence[str], db: PgDatabase | None) -> dict[str, list[str]]:
    """Each piece of `words`, stemmed by the store's text search dictionaries (cached): its
    accents removed (`unaccent`, as the store's configuration does since migration 11), then
    Snowball's English stemmer."""
    pieces = sorted({p for w in words for p in _PIECE.findall(w.lower())} - set(_stem_cache))
    if pieces and db is not None:
        rows = db._execute_cursor(
            "SELECT p, ts_lexize('memdeck_stem', coalesce((ts_lexize('unaccent', p))[1], p)) "
            "FROM unnest(%s::text[]) AS p", (pieces,)).fetchall()
        for piece, lexemes in rows:
            _stem_cache[piece] = list(lexemes or [piece])
    return {p: _stem_cache.get(p, [p]) for w in words for p in _PIECE.findall(w.lower())}


# -- BM25 as FTS5 computes it ----------------------------------------------------------------------

_stats_lock = threading.Lock()
_stats: dict[tuple, Any] = {}


def _bm25_args(db: PgDatabase, query: FtsQuery, weights: tuple[float, ...]) -> list[Any]:
    """The arguments of `memdeck_bm25`: lexemes, prefix flags, each one's idf over the whole
    store, the column weights (A title, B tags, C content, D words) and the mean row length."""
    title, content, tags, words = weights
    total, mean = _corpus(db)
    idfs = []
    for lexeme, prefix in query.terms:
        hits = _hits(db, lexeme, prefix)
        idf = math.log((total - hits + 0.5) / (hits + 0.5)) if total else 0.0
        idfs.append(idf if idf > 0 else 1e-6)
    return [[t for t, _ in query.terms], [int(p) for _, p in query.terms], idfs,
            [title, tags, content, words], mean or 1.0]


def _changes(db: PgDatabase) -> int:
    return db._execute_cursor("SELECT memdeck_changes()", ()).fetchone()[0]


def _text_version(db: PgDatabase) -> tuple:
    """Moves whenever a statement adds, deletes or rewrites memories' text (migration 11)."""
    return tuple(db._execute_cursor("SELECT last_value, is_called FROM memdeck_text_change", ()).fetchone())


def _corpus(db: PgDatabase) -> tuple[int, float]:
    """How many memories, and their mean token count: counted again only when a memory was
    added, deleted or its text rewritten since (the `memdeck_text_change` sequence moved)."""
    key = ("corpus", db.database, _text_version(db))
    with _stats_lock:
        if key in _stats:
            return _stats[key]
    total, mean, busy = db._execute_cursor(f"SELECT count(*), avg(doclen)::float8, {_WRITERS_OPEN} FROM memory",
                                           ()).fetchone()
    if not busy and not db.in_transaction():
        with _stats_lock:
            if len(_stats) > 4096:
                _stats.clear()
            _stats[key] = (total, mean or 0.0)
    return total, mean or 0.0


# Whether a transaction that writes was open when the statement's snapshot was taken: it may
# have moved `memdeck_text_change` already and commit rows the count did not see, so the count
# is not kept (nor one read inside a transaction, which may yet roll back).
_WRITERS_OPEN = "EXISTS (SELECT FROM pg_snapshot_xip(pg_current_snapshot()))"


class _Rows:
    """Rows memdeck computed itself, read as a cursor's."""

    def __init__(self, rows: list[tuple]) -> None:
        self._rows = rows

    def fetchone(self):
        return self._rows[0] if self._rows else None

    def fetchall(self):
        return list(self._rows)

    def __iter__(self):
        return iter(self._rows)


def _hits(db: PgDatabase, lexeme: str, prefix: bool) -> int:
    key = ("hits", db.database, _text_version(db), lexeme, prefix)
    with _stats_lock:
        if key in _stats:
            return _stats[key]
    term = "'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'" + (":*" if prefix else "")
    hits, busy = db._execute_cursor(f"SELECT count(*), {_WRITERS_OPEN} FROM memory WHERE fts @@ %s::tsquery",
                                    (term,)).fetchone()
    if not busy and not db.in_transaction():
        with _stats_lock:
            _stats[key] = hits
    return hits


# -- temporary databases ---------------------------------------------------------------------------

def with_database(url: str, name: str) -> str:
    """`url` naming the database `name` on the same server, as the same user."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


@contextmanager
def temporary_database(url: str) -> Iterator[str]:
    """A new, empty database on the server of `url` (its user must be allowed to create
    databases), dropped afterwards: the URL to open it by."""
    import uuid

    psycopg = _psycopg()
    name = f"memdeck_tmp_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        raise unreachable(url, exc, "cannot create a temporary database") from None
    try:
        yield with_database(url, name)
    finally:
        from store.engine.models import database as proxy

        if proxy.obj is not None and getattr(proxy.obj, "database", None) == driver_url(with_database(url, name)):
            proxy.obj.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- live changes ------------------------------------------------------------------------------------

def listen(url: str, on_change: Callable[[], None]) -> Callable[[], None]:
    """Call `on_change()` (on a thread of its own) soon after any connection commits a change to
    the store at `url`: every write's trigger notifies the `memdeck` channel, delivered at
    commit. Returns the function that stops listening."""
    psycopg = _psycopg()
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("LISTEN memdeck")
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.is_set():
                got = False
                for _ in conn.notifies(timeout=0.2, stop_after=1):
                    got = True
                if got and not stop.is_set():
                    on_change()
        except Exception:  # the server went away: the view stays as it is, as on a lost file
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=run, name="memdeck-listen", daemon=True)
    thread.start()

    def stop_listening() -> None:
        stop.set()
        thread.join(2)

    return stop_listening
