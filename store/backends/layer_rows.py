"""The SQL of the layers (`store.layers`): your own verdicts on another layer's memories (the own
store's table `layer_judgment`, `store.layers.judgments`), the first read that shows a team store
lets this database user in, and the sort keys of a listing merged over several layers
(`tui.layer_view`, through `store.layers.layers.listing_keys`).

How many verdicts are kept and what a listing selects are the callers'; only the statements live
here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from store.backends import search_rows

if TYPE_CHECKING:
    from store.backends.search_rows import Selection
    from store.engine.ports import Backend

# Ids asked for in one query (SQLite's parameter limit is far above).
_CHUNK = 500


# -- your verdicts on other layers' memories ----------------------------------------------------------

def add_judgment(backend: "Backend", layer: str, project: str, memory_id: str, verdict: str, task: str,
                 relevance: float | None, cosine: float | None, session_id: str | None, at: float) -> None:
    """A verdict on a memory of `layer` (its project and id) for a task."""
    backend.db.execute_sql(
        "INSERT INTO layer_judgment (layer, project, memory_id, verdict, task, relevance, cosine, session_id, at) "
        f"VALUES ({', '.join([backend.param] * 9)})",
        (layer, project, memory_id, verdict, task, relevance, cosine, session_id, at))


def keep_newest_judgments(backend: "Backend", layer: str, project: str, memory_id: str, verdict: str,
                          keep: int) -> None:
    """Only the newest `keep` of this verdict on the memory stay."""
    p = backend.param
    key = (layer, project, memory_id, verdict)
    where = f"layer = {p} AND project = {p} AND memory_id = {p} AND verdict = {p}"
    backend.db.execute_sql(
        f"DELETE FROM layer_judgment WHERE {where} AND id NOT IN "
        f"(SELECT id FROM layer_judgment WHERE {where} ORDER BY id DESC LIMIT {int(keep)})", key + key)


def judgments(backend: "Backend", layer: str, memory_ids: Sequence[str]) -> list[tuple]:
    """(memory id, project, verdict, task, relevance, cosine, at) of every verdict on these
    memories of `layer`, oldest first within each slice of `_CHUNK` ids."""
    found: list[tuple] = []
    p = backend.param
    ids = list(memory_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        found += backend.db.execute_sql(
            "SELECT memory_id, project, verdict, task, relevance, cosine, at FROM layer_judgment "
            f"WHERE layer = {p} AND memory_id IN ({', '.join([p] * len(chunk))}) ORDER BY id",
            (layer, *chunk)).fetchall()
    return found


# -- reading another layer's store ----------------------------------------------------------------------

def first_read(backend: "Backend") -> None:
    """Read one memory, if there is any: the database's refusal when this user may not read the
    store."""
    backend.db.execute_sql("SELECT 1 FROM memory LIMIT 1").fetchall()


def listing_keys(backend: "Backend", columns: Sequence[str], chosen: "Selection", sort: str,
                 limit: int | None) -> list[tuple]:
    """(id, then the memory's `columns`) of the memories a listing's filter selects (`chosen`), in
    the order of its sort (`search_rows.ORDERS`); the first `limit` (all with None)."""
    where_sql, args = search_rows.where(backend, chosen)
    selected = ", ".join(f"memory.{c}" for c in ("id", *columns))
    sql = f"SELECT {selected} FROM memory WHERE {where_sql} ORDER BY {search_rows.order_by(backend, sort)}"
    if limit is not None:
        sql += f" LIMIT {backend.param}"
        args = [*args, limit]
    return [tuple(r) for r in backend.db.execute_sql(sql, args)]
