"""The semantic signal at prime time: the cosine of the task's vector with the stored vectors
of a project's memories (one matrix product), best first.

Only the task is embedded here; memories were embedded when written (`store.reindex`). A
project's vectors are kept in memory between primes of one process, until the store changes
(as `search` keeps its titles): a long-lived process (the workbench's preview, the MCP server)
reads them once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from store import embedding

if TYPE_CHECKING:
    import numpy as np

    from store.core import Store

# The last project's vectors read, with the key they were read under.
_cache: tuple[tuple, tuple[list[str], "np.ndarray"]] | None = None


def _vectors(store: "Store", project_id: int, model: str) -> tuple[list[str], "np.ndarray"]:
    global _cache
    changes = store.db.execute_sql("SELECT total_changes()").fetchone()[0]
    key = (id(store), str(store.path), project_id, model, store.data_version(), changes)
    if _cache is None or _cache[0] != key:
        # Every status: looking each memory up for it costs 5x the read. Ineligible memories
        # among the most similar are ranked out with their reason.
        rows = store.db.execute_sql("SELECT memory_id, vector FROM memory_vector WHERE project_id = ? AND model = ?",
                                    (project_id, model)).fetchall()
        _cache = (key, ([r[0] for r in rows], embedding.from_blobs([r[1] for r in rows])))
    return _cache[1]


@dataclass(frozen=True)
class Similarity:
    """The most similar memories' cosines, and the project's typical cosine with the task (the
    median over its memories): the level of "not about it" for this task in this project, since
    texts of one project share words and a static model gives unrelated texts a cosine above 0."""

    cosines: dict[str, float]
    typical: float
    vectors: int  # the project's memories with a vector of the current model


def similar(store: "Store", project_id: int, task: str, limit: int,
            only: Sequence[str] | None = None) -> Similarity:
    """The `limit` memories of the project most similar to the task (among `only`, when given);
    none without the extra or without vectors."""
    import numpy as np

    model = embedding.model_id()
    embedder = embedding.embedder()
    if model is None or embedder is None or not task.strip():
        return Similarity({}, 0.0, 0)
    ids, matrix = _vectors(store, project_id, model)
    if not ids:
        return Similarity({}, 0.0, 0)
    cosines = matrix @ embedder.embed([task])[0]
    middle = len(cosines) // 2  # the median, by partition (np.median imports half of numpy.lib)
    typical = float(np.partition(cosines, middle)[middle])
    if only is not None:
        wanted = set(only)
        return Similarity({ids[n]: float(cosines[n]) for n, memory_id in enumerate(ids) if memory_id in wanted},
                          typical, len(ids))
    if len(ids) > limit:  # the best `limit` without sorting them all
        best = np.argpartition(-cosines, limit)[:limit]
        top = best[np.argsort(-cosines[best], kind="stable")]
    else:
        top = np.argsort(-cosines, kind="stable")
    return Similarity({ids[n]: float(cosines[n]) for n in top}, typical, len(ids))
