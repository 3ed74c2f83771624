"""The SQL of the embedding model's tokenizer cache (`store.index.embedding.BpeTokenizer`): a
small SQLite file of its own, apart from any store, holding the vocabulary and the merge ranks
as tables of key and value, written once and then read one key at a time by a lazy tokenizer.
(The stored vectors themselves are `store/backends/vectors.py`'s.)"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    import sqlite3


def write_tables(path: Path, tables: Sequence[tuple[str, Mapping[str, int]]]) -> None:
    """A new cache file at `path` with these tables, each (name, key -> value)."""
    import sqlite3  # only when the cache is made: a prime that finds it never needs to

    connection = sqlite3.connect(path)
    with connection:
        for table, values in tables:
            connection.execute(f"CREATE TABLE {table} (key TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID")
            connection.executemany(f"INSERT INTO {table} VALUES (?, ?)", values.items())
    connection.close()


def open_tables(path: Path) -> "sqlite3.Connection | None":
    """The cache file at `path`, opened to read; None if it cannot be."""
    import sqlite3

    try:
        # Never changed once in place (a new wheel gets a new file): no locking needed.
        return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None


def value(connection: "sqlite3.Connection", table: str, key: str) -> int | None:
    """The value of `key` in one of the cache's tables (None: not there)."""
    row = connection.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None
