"""An SQLite store file: checking it is a memdeck store memdeck can use, migrating an older one
after a backup copy, and connecting with the pragmas of `store.backends.sqlite_schema`.

A file that is not SQLite, is another program's database, is damaged, or was written by a newer
memdeck is refused with a `StoreError`, and nothing is written to it.
"""

from __future__ import annotations

import sqlite3
import stat
import time
from pathlib import Path

from peewee import OperationalError, SqliteDatabase

from store.backends.sqlite_schema import PRAGMAS
from store.backends import migrations
from store.engine.diagnosis import access_trouble, describe
from store.engine.errors import StoreError

SQLITE_HEADER = b"SQLite format 3\x00"


def inspect_store(path: Path) -> int:
    """The schema version of an existing store, read without writing anything to it."""
    # While a write-ahead log holds frames, another process may be checkpointing them: page 1
    # (with the new page count) is written before the pages that grow the file, so a store in
    # use can look truncated for an instant. Its size is then not judged (damage is left to the
    # query that meets it). Looked at before the header, which a checkpoint changes.
    try:
        in_use = path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        in_use = False
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the store: {exc.strerror}") from None
    if len(header) == 0:
        return 0  # an empty file: SQLite treats it as a new database
    if not header.startswith(SQLITE_HEADER):
        raise StoreError(f"{path}: not a memdeck store (not an SQLite database); left untouched")
    if problem := _header_problem(path, header, in_use):
        raise StoreError(f"{path}: the store is damaged ({problem}); left untouched")
    try:
        conn = _read_connection(path)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            # A whole-file check reads every page (0.4 s at 100k memories): only before a
            # migration. Damage met later is reported by the command that meets it.
            migrating = 0 < version < migrations.SCHEMA_VERSION
            check = conn.execute("PRAGMA quick_check").fetchone()[0] if migrating else "ok"
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise describe(exc, path) from None
    if check != "ok":
        raise StoreError(f"{path}: the store is damaged ({check}); left untouched")
    if version > migrations.SCHEMA_VERSION:
        raise StoreError(
            f"{path}: written by a newer memdeck (schema {version}, this memdeck knows up to "
            f"{migrations.SCHEMA_VERSION}); upgrade memdeck. The store was left untouched"
        )
    if version == 0 and tables - {"sqlite_sequence"}:
        raise StoreError(f"{path}: an SQLite database of another program, not a memdeck store; left untouched")
    if version > 0 and "memory" not in tables:
        raise StoreError(f"{path}: not a memdeck store (no memory table); left untouched")
    return version


def _read_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection, even where SQLite cannot create the -shm file reading needs (a
    read-only folder): there no one can be writing, so the file is read as immutable."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA user_version").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_CANTOPEN or access_trouble(path) is None:
            raise
        return sqlite3.connect(f"file:{path}?immutable=1", uri=True)


def _header_problem(path: Path, header: bytes, in_use: bool) -> str | None:
    """What the 100-byte SQLite header says is wrong with the file's size, if anything."""
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if len(header) < 100 or page_size < 512 or page_size & (page_size - 1):
        return "its header is damaged"
    size = path.stat().st_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is valid when the change counter matches its "valid for" copy.
    if size % page_size or (not in_use and header[24:28] == header[92:96] and size < pages * page_size):
        return f"truncated: {size} bytes"
    return None


def backup_path(path: Path, version: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return path.with_name(f"{path.name}.v{version}-{stamp}.bak")


def _backup(path: Path, version: int) -> Path:
    """Copy the store aside before a migration."""
    return copy_store(path, backup_path(path, version))


def copy_store(path: Path, target: Path, *, immutable: bool = False) -> Path:
    """Copy the store at `path` to `target` through SQLite, so a WAL store copies whole.
    `immutable`: write nothing beside the store (no -wal, no -shm), for a store no one can be
    writing (a read-only folder has no room for them)."""
    source = sqlite3.connect(f"file:{path}?{'immutable=1' if immutable else 'mode=ro'}", uri=True)
    try:
        dest = sqlite3.connect(target)
        try:
            source.backup(dest)
        finally:
            dest.close()
    finally:
        source.close()
    return target


def apply_migrations(db: SqliteDatabase, current: int, target: int = migrations.SCHEMA_VERSION) -> None:
    with db.atomic():
        # Several processes may open a new store at once: the write lock is held now, so the
        # version is read again and a store another process has just migrated is left alone.
        current = max(current, db.execute_sql("PRAGMA user_version").fetchone()[0])
        db.execute_sql(migrations.MIGRATION_TABLE)
        for migration in migrations.pending(current, target):
            for statement in migration.statements():
                if callable(statement):
                    statement(db)
                else:
                    db.execute_sql(statement)
            db.execute_sql(
                "INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            db.execute_sql(f"PRAGMA user_version = {int(migration.version)}")


def connect_file(path: Path | str, *, target_version: int = migrations.SCHEMA_VERSION) -> tuple[SqliteDatabase, Path | None]:
    """Open (creating if needed) the store file at `path`, migrated to `target_version`.

    Returns the database and the path of the backup made before migrating, if one was.
    `target_version` below the newest exists for tests that build an old store."""
    path = Path(path)
    if str(path) != ":memory:":
        path = path.expanduser()
        refuse_non_file(path)
        version = inspect_store(path) if path.exists() else 0
        if not path.exists():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"{path.parent}: cannot create the store's folder: {exc.strerror}") from None
    else:
        version = 0
    backup = None
    if 0 < version < target_version:
        backup = _backup(path, version)
    db = SqliteDatabase(
        str(path),
        pragmas=PRAGMAS,
        timeout=30,
        lock_type="IMMEDIATE",  # take the write lock up front: no deadlock on read-then-write
        check_same_thread=False,
    )
    try:
        _connect_setting_pragmas(db)
        if version < target_version:
            apply_migrations(db, version, target_version)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise describe(exc, path) from None
    return db, backup


def refuse_non_file(path: Path) -> None:
    """A store is a regular file: a FIFO would hang the open, a device or a folder is no store."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing (a new store) or unreachable: the open says which
    if stat.S_ISDIR(mode):
        raise StoreError(f"{path}: is a directory, not a store file")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise StoreError(f"{path}: is {kind}, not a store file; memdeck keeps its store in a regular file")


def _connect_setting_pragmas(db: SqliteDatabase, wait: float = 30.0) -> None:
    """`db.connect()`, which sets `PRAGMAS`. Processes that create one store at once each switch
    the new file to WAL, and SQLite answers a switch made while another process holds the file
    with "database is locked" at once, without the busy wait: that connect is tried again."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.connect()
            return
        except OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.01)
