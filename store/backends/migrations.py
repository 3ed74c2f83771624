"""The store's schema, as an ordered list of named migrations.

A store's schema version is `PRAGMA user_version`; each migration applied is also recorded by
name in `schema_migration`. Migrations are written as the SQL of their day, never generated
from the current models, so an old store always migrates through the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from store.backends import sqlite_schema as dialect


# A step of a migration: SQL, or a function of the database for data SQL alone cannot convert.
Statement = str | Callable[[Any], None]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: Callable[[], list[Statement]]


def _core_tables() -> list[str]:
    return [
        """CREATE TABLE project (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name VARCHAR(255) NOT NULL UNIQUE,
            root TEXT,
            created_at REAL NOT NULL
        )""",
        """CREATE TABLE memory (
            id VARCHAR(32) NOT NULL PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES project (id) ON DELETE CASCADE,
            type VARCHAR(64) NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            confidence REAL NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            file_refs TEXT NOT NULL DEFAULT '[]',
            scope VARCHAR(255),
            hat VARCHAR(64),
            source VARCHAR(32) NOT NULL,
            status VARCHAR(16) NOT NULL,
            protected INTEGER NOT NULL DEFAULT 0,
            session_id VARCHAR(255),
            task TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_used_at REAL,
            verified_at REAL,
            decayed_at REAL,
            status_changed_at REAL NOT NULL,
            use_count INTEGER NOT NULL DEFAULT 0,
            supersedes VARCHAR(32),
            content_hash VARCHAR(64) NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE INDEX memory_project_status_confidence ON memory (project_id, status, confidence DESC)",
        "CREATE INDEX memory_project_type_scope ON memory (project_id, type, scope)",
        "CREATE INDEX memory_project_updated ON memory (project_id, updated_at DESC)",
        "CREATE INDEX memory_project_hat ON memory (project_id, hat)",
        "CREATE INDEX memory_content_hash ON memory (project_id, content_hash)",
        "CREATE INDEX memory_session ON memory (session_id)",
        """CREATE TABLE event (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id VARCHAR(32) NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
            kind VARCHAR(32) NOT NULL,
            at REAL NOT NULL,
            actor VARCHAR(64) NOT NULL,
            session_id VARCHAR(255),
            confidence_before REAL,
            confidence_after REAL,
            detail TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE INDEX event_memory_at ON event (memory_id, at)",
        "CREATE INDEX event_at ON event (at)",
    ]


def _full_text_index() -> list[str]:
    return [
        """CREATE VIRTUAL TABLE memory_fts USING fts5(
            title, content, tags,
            content='memory', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory BEGIN
            INSERT INTO memory_fts(rowid, title, content, tags)
            VALUES (new.rowid, new.title, new.content, new.tags);
        END""",
        """CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, title, content, tags)
            VALUES ('delete', old.rowid, old.title, old.content, old.tags);
        END""",
        """CREATE TRIGGER memory_fts_update AFTER UPDATE OF title, content, tags ON memory BEGIN
            INSERT INTO memory_fts(memory_fts, rowid, title, content, tags)
            VALUES ('delete', old.rowid, old.title, old.content, old.tags);
            INSERT INTO memory_fts(rowid, title, content, tags)
            VALUES (new.rowid, new.title, new.content, new.tags);
        END""",
        "INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')",
    ]


def _sessions() -> list[str]:
    return [
        """CREATE TABLE session (
            id VARCHAR(255) NOT NULL PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES project (id) ON DELETE CASCADE,
            agent VARCHAR(64),
            hat VARCHAR(64),
            task TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            source_path TEXT,
            files_touched TEXT NOT NULL DEFAULT '[]',
            meta TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE INDEX session_project_started ON session (project_id, started_at DESC)",
        """CREATE TABLE activity (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id VARCHAR(255) NOT NULL REFERENCES session (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            at REAL NOT NULL,
            kind VARCHAR(32) NOT NULL,
            summary TEXT NOT NULL,
            memory_id VARCHAR(32),
            detail TEXT NOT NULL DEFAULT '{}'
        )""",
        "CREATE UNIQUE INDEX activity_session_seq ON activity (session_id, seq)",
        "CREATE INDEX activity_memory ON activity (memory_id)",
    ]


def _listing_indexes() -> list[str]:
    # The first page of "everything by confidence" (or by creation) at 100k memories: without
    # these, SQLite sorts every memory of the project (~0.3 s) to show 50.
    return [
        "CREATE INDEX memory_project_confidence ON memory (project_id, confidence DESC)",
        "CREATE INDEX memory_project_created ON memory (project_id, created_at DESC)",
    ]


def _memory_version() -> list[str]:
    # Every write of a memory bumps its version; a writer says which version it read, and the
    # write happens only if that is still the one stored (compare-and-set, docs/reliability.md).
    return ["ALTER TABLE memory ADD COLUMN version INTEGER NOT NULL DEFAULT 1"]


# The derived tables as migration 6 made them (one vector row per memory, until migration 8).
_DERIVED_SCHEMA_6 = [
    """CREATE TABLE memory_vector (
        memory_id VARCHAR(32) NOT NULL PRIMARY KEY REFERENCES memory (id) ON DELETE CASCADE,
        project_id INTEGER NOT NULL,
        model VARCHAR(128) NOT NULL,
        vector BLOB NOT NULL
    )""",
    "CREATE INDEX memory_vector_project ON memory_vector (project_id, model)",
    """CREATE TRIGGER memory_vector_project AFTER UPDATE OF project_id ON memory BEGIN
        UPDATE memory_vector SET project_id = new.project_id WHERE memory_id = new.id;
    END""",
    """CREATE TABLE memory_pending (
        memory_id VARCHAR(32) NOT NULL PRIMARY KEY REFERENCES memory (id) ON DELETE CASCADE
    )""",
    """CREATE TRIGGER memory_text_added AFTER INSERT ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
    END""",
    """CREATE TRIGGER memory_text_changed AFTER UPDATE OF title, content, tags ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
        DELETE FROM memory_vector WHERE memory_id = new.id;
    END""",
]


# The full-text index as migration 6 made it (migration 10 adds the prefix index).
_FTS_SCHEMA_6 = [
    """CREATE VIRTUAL TABLE memory_fts USING fts5(
        title, content, tags, words,
        content='memory', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    *dialect.FTS_SCHEMA[1:],
]


def _identifier_words_and_vectors() -> list[str]:
    # The index gains the identifier words of each memory, and memories get a table for their
    # embedding vectors. The words and vectors of existing memories are written after this
    # migration by `store.index.reindex` (they are computed in Python).
    return [
        "ALTER TABLE memory ADD COLUMN words TEXT NOT NULL DEFAULT ''",
        "DROP TRIGGER memory_fts_insert",
        "DROP TRIGGER memory_fts_delete",
        "DROP TRIGGER memory_fts_update",
        "DROP TABLE memory_fts",
        *_FTS_SCHEMA_6,
        *_DERIVED_SCHEMA_6,
        "INSERT INTO memory_pending (memory_id) SELECT id FROM memory",
    ]


def _anchors() -> list[str]:
    # One row per anchor: where a memory points in the code, what the lines were, and the last
    # check's result with the file's size and mtime then (the cache `prime` reads).
    return [
        """CREATE TABLE anchor (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id VARCHAR(32) NOT NULL REFERENCES memory (id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            start_line INTEGER,
            end_line INTEGER,
            line_hash VARCHAR(64) NOT NULL,
            snapshot TEXT NOT NULL,
            commit_id VARCHAR(64),
            blob_id VARCHAR(64),
            status VARCHAR(16) NOT NULL DEFAULT 'fresh',
            checked_at REAL,
            file_size INTEGER,
            file_mtime_ns INTEGER,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX anchor_memory ON anchor (memory_id)",
        "CREATE INDEX anchor_status ON anchor (status, memory_id)",
    ]


def _packed_vectors() -> list[Statement]:
    # Vectors packed in blocks per project (`store.backends.vectors`): the old table's rows are converted
    # in Python (a blob per block), then it goes. The file-ref index serves a prime's path
    # candidates.
    from store.backends.vectors import convert_rows

    return [
        "DROP TRIGGER memory_vector_project",
        "DROP TRIGGER memory_text_changed",
        "DROP INDEX memory_vector_project",
        "ALTER TABLE memory_vector RENAME TO memory_vector_rows",
        *dialect.VECTOR_SCHEMA,
        convert_rows,
        "DROP TABLE memory_vector_rows",
        dialect.FILE_REF_INDEX,
    ]


def _event_author() -> list[str]:
    # The person (config `team.author`, else the OS user) beside `actor` (the part of memdeck:
    # cli, prime, ingest, ...). Events recorded before this have none.
    return ["ALTER TABLE event ADD COLUMN author VARCHAR(255)"]


def _prefix_index() -> list[str]:
    # FTS5 cannot add a prefix index to a table: the index is made again, with the same columns,
    # tokenizer and triggers, and filled from `memory` (36 s at 1,000,000 memories, 0.1 s at
    # 10,000). Its text lives in `memory`, so nothing is lost meanwhile.
    return [
        "DROP TRIGGER memory_fts_insert",
        "DROP TRIGGER memory_fts_delete",
        "DROP TRIGGER memory_fts_update",
        "DROP TABLE memory_fts",
        *dialect.FTS_SCHEMA,
    ]


# Migration 12, the same SQL on both back-ends: the owner, and the index `prime` reads a person's
# `personal` memories (injected in every project) from.
OWNER_SCHEMA = (
    "ALTER TABLE memory ADD COLUMN owner VARCHAR(255)",
    "CREATE INDEX memory_personal ON memory (owner, confidence DESC) WHERE scope = 'personal'",
)


def layer_judgment_schema(identity: str = "INTEGER PRIMARY KEY AUTOINCREMENT", real: str = "REAL") -> list[str]:
    # Migration 14: the person's own verdicts (not_relevant, helpful) on memories of the other
    # layers (the team store, the team file), kept in their own store and read by their primes
    # (`store.layers.judgments`). On PostgreSQL an IDENTITY and DOUBLE PRECISION.
    return [
        f"""CREATE TABLE layer_judgment (
            id {identity},
            layer VARCHAR(16) NOT NULL,
            project VARCHAR(255) NOT NULL,
            memory_id VARCHAR(255) NOT NULL,
            verdict VARCHAR(16) NOT NULL,
            task TEXT NOT NULL,
            relevance {real},
            cosine {real},
            session_id VARCHAR(255),
            at {real} NOT NULL
        )""",
        "CREATE INDEX layer_judgment_memory ON layer_judgment (layer, memory_id, verdict, id)",
    ]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core tables: projects, memories, events", _core_tables),
    Migration(2, "full-text index over title, content and tags", _full_text_index),
    Migration(3, "sessions and their activities", _sessions),
    Migration(4, "indexes for listing by confidence and by creation", _listing_indexes),
    Migration(5, "memory version for compare-and-set writes", _memory_version),
    Migration(6, "identifier words in the full-text index; embedding vectors", _identifier_words_and_vectors),
    Migration(7, "anchors: memories pointing at lines of code", _anchors),
    Migration(8, "embedding vectors packed in blocks per project; index of memories with file refs",
              _packed_vectors),
    Migration(9, "who made each change: event.author", _event_author),
    Migration(10, "prefix index of the full text: the first two and three letters of each word", _prefix_index),
    # Accents folded in PostgreSQL's full text (`store.backends.postgres_schema._accents_folded`). Nothing
    # to do on SQLite: FTS5's tokenizer folds them since migration 2 (`remove_diacritics 2`).
    Migration(11, "accents folded in full-text search (on PostgreSQL; SQLite's FTS5 folds them already)",
              lambda: []),
    # The person who wrote each memory (the local user here; the database user in a team store,
    # where `store.backends.postgres_roles` holds each role to its own): memories before it have none.
    Migration(12, "who wrote each memory: memory.owner; an index of personal memories",
              lambda: list(OWNER_SCHEMA)),
    # An index of the file refs by their literal prefixes, for a prime's path candidates
    # (`store.backends.postgres_schema._file_ref_keys`). Nothing to do on SQLite: its GLOB is
    # quick enough over the memories with file refs (migration 8's index).
    Migration(13, "file refs indexed by their literal prefixes (on PostgreSQL)", lambda: []),
    Migration(14, "your own verdicts on the team layer's memories: layer_judgment", layer_judgment_schema),
    # A team store's review, held by the server (store.backends.postgres_roles): nothing on SQLite.
    Migration(15, "the texts a team store's reviewers let in: memdeck_review (on PostgreSQL)", lambda: []),
)

SCHEMA_VERSION = MIGRATIONS[-1].version

MIGRATION_TABLE = """CREATE TABLE IF NOT EXISTS schema_migration (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)"""


def pending(current_version: int, target: int = SCHEMA_VERSION) -> list[Migration]:
    return [m for m in MIGRATIONS if current_version < m.version <= target]
