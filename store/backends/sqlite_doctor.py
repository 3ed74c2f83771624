"""`memdeck doctor`: checking a store file for damage and repairing what is safe to repair.

The checks, in order: the file is a memdeck store at all (the same checks as opening it), its
schema version, SQLite's own `PRAGMA integrity_check`, the full-text index against the memory
table (FTS5's integrity check, which compares the index with the rows, and the number of
documents indexed), rows that lost their parent: events of a memory that is gone, activities
of a session that is gone, memories and sessions of a project that is gone, and values outside
the ranges of `store.engine.limits` (a confidence above 1, a year 9999, a use in the future) that an
older memdeck or another tool wrote.

A repair runs only when asked (`repair=True`), only on a store whose pages are sound, and only
after a backup copy beside the store. What it does never discards a memory: the full-text index
is rebuilt from the memory table, orphaned events, anchors and activities (whose memory or session no
longer exists) are dropped, memories and sessions of a missing project are given a project again
(`recovered-<id>`), values out of range are clamped into it, and an older schema is migrated. Damaged pages are not repaired: the copy a
user wants then is a backup of their own, and doctor says so.

Doctor uses its own plain connection, and writes nothing unless repairing, so it can examine a
store that `Store.open` would migrate.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

from store.backends import sqlite_schema as dialect
from store.backends.spelling import SQLITE
from store.backends.sqlite_file import connect_file, copy_store, inspect_store
from store.backends import migrations
from store.engine.diagnosis import DAMAGED, access_trouble, describe, disk_full, full_disk
from store.backends.doctor_checks import HOMELESS, INTEGRITY_LINES, ORPHANS, clamp_sql, now_args, out_of_range_sql
from store.engine.doctor_report import DoctorReport, Finding  # noqa: F401 (re-exported for the CLI and tests)
from store.engine.errors import StoreError
from store.engine.limits import EARLIEST_TIME, TIME_RANGE

OUT_OF_RANGE_SQL = out_of_range_sql("?")
CLAMP_SQL = clamp_sql(SQLITE.param, SQLITE.greatest, SQLITE.least)


def _now_args(sql: str) -> tuple[float, ...]:
    return now_args(sql, "?")


def _open(path: Path) -> sqlite3.Connection:
    # Read-write even to check: FTS5's integrity check is an INSERT of a command (it writes
    # nothing, but SQLite refuses it on a read-only connection).
    conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def check(path: Path) -> DoctorReport:
    """Every check, writing nothing. A file that is not a usable store raises `StoreError`.

    A store memdeck cannot write (a read-only file, folder or file system, a full disk) is checked
    whole on a copy elsewhere, read without writing anything beside it: that is a note, not damage.
"""
    path = Path(path).expanduser()
    if not path.is_file():
        raise StoreError(f"{path}: no store here (doctor checks an existing store; it creates none)")
    trouble = access_trouble(path) or (full_disk(path) if disk_full(path) else None)
    if trouble is None:
        report = _check_file(path)
        report.findings.insert(0, Finding("access", True, "the store and its folder are writable"))
        return report
    with tempfile.TemporaryDirectory(prefix="memdeck-doctor-") as folder:
        report = _check_file(_read_only_copy(path, Path(folder) / path.name))
    report.path = path
    report.findings.insert(0, Finding("access", True, str(trouble), note=True))
    return report


def _check_file(path: Path) -> DoctorReport:
    version = inspect_store(path)
    report = DoctorReport(path)
    conn = _open(path)
    try:
        report.findings = _findings(conn, version)
    except sqlite3.DatabaseError as exc:
        trouble = describe(exc, path)
        if trouble.kind != DAMAGED:
            raise trouble from None  # locked, full, ...: not damage, and said as what it is
        report.findings.append(Finding("integrity", False, str(trouble)))
    finally:
        conn.close()
    return report


def _read_only_copy(path: Path, target: Path) -> Path:
    """A copy of a store memdeck cannot write, made without writing anything beside it."""
    try:
        return copy_store(path, target, immutable=True)
    except sqlite3.DatabaseError as exc:
        raise describe(exc, path) from None




def _findings(conn: sqlite3.Connection, version: int) -> list[Finding]:
    if version == 0:
        return [Finding("schema", False, "an empty file, not yet a store: --fix (or any command) "
                        "creates its tables", fixable=True)]
    findings = [_schema(conn, version)]
    integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    if integrity != ["ok"]:
        shown = "; ".join(integrity[:INTEGRITY_LINES])
        findings.append(Finding("integrity", False, f"SQLite finds damaged pages: {shown}. Doctor "
                                "cannot repair them: restore a backup, or salvage rows with "
                                "`sqlite3 STORE .recover`", count=len(integrity)))
        return findings  # reading further through broken pages proves nothing
    findings.append(Finding("integrity", True, "integrity_check: ok"))
    if version >= 2:
        findings.append(_full_text(conn))
    findings += _orphans(conn, version)
    findings.append(_values(conn))
    return findings


def _values(conn: sqlite3.Connection) -> Finding:
    count = conn.execute(f"SELECT COUNT(*) FROM memory WHERE {OUT_OF_RANGE_SQL}", _now_args(OUT_OF_RANGE_SQL)).fetchone()[0]
    events = conn.execute("SELECT COUNT(*) FROM event WHERE at < ? OR at > ?", (EARLIEST_TIME, time.time())).fetchone()[0]
    if not count and not events:
        return Finding("values", True, "every confidence is within 0 to 1, every time within "
                       f"{TIME_RANGE.split(' to ')[0]} to now")
    return Finding("values", False, f"{count} memories and {events} events hold a confidence outside 0 to 1 "
                   "or a time before 1970 or in the future (written by an older memdeck or another tool; "
                   "they are read as the nearest value in range): --fix clamps them", fixable=True,
                   count=count + events)


def _schema(conn: sqlite3.Connection, version: int) -> Finding:
    recorded = {row[0] for row in conn.execute("SELECT version FROM schema_migration")}
    expected = {m.version for m in migrations.MIGRATIONS if m.version <= version}
    if version < migrations.SCHEMA_VERSION:
        return Finding("schema", False, f"schema {version} of {migrations.SCHEMA_VERSION}: migrated after "
                       "a backup by --fix (or by any command that opens the store)", fixable=True)
    if recorded != expected:
        missing = sorted(expected - recorded)
        return Finding("schema", False, f"schema {version}, but migrations {missing} are not recorded "
                       "in schema_migration", count=len(missing))
    return Finding("schema", True, f"schema {version} (the newest)")


def _full_text(conn: sqlite3.Connection) -> Finding:
    memories = conn.execute("SELECT COUNT(*) FROM memory").fetchone()[0]
    # One row per indexed document: the count of what the index holds, not of the memory table
    # (a plain count of an external-content table reads the content table).
    indexed = conn.execute(dialect.FTS_DOCUMENTS_SQL).fetchone()[0]
    try:
        conn.execute(dialect.FTS_INTEGRITY_SQL)
        agrees = True
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_CORRUPT:
            raise
        agrees = False
    if agrees and indexed == memories:
        return Finding("fts", True, f"full-text index agrees with the memory table ({memories} memories)")
    return Finding("fts", False, f"full-text index out of step with the memory table ({indexed} indexed, "
                   f"{memories} memories): searches can miss or misreport memories; --fix rebuilds it",
                   fixable=True, count=abs(memories - indexed) or 1)


def _orphans(conn: sqlite3.Connection, version: int) -> list[Finding]:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    findings = []
    for name, what, count_sql, _ in ORPHANS:
        if {"activities": "activity", "anchors": "anchor"}.get(name, "event") not in tables:
            continue  # a store older than that table
        count = conn.execute(count_sql).fetchone()[0]
        findings.append(Finding(f"orphaned {name}", count == 0,
                                f"{count} {what}: --fix drops them" if count else f"no {what}",
                                fixable=bool(count), count=count))
    for name, _, count_sql in HOMELESS:
        if name == "sessions" and "session" not in tables:
            continue
        count = conn.execute(count_sql).fetchone()[0]
        findings.append(Finding(f"{name} without project", count == 0,
                                f"{count} {name} of a project that no longer exists: --fix gives them a "
                                "project named recovered-<id>" if count else f"every one of the {name} has its project",
                                fixable=bool(count), count=count))
    return findings


def repair(path: Path) -> DoctorReport:
    """Check, and if anything safe needs repair, back the store up and repair it in one
    transaction; then check again. The report holds the second check, the backup and the repairs."""
    before = check(path)
    if before.ok or before.damaged:
        return before
    access = access_trouble(before.path)
    if access is not None:
        raise access  # nothing can be repaired in a store memdeck cannot write
    backup = backup_before_repair(before.path)
    repairs: list[str] = []
    failing = {f.check: f for f in before.findings if not f.ok}
    if "schema" in failing:
        db, _ = connect_file(before.path)  # migrates (its own backup copy is made too)
        db.close()
        repairs.append(f"migrated the schema to {migrations.SCHEMA_VERSION}")
    conn = _open(before.path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        for name, _, _, delete_sql in ORPHANS:
            if f"orphaned {name}" in failing:
                dropped = conn.execute(delete_sql).rowcount
                repairs.append(f"dropped {dropped} orphaned {name}")
        for name, projects_sql, _ in HOMELESS:
            if f"{name} without project" in failing:
                for (project_id,) in conn.execute(projects_sql).fetchall():
                    _recreate_project(conn, project_id)
                    repairs.append(f"gave {name} of missing project {project_id} the project recovered-{project_id}")
        if "values" in failing:
            clamped = conn.execute(CLAMP_SQL, _now_args(CLAMP_SQL)).rowcount
            now = time.time()
            moved = conn.execute("UPDATE event SET at = MIN(MAX(at, ?), ?) WHERE at < ? OR at > ?",
                                 (EARLIEST_TIME, now, EARLIEST_TIME, now)).rowcount
            repairs.append(f"clamped the values of {clamped} memories and {moved} events into range")
        if "fts" in failing:
            conn.execute(dialect.FTS_REBUILD_SQL)
            repairs.append("rebuilt the full-text index from the memory table")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    after = check(before.path)
    after.backup, after.repairs = backup, repairs
    return after


def _recreate_project(conn: sqlite3.Connection, project_id: int) -> None:
    exists = conn.execute("SELECT 1 FROM project WHERE id = ?", (project_id,)).fetchone()
    if not exists:
        conn.execute("INSERT INTO project (id, name, root, created_at) VALUES (?, ?, NULL, ?)",
                     (project_id, f"recovered-{project_id}", time.time()))


def backup_before_repair(path: Path) -> Path:
    target = path.with_name(f"{path.name}.doctor-{time.strftime('%Y%m%d-%H%M%S')}.bak")
    return copy_store(path, target)
