"""The SQL of finding memories (`store.browse.search`, and the listing pages of
`store.browse.paging`): a filter's conditions (`Selection`, composed by `where`), the ORDER BY of
each listing sort, and the reads of a filtered listing, its count, the full-text matches (by
BM25, or newest first for a broad query), the titles fuzzy matching scans, and an export's
memories and events (`store.interop.memdeck_json`).

The rules (which sort, when a query is broad, what a hit scores) stay in `store.browse`; a
filter arrives here with its project's id and its types' names already resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from store.backends.memory_table import MEMORY_COLUMNS_SQL, MEMORY_SELECT

if TYPE_CHECKING:
    from store.engine.ports import Backend, Weights

# The listing sorts by name (`store.browse.search.SORTS`), each as its ORDER BY.
ORDERS = {
    "updated": "memory.updated_at DESC, memory.id DESC",
    "created": "memory.created_at DESC, memory.id DESC",
    "confidence": "memory.confidence DESC, memory.id DESC",
    "used": "memory.use_count DESC, memory.id DESC",
    "type": "memory.type, memory.confidence DESC, memory.id DESC",
    "title": "{nocase}, memory.id",
    "hat": "memory.hat, memory.confidence DESC, memory.id DESC",
    "scope": "memory.scope, memory.confidence DESC, memory.id DESC",
    "status": "memory.status, memory.confidence DESC, memory.id DESC",
}


@dataclass(frozen=True)
class Selection:
    """The memories a filter (`store.browse.search.MemoryFilter`) lets through, as plain values:
    its project's id (None: every project) and its types' names resolved. Empty tuples mean "any"."""

    project_id: int | None = None
    types: tuple[str, ...] = ()
    hats: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()  # empty: everything but the trash
    sources: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # a memory must carry every one
    min_confidence: float | None = None
    created_after: float | None = None
    created_before: float | None = None
    exclude_session: str | None = None
    stale: bool = False  # only memories whose anchored code changed or went missing
    ids: tuple[str, ...] | None = None


def where(backend: "Backend", chosen: Selection) -> tuple[str, list]:  # noqa: C901 (one independent clause per filter field, in the filter's order)
    """The conditions (joined with AND, over `memory`) and their arguments that select `chosen`."""
    p = backend.param
    parts: list[str] = []
    args: list = []
    if chosen.project_id is not None:
        parts.append(f"memory.project_id = {p}")
        args.append(chosen.project_id)

    def any_of(column: str, values: Sequence[str]) -> None:
        parts.append(f"{column} IN ({', '.join([p] * len(values))})")
        args.extend(values)

    if chosen.types:
        any_of("memory.type", chosen.types)
    if chosen.hats:
        any_of("memory.hat", chosen.hats)
    if chosen.statuses:
        any_of("memory.status", chosen.statuses)
    else:
        parts.append("memory.status != 'deleted'")
    if chosen.sources:
        any_of("memory.source", chosen.sources)
    if chosen.scopes:
        any_of("memory.scope", chosen.scopes)
    for tag in chosen.tags:
        parts.append(f"EXISTS (SELECT 1 FROM {backend.json_elements('memory.tags', 'tag')} WHERE tag.value = {p})")
        args.append(tag)
    # `+column` keeps SQLite from picking that column's index for a range that holds most
    # rows, over the index that gives the page in order (a 0.1 s sort at 100k memories).
    if chosen.min_confidence is not None:
        parts.append(f"+memory.confidence >= {p}")
        args.append(chosen.min_confidence)
    if chosen.created_after is not None:
        parts.append(f"+memory.created_at >= {p}")
        args.append(chosen.created_after)
    if chosen.created_before is not None:
        parts.append(f"+memory.created_at < {p}")
        args.append(chosen.created_before)
    if chosen.exclude_session is not None:
        parts.append(f"(memory.session_id IS NULL OR memory.session_id != {p})")
        args.append(chosen.exclude_session)
    if chosen.stale:
        parts.append("memory.id IN (SELECT memory_id FROM anchor WHERE status IN ('changed', 'missing'))")
    if chosen.ids is not None:
        if not chosen.ids:
            parts.append("1 = 0")
        else:
            any_of("memory.id", chosen.ids)
    return (" AND ".join(parts) or "1 = 1"), args


def order_by(backend: "Backend", sort: str) -> str:
    """The ORDER BY of the listing sort named `sort` (one of `ORDERS`) in this back-end's spelling."""
    return ORDERS[sort].format(nocase=backend.nocase("memory.title"))


def memories(backend: "Backend", chosen: Selection, sort: str, limit: int | None, offset: int) -> list[tuple]:
    """The rows of the memories `chosen` selects, in the order of `sort`; `limit` of them from
    `offset` (all of them with None)."""
    p = backend.param
    where_sql, args = where(backend, chosen)
    sql = f"{MEMORY_SELECT} WHERE {where_sql} ORDER BY {order_by(backend, sort)}"
    if limit is not None:
        sql += f" LIMIT {p} OFFSET {p}"
        args += [limit, offset]
    return list(backend.db.execute_sql(sql, args))


def exported(backend: "Backend", chosen: Selection, limit: int | None) -> list[tuple]:
    """The rows of the memories `chosen` selects (the first `limit`), oldest first, each with its
    decay and status-change times after the memory's columns: what an export writes."""
    where_sql, args = where(backend, chosen)
    sql = (f"SELECT {MEMORY_COLUMNS_SQL}, memory.decayed_at, memory.status_changed_at FROM memory "
           f"JOIN project ON project.id = memory.project_id WHERE {where_sql} "
           "ORDER BY memory.created_at, memory.id")
    return list(backend.db.execute_sql(sql if limit is None else sql + f" LIMIT {int(limit)}", args))


def exported_events(backend: "Backend", chosen: Selection) -> list[tuple]:
    """(memory id, kind, at, actor, session id, confidence before, after, detail, author) of the
    events of the memories `chosen` selects, in time order."""
    where_sql, args = where(backend, chosen)
    return list(backend.db.execute_sql(
        "SELECT event.memory_id, event.kind, event.at, event.actor, event.session_id, "
        "event.confidence_before, event.confidence_after, event.detail, event.author FROM event "
        f"JOIN memory ON memory.id = event.memory_id WHERE {where_sql} ORDER BY event.at, event.id", args))


def count(backend: "Backend", chosen: Selection) -> int:
    """How many memories `chosen` selects."""
    where_sql, args = where(backend, chosen)
    return backend.db.execute_sql(f"SELECT COUNT(*) FROM memory WHERE {where_sql}", args).fetchone()[0]


def newest_matching(backend: "Backend", query: str, chosen: Selection, limit: int) -> list[tuple]:
    """The rows of the newest `limit` memories `chosen` selects that match the full-text `query`,
    newest first."""
    p = backend.param
    where_sql, args = where(backend, chosen)
    match = backend.fts_match(query)
    sql = (f"SELECT {MEMORY_COLUMNS_SQL} FROM {backend.fts_source(matches_first=True)} "
           "JOIN project ON project.id = memory.project_id "
           f"WHERE {match.sql} AND {where_sql} ORDER BY {backend.fts_rowid} DESC LIMIT {p}")
    return list(backend.db.execute_sql(sql, [*match.params, *args, limit]))


def best_matching(backend: "Backend", query: str, weights: "Weights", chosen: Selection, limit: int) -> list[tuple]:
    """The rows of the best `limit` memories `chosen` selects that match the full-text `query`,
    each with its BM25 rank (columns weighted by `weights`; smaller is better) after the
    memory's columns, best first."""
    p = backend.param
    where_sql, args = where(backend, chosen)
    match = backend.fts_match(query)
    rank = backend.fts_rank(query, weights)
    sql = (f"SELECT {MEMORY_COLUMNS_SQL}, {rank.sql} AS rank FROM {backend.fts_source()} "
           f"JOIN project ON project.id = memory.project_id WHERE {match.sql} AND {where_sql} ORDER BY rank LIMIT {p}")
    return list(backend.db.execute_sql(sql, [*rank.params, *match.params, *args, limit]))


def newest_among(backend: "Backend", rowids: Sequence[int], chosen: Selection, limit: int) -> list[tuple]:
    """The rows of the first `limit` memories of `rowids` that `chosen` selects, newest first.
    NOT INDEXED: SQLite would otherwise walk the filter's project index (12 ms at 100,000
    memories) rather than look the rowids up (0.5 ms)."""
    p = backend.param
    where_sql, args = where(backend, chosen)
    among = backend.in_integers("memory.rowid", rowids)
    select = MEMORY_SELECT.replace(" FROM memory JOIN ", f" FROM {backend.unindexed('memory')} JOIN ", 1)
    return list(backend.db.execute_sql(
        f"{select} WHERE {among.sql} AND {where_sql} ORDER BY memory.rowid DESC LIMIT {p}",
        [*among.params, *args, limit]))


def matches_up_to(backend: "Backend", query: str, cap: int) -> int:
    """How many memories of the whole store match the full-text `query`, counted up to `cap`."""
    p = backend.param
    match = backend.fts_match(query)
    return backend.db.execute_sql(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM {backend.fts_table} WHERE {match.sql} LIMIT {p}) AS m",
        (*match.params, cap),
    ).fetchone()[0]


def matching_ids(backend: "Backend", query: str, chosen: Selection, weights: "Weights | None",
                 limit: int | None = None) -> list[str]:
    """The ids of the memories `chosen` selects that match the full-text `query`: by BM25 rank
    (columns weighted by `weights`), ties newest first, or newest first when `weights` is None;
    the first `limit` (all with None). The full-text index first, then each match's row (on
    SQLite, not a walk of `memory` by the filter's index probing the full-text index for every
    row of the project)."""
    p = backend.param
    where_sql, args = where(backend, chosen)
    match = backend.fts_match(query)
    if weights is None:
        order_sql, order_params = f"{backend.fts_rowid} DESC", ()
    else:
        rank = backend.fts_rank(query, weights)
        order_sql, order_params = f"{rank.sql}, {backend.fts_rowid} DESC", rank.params
    sql = (f"SELECT memory.id FROM {backend.fts_source(matches_first=True)} WHERE {match.sql} AND {where_sql} "
           f"ORDER BY {order_sql}")
    params = [*match.params, *args, *order_params]
    if limit is not None:
        sql += f" LIMIT {p}"
        params.append(limit)
    return [r[0] for r in backend.db.execute_sql(sql, params)]


def titles(backend: "Backend", chosen: Selection) -> list[tuple[int, str, str]]:
    """(rowid, id, title) of every memory `chosen` selects, in the order the scan meets them."""
    where_sql, args = where(backend, chosen)
    return backend.db.execute_sql(
        f"SELECT memory.rowid, memory.id, memory.title FROM memory WHERE {where_sql}", args).fetchall()
