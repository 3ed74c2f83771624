"""The semantic signal at prime time: the cosine of the task's vector with the stored vectors
of a project's memories (one matrix product per block of vectors), best first.

Only the task is embedded here; memories were embedded when written (`store.index.reindex`). A
project's vectors are kept in memory between primes of one process, each block until its
version changes (`store.backends.vectors`): a long-lived process (the workbench's preview, the MCP
server) reads them once, and again only the blocks another write changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from store.index import embedding
from store.backends.vectors import ProjectVectors, Vectors

if TYPE_CHECKING:
    from store.engine.core import Store

# The projects' vectors read by this process, by store, project and model: each block is read
# again only when its version changed (`store.backends.vectors`), so a usage count written by a prime, or
# a memory added to another project, costs the next prime one small query.
_cache: dict[tuple, ProjectVectors] = {}


def _vectors(store: "Store", project_id: int, model: str) -> Vectors:
    key = (str(store.path), project_id, model)
    vectors = _cache.get(key)
    if vectors is None:
        if len(_cache) >= 4:  # a few projects of a few stores: the workbench, tests, the MCP server
            _cache.clear()
        vectors = _cache[key] = ProjectVectors(project_id, model)
    return vectors.read(store.db)


@lru_cache(maxsize=16)
def _task_vector(model: str, task: str):
    """The task's vector, once a task: a prime with layers compares it with each layer's
    vectors (a prompt's 16,000 characters took 10 to 40 ms to embed each time). Read only."""
    vector = embedding.embedder().embed([task])[0]
    vector.setflags(write=False)
    return vector


@dataclass(frozen=True)
class Similarity:
    """The most similar memories' cosines, and the project's typical cosine with the task (the
    median over its memories): the level of "not about it" for this task in this project, since
    texts of one project share words and a static model gives unrelated texts a cosine above 0."""

    cosines: dict[str, float]
    typical: float
    vectors: int  # the project's memories with a vector of the current model
    spread: float = 0.0  # the standard deviation of the project's cosines with the task


def similar(store: "Store", project_id: int, task: str, limit: int,
            only: Sequence[str] | None = None) -> Similarity:
    """The `limit` memories of the project most similar to the task (among `only`, when given);
    none without the extra or without vectors."""
    model = embedding.model_id()
    if model is None or not task.strip():
        return Similarity({}, 0.0, 0)
    vectors = _vectors(store, project_id, model)  # numpy is imported only if there are some
    ids = vectors.ids
    embedder = embedding.embedder() if ids else None
    if embedder is None:
        return Similarity({}, 0.0, 0)
    np = embedding.import_numpy()
    cosines = vectors.cosines(_task_vector(model, task))
    middle = len(cosines) // 2  # the median, by partition (np.median imports half of numpy.lib)
    typical = float(np.partition(cosines, middle)[middle])
    spread = float(cosines.std())
    if only is not None:
        wanted = set(only)
        return Similarity({ids[n]: float(cosines[n]) for n, memory_id in enumerate(ids) if memory_id in wanted},
                          typical, len(ids), spread)
    if len(ids) > limit:  # the best `limit` without sorting them all
        best = np.argpartition(-cosines, limit)[:limit]
        top = best[np.argsort(-cosines[best], kind="stable")]
    else:
        top = np.argsort(-cosines, kind="stable")
    return Similarity({ids[n]: float(cosines[n]) for n in top}, typical, len(ids), spread)
