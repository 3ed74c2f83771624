"""The SQL of a prime's candidates (`store.retrieval.ranking`): the memories whose file refs cover
a path in play, the most confident and the critical active memories, and the candidates' rows
with their identifier words. Which candidates a prime takes, and how many, is the ranking's call;
the numbers arrive here as arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from store.backends.memory_table import MEMORY_SELECT
from store.engine.rows import id_chunks

if TYPE_CHECKING:
    from store.engine.ports import Backend


def covering_paths(backend: "Backend", project_id: int, paths: Sequence[str], limit: int) -> set[str]:
    """Ids of the most confident active memories of the project (at most `limit`) with a file ref
    glob covering one of `paths`, or inside one of them. Walking the confidence index and stopping
    at `limit` keeps this quick in a store where thousands of memories name files (SQLite); where
    the back-end has an index of the refs (PostgreSQL), only the memories it gives are tested."""
    p = backend.param
    b = backend
    tests = []
    args: list[Any] = []
    for path in paths:
        # ref matches the path; the path is inside the ref's folder; the ref is inside the path.
        inside_ref, inside_path = "rtrim(ref.value, '/') || '/*'", f"{p} || '/*'"
        tests.append(f"({b.glob(p, 'ref.value')} OR {b.glob(p, inside_ref)} OR {b.glob('ref.value', inside_path)})")
        args.extend((path, path, path))
    tested = (f"EXISTS (SELECT 1 FROM {b.json_elements('memory.file_refs', 'ref')} WHERE "
              + " OR ".join(tests) + ")")
    active = f"memory.project_id = {p} AND memory.status = 'active' AND memory.file_refs != '[]'"
    narrowed = b.file_ref_candidates(paths)
    if narrowed is None:
        sql = f"SELECT memory.id FROM memory WHERE {active} AND {tested} ORDER BY memory.confidence DESC LIMIT {p}"
        return {row[0] for row in b.db.execute_sql(sql, (project_id, *args, limit))}
    # The back-end's index of the refs gives the few memories that may match, tested after: all
    # of them first, so the planner does not walk every memory with refs by confidence instead.
    sql = (f"WITH may_match AS MATERIALIZED ({narrowed.sql}) SELECT memory.id FROM may_match AS memory "
           f"WHERE {active} AND {tested} ORDER BY memory.confidence DESC, memory.place LIMIT {p}")
    return {row[0] for row in b.db.execute_sql(sql, (*narrowed.params, project_id, *args, limit))}


def most_confident(backend: "Backend", project_id: int, limit: int) -> list[str]:
    """Ids of the project's `limit` most confident active memories, most confident first."""
    p = backend.param
    rows = backend.db.execute_sql(
        f"SELECT id FROM memory WHERE project_id = {p} AND status = 'active' "
        f"ORDER BY confidence DESC LIMIT {p}", (project_id, limit)).fetchall()
    return [r[0] for r in rows]


def critical(backend: "Backend", project_id: int, min_confidence: float, types: Sequence[str],
             limit: int) -> list[str]:
    """Ids of the project's active memories of these types at `min_confidence` or above (at most
    `limit`), most confident first, the most recently changed (reinforced, re-taught) first among
    equals, then by id so the choice repeats."""
    p = backend.param
    marks = ", ".join([p] * len(types))
    rows = backend.db.execute_sql(
        f"SELECT id FROM memory WHERE project_id = {p} AND status = 'active' AND confidence >= {p} "
        f"AND type IN ({marks}) ORDER BY confidence DESC, updated_at DESC, id LIMIT {p}",
        (project_id, min_confidence, *types, limit),
    ).fetchall()
    return [r[0] for r in rows]


def with_words(backend: "Backend", memory_ids: Sequence[str]) -> list[tuple[tuple, str | None]]:
    """(row, identifier words) of the memories with these ids that exist: the row in `Memory`'s
    field order (`store.engine.rows`), the words as `memory.words` holds them."""
    select = MEMORY_SELECT.replace(" FROM memory ", ", memory.words FROM memory ", 1)
    found = []
    for chunk, marks in id_chunks(memory_ids, backend.param):
        found.extend((r[:-1], r[-1]) for r in backend.db.execute_sql(select + f" WHERE memory.id IN ({marks})", chunk))
    return found
