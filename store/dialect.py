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

# The FTS5 index over title, content and tags. External content: the text lives once, in
# `memory`, and the triggers keep the index in step with every insert, update and delete.
# Porter stemming lets "retries" find "retry".
FTS_SCHEMA = [
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


def fts_rank_sql(title_weight: float, content_weight: float, tags_weight: float) -> str:
    """BM25 rank expression (smaller is better, as SQLite returns it), title weighted highest."""
    return f"bm25(memory_fts, {float(title_weight)}, {float(content_weight)}, {float(tags_weight)})"


# Rows of `memory` matching an FTS5 query, with their BM25 rank; `{rank}` is `fts_rank_sql(...)`.
FTS_MATCH_SQL = (
    "SELECT memory.id, {rank} AS rank FROM memory_fts "
    "JOIN memory ON memory.rowid = memory_fts.rowid "
    "WHERE memory_fts MATCH ?"
)

FTS_INTEGRITY_SQL = "INSERT INTO memory_fts(memory_fts, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD_SQL = "INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')"
# How many documents the index holds (a plain COUNT of memory_fts would read the memory table).
FTS_DOCUMENTS_SQL = "SELECT COUNT(*) FROM memory_fts_docsize"


def quote_fts_term(term: str) -> str:
    """One term as an FTS5 string literal: whatever the user typed, it is matched as text."""
    return '"' + term.replace('"', '""') + '"'
