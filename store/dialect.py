"""Every piece of SQLite-specific SQL memdeck uses: connection pragmas, the FTS5 index and its
triggers, and the full-text match expression. A PostgreSQL back-end replaces this module.
"""

from __future__ import annotations

PRAGMAS: dict[str, object] = {
    "journal_mode": "wal",  # readers never block the writer, and several processes share a store
    "foreign_keys": 1,
    "busy_timeout": 30000,  # ms; writers queue instead of failing with "database is locked"
    "synchronous": "normal",  # safe with WAL: a crash loses at most the last commit, never corrupts
    "cache_size": -32000,  # KiB
    "temp_store": "memory",
}

# The FTS5 index over title, content, tags and the identifier words of all three (`words`:
# "useSearchParams" is also use, search, params; see `store.identifiers`). External content: the
# text lives once, in `memory`, and the triggers keep the index in step with every insert,
# update and delete. Porter stemming lets "retries" find "retry".
FTS_SCHEMA = [
    """CREATE VIRTUAL TABLE memory_fts USING fts5(
        title, content, tags, words,
        content='memory', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER memory_fts_insert AFTER INSERT ON memory BEGIN
        INSERT INTO memory_fts(rowid, title, content, tags, words)
        VALUES (new.rowid, new.title, new.content, new.tags, new.words);
    END""",
    """CREATE TRIGGER memory_fts_delete AFTER DELETE ON memory BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, title, content, tags, words)
        VALUES ('delete', old.rowid, old.title, old.content, old.tags, old.words);
    END""",
    """CREATE TRIGGER memory_fts_update AFTER UPDATE OF title, content, tags, words ON memory BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, title, content, tags, words)
        VALUES ('delete', old.rowid, old.title, old.content, old.tags, old.words);
        INSERT INTO memory_fts(rowid, title, content, tags, words)
        VALUES (new.rowid, new.title, new.content, new.tags, new.words);
    END""",
    "INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')",
]

# What is derived from a memory's text in Python: its identifier words (`memory.words`) and its
# embedding vector (`memory_vector`, tagged with the model that made it). A new memory, or a
# change of its text by whoever makes it (any program may write SQL), puts it in
# `memory_pending` and drops its vector; `store.reindex.index_pending`, run by every write of the
# store, indexes what is pending.
PENDING_INSERT_TRIGGER = """CREATE TRIGGER memory_text_added AFTER INSERT ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
    END"""
DERIVED_SCHEMA = [
    # The project is kept beside the vector so a prime reads its project's vectors without
    # looking each memory up (10,000 lookups cost 5x the read).
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
    PENDING_INSERT_TRIGGER,
    """CREATE TRIGGER memory_text_changed AFTER UPDATE OF title, content, tags ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
        DELETE FROM memory_vector WHERE memory_id = new.id;
    END""",
]


def fts_rank_sql(title_weight: float, content_weight: float, tags_weight: float,
                 words_weight: float = 1.0) -> str:
    """BM25 rank expression (smaller is better, as SQLite returns it), title weighted highest."""
    return (f"bm25(memory_fts, {float(title_weight)}, {float(content_weight)}, {float(tags_weight)}, "
            f"{float(words_weight)})")


# Rows of `memory` matching an FTS5 query, with their BM25 rank; `{rank}` is `fts_rank_sql(...)`.
FTS_MATCH_SQL = (
    "SELECT memory.id, {rank} AS rank FROM memory_fts "
    "JOIN memory ON memory.rowid = memory_fts.rowid "
    "WHERE memory_fts MATCH ?"
)

# A large import indexes its rows in one statement instead of row by row through the insert
# trigger (a fifth less CPU per memory): the trigger is dropped inside the import's transaction,
# the rows inserted, the new rows (rowids past `?`) added to the index, and the trigger made again.
# All of it is one transaction, so a failed import leaves the trigger as it was; no other
# process can write meanwhile (the import holds the write lock).
# The trigger that marks a new memory pending is dropped too: the bulk path writes the words (and
# vectors, or leaves them to `memdeck reindex`) itself (a tenth less CPU per memory).
FTS_SUSPEND_SQL = ["DROP TRIGGER memory_fts_insert", "DROP TRIGGER memory_text_added"]
FTS_RESUME_SQL = [
    "INSERT INTO memory_fts(rowid, title, content, tags, words) "
    "SELECT rowid, title, content, tags, words FROM memory WHERE rowid > ?",
    FTS_SCHEMA[1],
    PENDING_INSERT_TRIGGER,
]
# A large import's page cache: at a million memories, its inserts into nine indexes of `memory`
# miss the usual 32 MB cache (a sixth more CPU per memory). Back to `PRAGMAS` afterwards.
BULK_PRAGMAS_SQL = ["PRAGMA cache_size = -262144"]
BULK_PRAGMAS_END_SQL = [f"PRAGMA cache_size = {PRAGMAS['cache_size']}"]
# The highest rowid: rows inserted later have larger ones (no AUTOINCREMENT gaps matter here).
LAST_ROWID_SQL = "SELECT COALESCE(MAX(rowid), 0) FROM memory"

FTS_INTEGRITY_SQL = "INSERT INTO memory_fts(memory_fts, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD_SQL = "INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')"
# How many documents the index holds (a plain COUNT of memory_fts would read the memory table).
FTS_DOCUMENTS_SQL = "SELECT COUNT(*) FROM memory_fts_docsize"


def quote_fts_term(term: str) -> str:
    """One term as an FTS5 string literal: whatever the user typed, it is matched as text."""
    return '"' + term.replace('"', '""') + '"'
