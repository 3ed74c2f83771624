"""The SQL of `memdeck copy` (`store.interop.copying`): a table's columns and rows read from one
store, written into another with their own ids (over the target's rows of the same key, then the
rest inserted), and the memories waiting to be indexed carried over.

The tables, the columns and the order they are copied in are the copy's; only the statements
live here. A table or column name is one of the schema's, never a caller's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Sequence

if TYPE_CHECKING:
    from store.engine.ports import Backend


def columns(backend: "Backend", table: str) -> list[str]:
    """The names of `table`'s columns, in the schema's order."""
    cursor = backend.db.execute_sql(f"SELECT * FROM {table} LIMIT 0")
    return [d[0] for d in cursor.description]


def has_rows(backend: "Backend", table: str) -> bool:
    """Whether `table` holds any row."""
    return backend.db.execute_sql(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None


def keys(backend: "Backend", table: str, key: Sequence[str]) -> set[tuple]:
    """The key (`key`'s columns) of every row of `table`."""
    return set(backend.db.execute_sql(f"SELECT {', '.join(key)} FROM {table}").fetchall())


def key_batches(backend: "Backend", table: str, key: Sequence[str], size: int) -> Iterator[list[tuple]]:
    """The key of every row of `table`, `size` rows at a time."""
    cursor = backend.db.execute_sql(f"SELECT {', '.join(key)} FROM {table}")
    while rows := cursor.fetchmany(size):
        yield rows


def row_batches(backend: "Backend", table: str, columns: Sequence[str], key: Sequence[str],
                size: int) -> Iterator[list[tuple]]:
    """`columns` of every row of `table` in the order of its key, `size` rows at a time."""
    select = ", ".join(f"{table}.{c}" for c in columns)
    cursor = backend.db.execute_sql(f"SELECT {select} FROM {table} ORDER BY {', '.join(key)}")
    while rows := cursor.fetchmany(size):
        yield rows


def overwrite(backend: "Backend", table: str, columns: Sequence[str], key: Sequence[str],
              rows: Sequence[tuple]) -> None:
    """Each of `rows` (values in `columns` order) written over the row of `table` with its key,
    where there is one: every column but the key and a memory's rowid."""
    p = backend.param
    changing = [c for c in columns if c not in key and c != "rowid"]
    if not changing:
        return
    update = (f"UPDATE {table} SET {', '.join(f'{c} = {p}' for c in changing)} "
              f"WHERE {' AND '.join(f'{k} = {p}' for k in key)}")
    where = [columns.index(c) for c in changing] + [columns.index(k) for k in key]
    backend.db.cursor().executemany(update, [tuple(row[i] for i in where) for row in rows])


def insert_new(backend: "Backend", table: str, columns: Sequence[str], key: Sequence[str],
               rows: Sequence[tuple]) -> None:
    """Each of `rows` (values in `columns` order) inserted into `table`, unless a row with its
    key is there already (`overwrite` wrote over it)."""
    p = backend.param
    insert = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([p] * len(columns))}) "
              f"ON CONFLICT ({', '.join(key)}) DO NOTHING")
    backend.db.cursor().executemany(insert, rows)


def not_pending(backend: "Backend", memory_ids: Sequence[str], size: int) -> None:
    """These memories no longer wait to be indexed, `size` ids a statement."""
    p = backend.param
    for start in range(0, len(memory_ids), size):
        chunk = memory_ids[start:start + size]
        backend.db.execute_sql(f"DELETE FROM memory_pending WHERE memory_id IN ({', '.join([p] * len(chunk))})",
                               chunk)


def copy_pending(source: "Backend", target: "Backend") -> None:
    """Every memory waiting to be indexed in `source` waits in `target` too."""
    pending = [r for r in source.db.execute_sql("SELECT memory_id FROM memory_pending").fetchall()]
    target.db.cursor().executemany(target.insert_ignore("memory_pending", ("memory_id",)), pending)
