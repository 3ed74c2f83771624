"""`memdeck doctor` on a PostgreSQL store: the checks that make sense on a server.

The connection, the schema version (and its record in `schema_migration`), the full-text column
against each memory's text (another program may have written rows with the trigger disabled),
rows that lost their parent, and values out of range. Page-level damage is the server's to find
(`amcheck`), and a server keeps its own backups, so a repair makes no copy first: each repair is
one transaction, and none discards a memory.
"""

from __future__ import annotations

from store.backends import migrations
from store.backends import postgres
from store.backends import postgres_schema
from store.backends.spelling import POSTGRES
from store.backends.doctor_checks import HOMELESS, ORPHANS, clamp_sql, now_args, out_of_range_sql
from store.engine.doctor_report import DoctorReport, Finding
from store.engine.errors import StoreError
from store.engine.limits import EARLIEST_TIME

OUT_OF_RANGE_SQL = out_of_range_sql("%s")
CLAMP_SQL = clamp_sql(POSTGRES.param, POSTGRES.greatest, POSTGRES.least)


def _now_args(sql: str) -> tuple[float, ...]:
    return now_args(sql, "%s")


# A memory whose stored tsvector is not the one its text makes now.
STALE_FTS = """fts IS DISTINCT FROM (
    setweight(to_tsvector('memdeck', memdeck_fts_text(title)), 'A')
    || setweight(to_tsvector('memdeck', memdeck_fts_text(tags)), 'B')
    || setweight(to_tsvector('memdeck', memdeck_fts_text(content)), 'C')
    || setweight(to_tsvector('memdeck', memdeck_fts_text(words)), 'D'))"""


def _open(url: str) -> postgres.PgDatabase:
    postgres._psycopg()
    db = postgres.PgDatabase(postgres.driver_url(url))
    try:
        db.connect()
    except Exception as exc:
        raise postgres.unreachable(url, exc) from None
    return db


def check(url: str) -> DoctorReport:
    db = _open(url)
    try:
        return _report(db, url)
    finally:
        db.close()


def repair(url: str) -> DoctorReport:
    db = _open(url)
    try:
        before = _report(db, url)
        repairs: list[str] = []
        if postgres_schema.version(db) < migrations.SCHEMA_VERSION:
            postgres_schema.migrate(db)
            repairs.append(f"migrated the schema to {migrations.SCHEMA_VERSION}")
        with db.atomic():
            for finding in before.findings:
                if finding.ok or not finding.fixable:
                    continue
                if finding.check == "fts":
                    db.execute_sql(f"UPDATE memory SET words = words WHERE {STALE_FTS}")
                    repairs.append(f"recomputed the full text of {finding.count} memories")
                elif finding.check == "values":
                    db.execute_sql(CLAMP_SQL, _now_args(CLAMP_SQL))
                    db.execute_sql("UPDATE event SET at = LEAST(GREATEST(at, %s), %s) WHERE at < %s OR at > %s",
                                   (EARLIEST_TIME, _now(), EARLIEST_TIME, _now()))
                    repairs.append(f"clamped {finding.count} values into range")
                if finding.check == "vector blocks":
                    from store.backends.vectors import unsound_blocks

                    for block_id, memory_ids in unsound_blocks(db):
                        db.execute_sql("DELETE FROM vector_block WHERE id = %s", (block_id,))
                        db.execute_sql("INSERT INTO memory_pending (memory_id) SELECT id FROM memory "
                                       "WHERE id = ANY(%s) ON CONFLICT DO NOTHING", (memory_ids,))
                    repairs.append(f"dropped {finding.count} unsound vector blocks (their memories are "
                                   "embedded again at the next write or reindex)")
                for name, _, _, fix in ORPHANS:
                    if finding.check == f"orphaned {name}":
                        db.execute_sql(fix)
                        repairs.append(f"dropped {finding.count} orphaned {name}")
                for name, ids_sql, _ in HOMELESS:
                    if finding.check == f"{name} without project":
                        for (project_id,) in db.execute_sql(ids_sql).fetchall():
                            db.execute_sql("INSERT INTO project (id, name, created_at) VALUES (%s, %s, %s) "
                                           "ON CONFLICT (id) DO NOTHING", (project_id, f"recovered-{project_id}", _now()))
                        repairs.append(f"gave {finding.count} {name} a recovered project")
        after = _report(db, url)
        after.repairs = repairs
        return after
    finally:
        db.close()


def _now() -> float:
    import time

    return time.time()


def _report(db, url: str) -> DoctorReport:
    report = DoctorReport(postgres.redacted(url))  # type: ignore[arg-type]
    server = db.execute_sql("SHOW server_version").fetchone()[0]
    report.findings.append(Finding("connection", True, f"PostgreSQL {server}, connected"))
    version = postgres_schema.version(db)
    if version == 0:
        report.findings.append(Finding("schema", False, "an empty database, not yet a store: --fix (or any "
                                       "command) creates memdeck's tables", fixable=True))
        return report
    if version > migrations.SCHEMA_VERSION:
        raise StoreError(f"{postgres.redacted(url)}: written by a newer memdeck (schema {version}, this memdeck "
                         f"knows up to {migrations.SCHEMA_VERSION}); upgrade memdeck. The store was left untouched")
    if version < migrations.SCHEMA_VERSION:
        report.findings.append(Finding("schema", False, f"schema {version} of {migrations.SCHEMA_VERSION}: "
                                       "migrated by --fix (or by any command that opens the store)", fixable=True))
        return report
    recorded = {r[0] for r in db.execute_sql("SELECT version FROM schema_migration")}
    missing = sorted({m.version for m in migrations.MIGRATIONS} - recorded)
    report.findings.append(Finding("schema", not missing, f"schema {version} (the newest)" if not missing else
                                   f"schema {version}, but migrations {missing} are not recorded", count=len(missing)))
    memories = db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]
    stale = db.execute_sql(f"SELECT COUNT(*) FROM memory WHERE {STALE_FTS}").fetchone()[0]
    report.findings.append(
        Finding("fts", True, f"the full text of every memory is up to date ({memories} memories)") if not stale else
        Finding("fts", False, f"{stale} of {memories} memories have full text out of step with their text: "
                "searches can miss them; --fix recomputes it", fixable=True, count=stale))
    from store.backends.vectors import unsound_blocks

    unsound = len(unsound_blocks(db))
    report.findings.append(Finding("vector blocks", not unsound,
                                   f"{unsound} vector blocks memdeck could not have written (ids and sizes that "
                                   "do not agree): primes leave them out; --fix drops them" if unsound else
                                   "every vector block holds as many vectors of one size as it names",
                                   fixable=bool(unsound), count=unsound))
    for name, what, count_sql, _ in ORPHANS:
        count = db.execute_sql(count_sql).fetchone()[0]
        report.findings.append(Finding(f"orphaned {name}", count == 0,
                                       f"{count} {what}: --fix drops them" if count else f"no {what}",
                                       fixable=bool(count), count=count))
    for name, _, count_sql in HOMELESS:
        count = db.execute_sql(count_sql).fetchone()[0]
        report.findings.append(Finding(f"{name} without project", count == 0,
                                       f"{count} {name} of a project that no longer exists: --fix gives them a "
                                       "project named recovered-<id>" if count else f"every one of the {name} has its project",
                                       fixable=bool(count), count=count))
    count = db.execute_sql(f"SELECT COUNT(*) FROM memory WHERE {OUT_OF_RANGE_SQL}", _now_args(OUT_OF_RANGE_SQL)).fetchone()[0]
    events = db.execute_sql("SELECT COUNT(*) FROM event WHERE at < %s OR at > %s", (EARLIEST_TIME, _now())).fetchone()[0]
    report.findings.append(Finding("values", not count and not events,
                                   "every confidence is within 0 to 1, every time within range" if not count and not events
                                   else f"{count} memories and {events} events hold a value out of range: --fix clamps them",
                                   fixable=bool(count or events), count=count + events))
    return report
