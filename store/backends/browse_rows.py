"""The SQL of browsing a project's memories (`store.browse`): the ids a listing shows
(`store.browse.paging`), the rowids a filter lets through and the ids of rowids, and a project's
counts by status. A filter's conditions are `search_rows`'."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from store.backends.search_rows import Selection, order_by, where

if TYPE_CHECKING:
    from store.engine.ports import Backend


# -- listing pages --------------------------------------------------------------------------------

def listed_ids(backend: "Backend", chosen: Selection, sort: str, limit: int | None = None) -> list[str]:
    """The ids of the memories `chosen` selects in the order of the listing sort `sort`: the first
    `limit` (all of them with None)."""
    where_sql, args = where(backend, chosen)
    sql = f"SELECT memory.id FROM memory WHERE {where_sql} ORDER BY {order_by(backend, sort)}"
    if limit is None:
        return [r[0] for r in backend.db.execute_sql(sql, args)]
    return [r[0] for r in backend.db.execute_sql(f"{sql} LIMIT {backend.param}", [*args, limit])]


def rowids(backend: "Backend", chosen: Selection) -> frozenset[int]:
    """The rowids of the memories `chosen` selects."""
    where_sql, args = where(backend, chosen)
    return frozenset(r[0] for r in backend.db.execute_sql(f"SELECT memory.rowid FROM memory WHERE {where_sql}", args))


def ids_by_rowid(backend: "Backend", memory_rowids: Sequence[int]) -> dict[int, str]:
    """Rowid -> id of the memories with these rowids."""
    among = backend.in_integers("rowid", memory_rowids)
    return dict(backend.db.execute_sql(f"SELECT rowid, id FROM memory WHERE {among.sql}", among.params))


def status_counts(backend: "Backend", project_id: int) -> dict[str, int]:
    """How many of the project's memories have each status (those it has)."""
    rows = backend.db.execute_sql(
        f"SELECT status, COUNT(*) FROM memory WHERE project_id = {backend.param} GROUP BY status",
        (project_id,)).fetchall()
    return dict(rows)
