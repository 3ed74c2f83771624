"""A large import on PostgreSQL (`store.interop.import_writes` through the back-end): rows
streamed by COPY, on a thread of their own while the next are prepared, their full-text columns
built in this process (`store.backends.postgres_fts`), and for an import the size of the store
its secondary indexes built once at the end.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

from peewee import PostgresqlDatabase

from store.backends import postgres_fts

# The memory a large import gives the sorts that build its indexes again (`writing_in_bulk`).
BULK_INDEX_MEMORY = "256MB"
# Whether a large import's COPYs run on a thread of their own (`_BulkWriter`).
BULK_WRITER_THREAD = True


def copy_rows(db, table: str, columns: Sequence[str], rows) -> None:
    """`rows` into `table` through `COPY ... FROM STDIN` (psycopg 3's `cursor.copy()`):
    one statement streaming every row, which the server processes as it arrives, instead
    of one prepared INSERT per row. Inside `writing_in_bulk`, for the table's owner: new
    memories come with their tsvector and token count (the trigger that would compute them
    is off for their COPY), and the COPY runs on the `_BulkWriter` thread while this one
    prepares the next rows."""
    writer = db._bulk_writer
    before = after = None
    if table == "memory" and db.fts_builder is not None:
        rows = list(rows)  # their identifier words computed while the writer's COPY runs
        if writer is not None and not writer.own_builder:
            writer.wait()  # the builder's queries below need the connection
        columns, rows = (*columns, "fts", "doclen"), _with_fts(db, columns, rows)
        before, after = "ALTER TABLE memory DISABLE TRIGGER memory_fts", "ALTER TABLE memory ENABLE TRIGGER memory_fts"
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    if writer is not None:
        writer.put(statement, rows, before=before, after=after)
    else:
        _copy(PostgresqlDatabase.cursor(db), statement, rows, before, after)


def _with_fts(db, columns: Sequence[str], rows) -> Iterator[tuple]:
    """`rows` each with its tsvector (as text) and token count appended: built in this
    process when `store.backends.postgres_fts` can vouch for them, else computed by the server with
    the trigger's own expression. The server is asked what it must be before the COPY; the
    rest is built while the COPY streams, as the server takes the rows before."""
    builder = db.fts_builder
    rows = list(rows)
    where = [columns.index(c) for c, _ in postgres_fts.COLUMNS]
    texts = [tuple(row[i] for i in where) for row in rows]
    plans = builder.plan(texts)
    left = [i for i, ok in enumerate(plans) if not ok]
    by_server = dict(zip(left, builder.server_rows([texts[i] for i in left])))
    # The queries above run now, before the COPY starts; the rows are built as it streams.
    return ((*row, *(builder.row(text) if ok else by_server[i]))
            for i, (row, text, ok) in enumerate(zip(rows, texts, plans)))


def _side_connection(db):
    """Another connection to this database, as this one's user (autocommit), or None."""
    import psycopg

    try:
        return psycopg.connect(db.database, autocommit=True, **db.connect_params)
    except Exception:  # then the builder's questions take turns with the COPYs
        return None


@contextmanager
def writing_in_bulk(db, rows: int) -> Iterator[None]:
    """A large import on PostgreSQL, inside the caller's transaction (which holds the write
    lock): the trigger that marks new memories pending is disabled (`ALTER TABLE ... DISABLE
    TRIGGER`, which blocks other writers of `memory` but no reader), and when the import
    brings at least as many memories as the store holds, the GIN index and the other
    secondary indexes are dropped and built once at the end (a build sorts every entry
    once; growing an index row by row costs several times that). Everything is one
    transaction: a failed import rolls the triggers and the indexes back with its rows.
    Dropping an index takes a lock readers wait on until the import commits, hence only for
    an import the size of the store or more; then the table is analyzed. A user who does not own the table imports through COPY alone."""
    cursor = PostgresqlDatabase.cursor(db)
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
    db.bulk_active = True
    # The builder asks its questions (how a character is normalised, how a word is parsed:
    # functions of the schema, not of this transaction's rows) on a second connection when
    # one can be opened, so they need not wait for the COPYs the writer thread is running.
    side = _side_connection(db) if BULK_WRITER_THREAD else None
    db.fts_builder = postgres_fts.FtsBuilder.open(side.cursor() if side is not None else cursor)
    if db.fts_builder is not None and BULK_WRITER_THREAD:
        db._bulk_writer = _BulkWriter(db.connection(), own_builder=side is not None)
    try:
        yield
        if db._bulk_writer is not None:
            db._bulk_writer.wait()
    finally:
        writer, db._bulk_writer = db._bulk_writer, None
        if writer is not None:
            writer.stop()
        if side is not None:
            side.close()
        db.bulk_active = False
        db.fts_builder = None
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
    db._vacuum_after_commit = (f"VACUUM (SKIP_LOCKED{', ANALYZE' if stale else ''}) memory",
                                 "VACUUM (SKIP_LOCKED) event")


# The levels of `client_min_messages` that let notices through.
_BELOW_WARNING = frozenset({"debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice"})


def _copy(cursor, statement: str, rows, before: str | None = None, after: str | None = None) -> None:
    """One COPY, between the statements that must run right before and after it.

    The server sends no notice while the rows stream: `to_tsvector` (the full-text trigger's)
    says "word is too long to be indexed" for every word of 2,048 characters or more, and
    psycopg, once the rows are sent, waits only to write the end of the COPY, not to read. With
    enough notices the server blocks writing them (`ClientWrite`) and the client blocks writing
    the end: neither moves again (a CI run hung so, under load). Warnings and errors still come."""
    if before:
        cursor.execute(before)
    # For the rest of the transaction (every caller's COPY is inside one), then as it was.
    previous = cursor.execute("SELECT current_setting('client_min_messages')").fetchone()[0]
    quieter = previous in _BELOW_WARNING
    if quieter:
        cursor.execute("SELECT set_config('client_min_messages', 'warning', true)")
    with cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)
    if quieter:
        cursor.execute("SELECT set_config('client_min_messages', %s, true)", (previous,))
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

