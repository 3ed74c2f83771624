"""The SQL of browsing a project's memories (`store.browse`): the ids a listing shows
(`store.browse.paging`), the rowids a filter lets through and the ids of rowids, a project's
counts by status and its figures for `memdeck stats` (`store.browse.stats`), and the confidence
picture's reads (`store.browse.timeline`). A filter's conditions are `search_rows`'."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

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


# -- stats ----------------------------------------------------------------------------------------

def project_figures(backend: "Backend", project_id: int) -> dict[str, Any]:
    """A project's figures for `memdeck stats`: its memories counted by status (every status),
    then by type, hat and source (outside the trash; '-' for none), most first; the mean
    confidence of the active ones (None without any); how many are protected; its events and its
    sessions."""
    p = backend.param
    db = backend.db

    def grouped(column: str, condition: str = "status != 'deleted'") -> dict[str, int]:
        rows = db.execute_sql(
            f"SELECT COALESCE({column}, '-'), COUNT(*) FROM memory WHERE project_id = {p} AND {condition} "
            f"GROUP BY 1 ORDER BY 2 DESC, 1", (project_id,))
        return {k: v for k, v in rows}

    by_status = grouped("status", backend.true)
    mean = db.execute_sql(f"SELECT AVG(confidence) FROM memory WHERE project_id = {p} AND status = 'active'",
                          (project_id,)).fetchone()[0]
    return {
        "by_status": by_status,
        "by_type": grouped("type"),
        "by_hat": grouped("hat"),
        "by_source": grouped("source"),
        "mean_confidence": mean,
        "protected": db.execute_sql(f"SELECT COUNT(*) FROM memory WHERE project_id = {p} AND protected = 1",
                                    (project_id,)).fetchone()[0],
        "events": db.execute_sql("SELECT COUNT(*) FROM event JOIN memory ON memory.id = event.memory_id "
                                 f"WHERE memory.project_id = {p}", (project_id,)).fetchone()[0],
        "sessions": db.execute_sql(f"SELECT COUNT(*) FROM session WHERE project_id = {p}",
                                   (project_id,)).fetchone()[0],
    }


# -- the confidence picture -----------------------------------------------------------------------

def _in_play(p: str) -> str:
    return f"memory.project_id = {p} AND memory.status IN ('active', 'inactive')"


def confidence_buckets(backend: "Backend", project_id: int, buckets: int) -> list[tuple[int, int]]:
    """(bucket, memories) of the project's active and inactive memories, their confidence cut into
    `buckets` equal bars (0 the lowest; a confidence outside 0..1 counts in the nearest)."""
    b = backend
    return list(b.db.execute_sql(
        f"SELECT {b.least(b.greatest(b.trunc_int(f'memory.confidence * {buckets}'), '0'), str(buckets - 1))}, COUNT(*) "
        f"FROM memory WHERE {_in_play(b.param)} GROUP BY 1", (project_id,)))


def events_since(backend: "Backend", project_id: int, since: float) -> list[tuple]:
    """(memory id, confidence before, after, the memory's confidence now) of each event after
    `since` of the project's active and inactive memories, in time order."""
    b = backend
    return list(b.db.execute_sql(
        "SELECT event.memory_id, event.confidence_before, event.confidence_after, memory.confidence "
        # CROSS JOIN keeps SQLite reading the window's events first (by the `event.at` index)
        # instead of probing the events of every memory in play.
        f"FROM event {b.fixed_join} memory ON memory.id = event.memory_id WHERE event.at > {b.param} AND {_in_play(b.param)} "
        "ORDER BY event.at, event.id",
        (since, project_id)))
