"""The SQL of `memdeck eval`'s baseline rankers (`store.evaluation.rankers`): plain BM25's one
query over a project's active memories."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.engine.ports import Backend, Weights


def by_bm25(backend: "Backend", query: str, weights: "Weights", project_id: int) -> list[str]:
    """The ids of the project's active memories that match the full-text `query`, best BM25 rank
    first (columns weighted by `weights`), then oldest first."""
    p = backend.param
    match, rank = backend.fts_match(query), backend.fts_rank(query, weights)
    rows = backend.db.execute_sql(
        f"SELECT memory.id FROM {backend.fts_source()} "
        f"WHERE {match.sql} AND memory.project_id = {p} AND memory.status = 'active' "
        f"ORDER BY {rank.sql}, memory.rowid", (*match.params, project_id, *rank.params))
    return [r[0] for r in rows]
