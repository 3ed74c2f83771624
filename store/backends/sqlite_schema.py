"""The SQLite store's own DDL that migrations share: the connection pragmas, the FTS5 index and its
triggers, the vector tables and the triggers that mark a memory's text pending. A leaf module:
`store.backends.migrations` (the schema, said once for SQLite) and `store.backends.sqlite` (the
back-end) both read it.
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
# "useSearchParams" is also use, search, params; see `store.index.identifiers`). External content: the
# text lives once, in `memory`, and the triggers keep the index in step with every insert,
# update and delete. Porter stemming lets "retries" find "retry". The prefix index (every word's
# first two and first three letters, migration 10) lets a search as you type read the matches of
# a short last word (`web*`) in order and stop at a page; without it FTS5 merges the matches of
# every word that begins so before the first row (30-50 ms a pass at 1,000,000 memories). It
# costs a larger index: 530 MB against 210 MB at 1,000,000 generated memories.
FTS_SCHEMA = [
    """CREATE VIRTUAL TABLE memory_fts USING fts5(
        title, content, tags, words,
        content='memory', content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 2', prefix='2 3'
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
# embedding vector (`store.backends.vectors`: packed in blocks per project and model). A new memory, or a
# change of its text by whoever makes it (any program may write SQL), puts it in
# `memory_pending` and drops its vector; `store.index.reindex.index_pending`, run by every write of the
# store, indexes what is pending. (Migration 6 created `memory_pending` and a first, one row per
# memory, vector table; migration 8 packed the vectors into these blocks.)
VECTOR_SCHEMA = [
    # A block: up to `store.backends.vectors.BLOCK` vectors of one project and model, as one float16 blob
    # (`vectors`, last so a read of the other columns does not load it) with the memory ids of
    # its slots (`ids`, a JSON list). `dead` lists the slots whose vector was dropped since it
    # was written; `version` is a new random number at every change (readers cache by it).
    """CREATE TABLE vector_block (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id INTEGER NOT NULL,
        model VARCHAR(128) NOT NULL,
        slots INTEGER NOT NULL,
        dead_slots INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL,
        dead TEXT NOT NULL DEFAULT '',
        ids TEXT NOT NULL,
        vectors BLOB NOT NULL
    )""",
    "CREATE INDEX vector_block_project ON vector_block (project_id, model)",
    """CREATE TABLE memory_vector (
        memory_id VARCHAR(32) NOT NULL PRIMARY KEY REFERENCES memory (id) ON DELETE CASCADE,
        block_id INTEGER NOT NULL REFERENCES vector_block (id) ON DELETE CASCADE,
        slot INTEGER NOT NULL
    )""",
    "CREATE INDEX memory_vector_block ON memory_vector (block_id)",
    # However a vector is dropped (text changed, memory deleted, by any program), its slot is dead.
    """CREATE TRIGGER memory_vector_dropped AFTER DELETE ON memory_vector BEGIN
        UPDATE vector_block SET dead = dead || old.slot || ' ', dead_slots = dead_slots + 1,
            version = abs(random()) WHERE id = old.block_id;
    END""",
    # A memory moved to another project is embedded again there (its block is its old project's).
    """CREATE TRIGGER memory_vector_project AFTER UPDATE OF project_id ON memory BEGIN
        DELETE FROM memory_vector WHERE memory_id = new.id;
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
    END""",
    """CREATE TRIGGER memory_text_changed AFTER UPDATE OF title, content, tags ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
        DELETE FROM memory_vector WHERE memory_id = new.id;
    END""",
]

# The trigger that marks a new memory pending, as migration 6 made it: a large import drops it
# and makes it again (`FTS_SUSPEND_SQL`, `FTS_RESUME_SQL` below).
PENDING_INSERT_TRIGGER = """CREATE TRIGGER memory_text_added AFTER INSERT ON memory BEGIN
        INSERT OR IGNORE INTO memory_pending (memory_id) VALUES (new.id);
    END"""

# Memories with file refs by confidence: the path candidates of a prime walk only these (one in
# five memories, say) instead of every memory of the project, in the same order.
FILE_REF_INDEX = ("CREATE INDEX memory_project_refs_confidence ON memory (project_id, status, confidence DESC) "
                  "WHERE file_refs != '[]'")

FTS_INTEGRITY_SQL = "INSERT INTO memory_fts(memory_fts, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD_SQL = "INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')"
# How many documents the index holds (a plain COUNT of memory_fts would read the memory table).
FTS_DOCUMENTS_SQL = "SELECT COUNT(*) FROM memory_fts_docsize"
