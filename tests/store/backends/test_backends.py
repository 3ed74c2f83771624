"""The back-end interface (`store.backends.base.Backend`): one typed interface, two implementations,
and nothing outside `store/backends/` that tells the back-ends apart by looking at the database
object or the store's location."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from store.backends.base import Backend
from store.backends.postgres_backend import PostgresBackend
from store.backends.sqlite import SqliteBackend
from tests.data_support import ROOT

# A back-end told apart by duck typing or by its location's spelling.
SNIFFING = re.compile(r"\bhasattr\([^)]*\bdb\b|\bgetattr\([^)]*\bdb\b|\bis_url\(|hasattr\(connection")


def test_both_back_ends_implement_every_operation():
    for backend in (SqliteBackend, PostgresBackend):
        assert not inspect.isabstract(backend), backend.__abstractmethods__
        assert issubclass(backend, Backend)


def test_nothing_outside_the_back_ends_sniffs_which_one_it_has():
    found = []
    for path in [*ROOT.glob("store/**/*.py"), *ROOT.glob("tui/**/*.py")]:
        if "store/backends/" in path.as_posix():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if SNIFFING.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


@pytest.mark.parametrize("backend", [SqliteBackend, PostgresBackend])
def test_the_spellings_of_each_back_end(backend):
    b = backend.__new__(backend)
    assert b.marks(3) == ", ".join([backend.param] * 3)
    assert "memory.title" in b.nocase("memory.title")
    assert "x" in b.greatest("x", "0") and "x" in b.least("x", "1")
    assert b.insert_ignore("memory_pending", ("memory_id",)).startswith("INSERT")


# SQLite's declared types and the PostgreSQL types migrations use for them.
TYPES = {
    "INTEGER": {"integer", "bigint", "smallint"},
    "REAL": {"double precision"},
    "TEXT": {"text"},
    "BLOB": {"bytea"},
}
# Columns only PostgreSQL has: its rowid (SQLite's is implicit) and full text (FTS5's is a table).
SERVER_ONLY = {"memory": {"rowid", "fts", "doclen"}}


def _pg_type(sqlite_type: str) -> set[str]:
    if sqlite_type.startswith("VARCHAR"):
        return {"character varying"}
    return TYPES[sqlite_type]


POSTGRES_ONLY = {"memdeck_review"}


def test_both_schemas_have_the_same_tables_and_columns_after_every_migration(tmp_path, postgres_server):
    """The schema is written twice (`store.backends.migrations` for SQLite, `postgres_schema` for
    PostgreSQL): after all migrations every table has the same columns, in the same order, with
    the same nullability and matching types."""
    import sqlite3

    import psycopg

    from store.backends.opening import connect

    db, _ = connect(tmp_path / "parity.db")
    db.close()
    url = postgres_server.fresh_database()
    lite = sqlite3.connect(tmp_path / "parity.db")
    server = psycopg.connect(url)
    try:
        tables = [r[0] for r in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_fts%' "
            "AND name != 'sqlite_sequence' ORDER BY name")]
        # The approvals of a team with review are the server's to keep (issue 41): a file has no
        # members to hold to review, so its migration 15 adds nothing.
        assert tables == [r[0] for r in server.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
            if r[0] not in POSTGRES_ONLY]
        for table in tables:
            ours = [(name, kind, bool(notnull) or bool(pk)) for _, name, kind, notnull, _, pk
                    in lite.execute(f"PRAGMA table_info({table})")]
            theirs = [(name, kind, nullable == "NO") for name, kind, nullable in server.execute(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position", (table,))
                if name not in SERVER_ONLY.get(table, ())]
            assert [(n, null) for n, _, null in ours] == [(n, null) for n, _, null in theirs], table
            for (name, kind, _), (_, pg_kind, _) in zip(ours, theirs):
                assert pg_kind in _pg_type(kind), (table, name, kind, pg_kind)
    finally:
        lite.close()
        server.close()


def test_the_memory_columns_are_said_once():
    """The model's fields are the memory table's columns; an import writes them all but the
    version and the words; a read selects a `Memory`'s fields."""
    import sqlite3
    import tempfile

    from store.backends.memory_table import MEMORY_COLUMNS
    from store.backends.opening import connect
    from store.engine.models import MemoryRow
    from store.engine.records import Memory
    from store.interop.import_writes import MEMORY_INSERT_COLUMNS

    with tempfile.TemporaryDirectory() as folder:
        db, _ = connect(Path(folder) / "m.db")
        db.close()
        with sqlite3.connect(Path(folder) / "m.db") as conn:
            table = [r[1] for r in conn.execute("PRAGMA table_info(memory)")]
    model = [f.column_name for f in MemoryRow._meta.sorted_fields]
    assert model == table
    assert MEMORY_INSERT_COLUMNS == tuple(c for c in model if c not in ("version", "words"))
    read = [name for name in Memory.__dataclass_fields__ if name != "layer"]  # the store read, not a column
    assert len(MEMORY_COLUMNS) == len(read)
    assert set(read) - {"project", "anchor_status"} <= {f.name for f in MemoryRow._meta.sorted_fields}
