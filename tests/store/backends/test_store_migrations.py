"""Opening store files: an older schema is migrated after a backup copy; a damaged, foreign or
newer file is refused with a clear message and left byte-for-byte as it was."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from peewee import SqliteDatabase

from store import Config, Store, StoreError
from store.backends import sqlite as dialect
from store.backends.opening import connect
from store.backends.migrations import MIGRATIONS, SCHEMA_VERSION
from store.browse.search import full_text
from tests.damage_support import (write_damaged_pages, write_foreign, write_newer, write_random,
                                  write_truncated, write_zeroed_header)
from tests.process_support import CHILD_GATE, StartGate


def open_store(path, clock) -> Store:
    return Store.open(path, project="demo", clock=clock, config=Config.defaults())


def build_v1_store(path) -> None:
    """A store as the first memdeck wrote it: core tables only, no full-text index, no sessions."""
    db, backup = connect(path, target_version=1)
    assert backup is None
    db.execute_sql("INSERT INTO project (id, name, created_at) VALUES (1, 'demo', 1.0)")
    for n, text in enumerate(["Jellyfin takes 60s to start", "Sonarr needs a restart after upgrades"]):
        db.execute_sql(
            "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
            "created_at, updated_at, status_changed_at, content_hash) "
            "VALUES (?, 1, 'timing', ?, ?, 0.7, 'explicit', 'active', 1.0, 1.0, 1.0, 'x')",
            (f"mem-1700000000-000{n}", text, text),
        )
    db.execute_sql("INSERT INTO event (memory_id, kind, at, actor, confidence_after) "
                   "VALUES ('mem-1700000000-0000', 'created', 1.0, 'cli', 0.7)")
    db.close()


def read_one(path, sql: str):
    """The first value `sql` reads from the SQLite file at `path`, on a connection of its own."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def user_version(path) -> int:
    return read_one(path, "PRAGMA user_version")


def test_a_new_store_is_created_at_the_newest_schema(db_path, clock):
    with open_store(db_path, clock) as store:
        assert store.backup is None
        assert store.db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        names = [r[0] for r in store.db.execute_sql("SELECT name FROM schema_migration ORDER BY version")]
        assert len(names) == len(MIGRATIONS)
    assert user_version(db_path) == SCHEMA_VERSION


def test_an_old_store_is_backed_up_then_migrated_and_keeps_its_memories(db_path, clock):
    build_v1_store(db_path)
    with open_store(db_path, clock) as store:
        assert store.backup is not None and store.backup.exists()
        assert store.backup.name.startswith("memdeck.db.v1-")
        assert [h.memory.id for h in full_text(store, "jellyfin")] == ["mem-1700000000-0000"]
        assert [e.kind for e in store.events("mem-1700000000-0000")] == ["created"]
        # the migrated store works like a new one: sessions, and the index follows new writes
        store.sessions.ensure("s-1")
        added = store.add("Jellyfin needs port 8096", type="dependency").memory
        assert [h.memory.id for h in full_text(store, "8096")] == [added.id]
        backup = store.backup
    assert user_version(db_path) == SCHEMA_VERSION
    assert user_version(backup) == 1  # the copy is the store as it was
    with open_store(db_path, clock) as again:
        assert again.backup is None  # nothing left to migrate, no second copy


def test_each_step_of_a_partial_migration(db_path, clock):
    db, _ = connect(db_path, target_version=2)
    db.close()
    with open_store(db_path, clock) as store:
        assert store.backup.name.startswith("memdeck.db.v2-")
        assert store.sessions.ensure("s-1").id == "s-1"


def test_several_processes_opening_a_new_store_at_once_migrate_it_once(tmp_path):
    """The second opener waits for the first's migration and finds nothing left to do."""
    path, gate = tmp_path / "shared.db", StartGate(tmp_path)
    # Each process imports first, then waits at the gate, so all four open the store together.
    code = CHILD_GATE + ("import sys; from store.backends.opening import connect\n"
                         "at_the_gate(sys.argv[2], sys.argv[3])\n"
                         "db, _ = connect(sys.argv[1]); print(db.execute_sql('PRAGMA user_version').fetchone()[0])")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(gate.ready_file()), str(gate.go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    gate.open(procs)
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in results]
    assert {out.strip() for out, _ in results} == {str(SCHEMA_VERSION)}


def test_a_new_store_opens_while_another_process_is_creating_it(tmp_path, monkeypatch):
    """Switching a new file to WAL while another connection is writing it is refused by SQLite at
    once ("database is locked", without the busy wait): the opener tries again once the other
    is done, instead of failing (4 processes opening one new store together failed so about one
    time in thirty)."""
    path = tmp_path / "new.db"
    creator = sqlite3.connect(path, isolation_level=None)
    creator.execute("BEGIN IMMEDIATE")  # another process in the middle of creating the file
    refused = []
    real_connect = SqliteDatabase._connect

    def connecting(self):
        try:
            return real_connect(self)
        except sqlite3.OperationalError as exc:
            refused.append(str(exc))
            if creator.in_transaction:
                creator.execute("COMMIT")  # the creator is done
            raise

    monkeypatch.setattr(SqliteDatabase, "_connect", connecting)
    db, _ = connect(path)
    try:
        assert refused == ["database is locked"]
        assert db.execute_sql("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()
        creator.close()


# -- files memdeck must refuse -------------------------------------------------------------------

@pytest.mark.parametrize("damage, message", [
    ("random", "not an SQLite database"),
    ("truncated", "damaged"),
    ("zeroed", "not an SQLite database"),
    ("foreign", "another program"),
    ("newer", "newer memdeck"),
])
def test_a_file_memdeck_cannot_use_is_refused_and_left_untouched(db_path, clock, damage, message, run_cli):
    makers = {"random": write_random, "truncated": write_truncated, "foreign": write_foreign,
              "zeroed": lambda p: write_zeroed_header(p, clock), "newer": lambda p: write_newer(p, clock)}
    makers[damage](db_path)
    before = db_path.read_bytes()
    neighbours = set(os.listdir(db_path.parent))
    with pytest.raises(StoreError, match=message):
        open_store(db_path, clock)
    result = run_cli("add", "Plex needs port 32400", "--type", "dependency")
    assert result.returncode == 3
    assert message in result.stderr and "Traceback" not in result.stderr
    assert db_path.read_bytes() == before
    assert not any(name.endswith(".bak") for name in set(os.listdir(db_path.parent)) - neighbours)


def test_a_directory_is_not_a_store(tmp_path, clock):
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path, clock)


def test_damage_inside_a_store_is_reported_by_the_command_that_meets_it(db_path, clock, run_cli):
    """Opening checks the header and the schema, not every page (that costs 0.4 s at 100k
    memories): a damaged page inside is met by the query that reads it, exit 3, no traceback."""
    data = write_damaged_pages(db_path, clock)
    result = run_cli("list", "--limit", "0", "--json")
    assert result.returncode == 3
    assert "the store is damaged (database disk image is malformed)" in result.stderr
    assert "Traceback" not in result.stderr
    assert db_path.read_bytes() == bytes(data)


def test_migration_10_adds_a_prefix_index_that_finds_what_a_merge_found(db_path, clock):
    """A store at schema 9 (no prefix index) migrates; short and long prefixes find the same
    memories as before, and the index follows writes made after."""
    db, _ = connect(db_path, target_version=9)
    db.execute_sql("INSERT INTO project (id, name, created_at) VALUES (1, 'demo', 1.0)")
    titles = ["Webhook retries need a cap", "Website builds cache fonts", "Web socket pings every 30s",
              "Queue workers restart nightly", "Weekly report runs at noon"]
    for n, title in enumerate(titles):
        db.execute_sql(
            "INSERT INTO memory (id, project_id, type, title, content, confidence, source, status, "
            "created_at, updated_at, status_changed_at, content_hash) "
            "VALUES (?, 1, 'fix', ?, ?, 0.7, 'explicit', 'active', 1.0, 1.0, 1.0, 'x')",
            (f"mem-1700000000-000{n}", title, title))
    prefixes = ['"we"*', '"web"*', '"webh"*', '"wo"*', '"que"*', '"q"*']

    def matches(run) -> dict[str, list[int]]:
        return {p: [r[0] for r in run("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid",
                                      (p,))] for p in prefixes}

    before = matches(lambda sql, args: db.execute_sql(sql, args).fetchall())
    db.close()
    assert "prefix" not in sqlite_sql(db_path)
    with open_store(db_path, clock) as store:
        assert store.backup.name.startswith("memdeck.db.v9-")
        assert matches(lambda sql, args: store.db.execute_sql(sql, args).fetchall()) == before
        assert before['"web"*'] == [1, 2, 3] and before['"we"*'] == [1, 2, 3, 5]
        store.db.execute_sql(dialect.FTS_INTEGRITY_SQL)
        added = store.add("Webpack splits the vendor bundle", type="fix").memory
        assert added.id in {h.memory.id for h in full_text(store, "web", prefix_last=True)}
        store.edit("mem-1700000000-0000", title="Hook retries need a cap", content="Hook retries need a cap")
        assert "mem-1700000000-0000" not in {h.memory.id for h in full_text(store, "we", prefix_last=True)}
    assert "prefix='2 3'" in sqlite_sql(db_path)


def sqlite_sql(path) -> str:
    return read_one(path, "SELECT sql FROM sqlite_master WHERE name = 'memory_fts'")
