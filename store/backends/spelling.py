"""Each back-end's spelling of the SQL that differs and needs no connection
(`store.backends.base.Spelling`): `SqliteSpelling`, `PostgresSpelling`. The back-ends inherit
them; `spelling_of(db)` gives one for a bare Peewee database (a migration's data step, which runs
before the store's back-end object exists).
"""

from __future__ import annotations

from typing import Sequence

from store.backends.base import Fragment, Spelling


class SqliteSpelling(Spelling):
    param = "?"
    true = "1"
    false = "0"
    empty_blob = "X''"

    def in_integers(self, expr: str, values: Sequence[int]) -> Fragment:
        return Fragment(f"{expr} IN ({self.marks(len(values))})", tuple(values))

    def nocase(self, expr: str) -> str:
        return f"{expr} COLLATE NOCASE"

    def glob(self, subject: str, pattern: str) -> str:
        return f"{subject} GLOB {pattern}"

    def greatest(self, *exprs: str) -> str:
        return f"MAX({', '.join(exprs)})"

    def least(self, *exprs: str) -> str:
        return f"MIN({', '.join(exprs)})"

    def json_elements(self, expr: str, alias: str) -> str:
        return f"json_each({expr}) AS {alias}"

    def trunc_int(self, expr: str) -> str:
        return f"CAST({expr} AS INTEGER)"

    def count_true(self, condition: str) -> str:
        return f"SUM({condition})"

    def unindexed(self, table: str) -> str:
        return f"{table} NOT INDEXED"

    @property
    def fixed_join(self) -> str:
        return "CROSS JOIN"  # SQLite's CROSS JOIN keeps the order written

    def insert_ignore(self, table: str, columns: Sequence[str], values: str | None = None) -> str:
        values = values if values is not None else f"VALUES ({self.marks(len(columns))})"
        return f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) {values}"


    def insert_returning_id(self, table: str, columns: Sequence[str], values: str) -> str:
        return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values})"

    def inserted_id(self, cursor) -> int:
        return cursor.lastrowid


class PostgresSpelling(Spelling):
    param = "%s"
    true = "TRUE"
    false = "FALSE"
    empty_blob = "''::bytea"

    def in_integers(self, expr: str, values: Sequence[int]) -> Fragment:
        # One array parameter: binding and planning 2,001 parameters (a broad search's newest
        # matches) cost more than the query (5 ms against 2 ms).
        return Fragment(f"{expr} = ANY(%s::bigint[])", (list(values),))

    def nocase(self, expr: str) -> str:
        return f"lower({expr})"

    def glob(self, subject: str, pattern: str) -> str:
        return f"memdeck_glob({subject}, {pattern})"  # a function of the schema (migration 1)

    def greatest(self, *exprs: str) -> str:
        return f"GREATEST({', '.join(exprs)})"

    def least(self, *exprs: str) -> str:
        return f"LEAST({', '.join(exprs)})"

    def json_elements(self, expr: str, alias: str) -> str:
        return f"json_array_elements_text({expr}::json) AS {alias}(value)"

    def trunc_int(self, expr: str) -> str:
        return f"trunc({expr})::integer"  # PostgreSQL's CAST rounds

    def count_true(self, condition: str) -> str:
        return f"SUM(({condition})::int)"

    def unindexed(self, table: str) -> str:
        return table

    @property
    def fixed_join(self) -> str:
        return "JOIN"  # the planner orders the tables itself

    def insert_ignore(self, table: str, columns: Sequence[str], values: str | None = None) -> str:
        values = values if values is not None else f"VALUES ({self.marks(len(columns))})"
        return f"INSERT INTO {table} ({', '.join(columns)}) {values} ON CONFLICT DO NOTHING"


    def insert_returning_id(self, table: str, columns: Sequence[str], values: str) -> str:
        return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) RETURNING id"

    def inserted_id(self, cursor) -> int:
        return cursor.fetchone()[0]


SQLITE = SqliteSpelling()
POSTGRES = PostgresSpelling()


def spelling_of(db) -> Spelling:
    """The spelling of a Peewee database's back-end, told by its parameter mark."""
    return POSTGRES if db.param == POSTGRES.param else SQLITE
