"""The rankers `memdeck eval` runs side by side: memdeck's own (`prime`), plain BM25, and each
seed's (Dex, Claude Ops, Ralph, Nova26), as `store.evaluation.retrieval` describes them. Each
but Ralph's is packed into the budget by memdeck's packer, so budget recall compares choices,
not formatting. Plain BM25's query is `store/backends/ranker_rows.py`'s."""

from __future__ import annotations

import math
import re
from typing import Callable, Sequence

from store.backends import ranker_rows
from store.backends.base import quote_fts_term
from store.browse.search import MemoryFilter, list_memories, terms
from store.engine.core import Store
from store.engine.records import Memory
from store.interop.ralph import render_memory_block
from store.evaluation.eval_set import K, Outcome, Query
from store.retrieval.injection import InjectionContext, prime
from store.retrieval.packing import CharTokenizer, pack
from store.retrieval.ranking import normalise_path

Ranker = Callable[[Store, Query, int], Outcome]


def _packed(store: Store, query: Query, ranking: Sequence[str], budget: int) -> Outcome:
    memories = store.get_many(ranking) if ranking else []
    result = pack(memories, budget=budget, heading="Project Memory", total=len(memories),
                  grouping="type", tokenizer=CharTokenizer())
    return Outcome(list(ranking), list(result.included), result.tokens)


def memdeck_ranker(store: Store, query: Query, budget: int) -> Outcome:
    result = prime(store, InjectionContext(hat=query.hat, task=query.task, paths=query.paths,
                                           budget=budget, project=query.project))
    # In the block's order: filler (`injection.gate.fill`) after every memory with evidence.
    candidates = sorted([*result.included, *(r for r in result.excluded if r.reason == "over budget")],
                        key=lambda r: (r.filler, -r.score, r.memory.id))
    # The whole order: the block, then every other candidate that only the gate or the budget
    # kept out (not the ineligible: pending, inactive, below the confidence floor).
    rest = sorted((r for r in result.excluded if r.reason in ("over budget", r.gate)), key=lambda r: (-r.score, r.memory.id))
    block = [r.memory.id for r in candidates if r.reason != "over budget"]
    order = list(dict.fromkeys([*block, *(r.memory.id for r in rest)]))
    return Outcome([r.memory.id for r in candidates], [r.memory.id for r in result.included], result.tokens, order,
                   [r.memory.id for r in result.index], result.index_tokens)


def bm25_ranker(store: Store, query: Query, budget: int) -> Outcome:
    words = terms(" ".join([query.task, *query.paths]))
    if not words:
        return _packed(store, query, [], budget)
    text = "{title content tags}: (" + " OR ".join(quote_fts_term(w) for w in words) + ")"
    ranking = ranker_rows.by_bm25(store.backend, text, (1.0, 1.0, 1.0, 1.0), store.project_id(query.project))
    return _packed(store, query, ranking, budget)


def _active(store: Store, project: str, sort: str = "confidence") -> list[Memory]:
    return list_memories(store, MemoryFilter(project=project, statuses=("active",)), sort=sort, limit=None)


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", text)]


def _overlaps(ref: str, paths: Sequence[str]) -> bool:
    """Seed 000's `pathOverlaps`: the ref glob matches a path, or one contains the other."""
    from fnmatch import fnmatchcase

    ref = normalise_path(ref)
    return any(fnmatchcase(p, ref) or p.startswith(ref + "/") or ref.startswith(p + "/")
               for p in map(normalise_path, paths))


def dex_ranker(store: Store, query: Query, budget: int) -> Outcome:
    candidates = [m for m in _active(store, query.project) if m.confidence > 0.3][:50]
    keywords = _words(query.task)
    now = store.now()
    scored = []
    for m in candidates:
        score = m.confidence * 0.2
        alignment = store.vocabulary.hat_alignment(m.hat, query.hat)
        score += {"same": 0.25, "related": 0.1}.get(alignment, 0.0)
        if any(_overlaps(ref, query.paths) for ref in m.file_refs):
            score += 0.3
        for tag in m.tags:
            if any(k in tag.lower() for k in keywords):
                score += 0.15
        if m.last_used_at is not None:
            score += max(0.0, 0.1 - (now - m.last_used_at) / 86400 * 0.002)
        if score > 0.25:
            scored.append((score, m.id))
    scored.sort(key=lambda s: -s[0])  # stable: ties keep the confidence order
    return _packed(store, query, [i for _, i in scored[:K]], budget)


def claude_ops_ranker(store: Store, query: Query, budget: int) -> Outcome:
    ranking = [m.id for m in _active(store, query.project) if m.confidence >= 0.3]
    return _packed(store, query, ranking, budget)


def nova26_ranker(store: Store, query: Query, budget: int) -> Outcome:
    memories = _active(store, query.project)
    critical = [m for m in memories if m.confidence >= 0.9 and m.type in ("constraint", "architecture")][:5]
    own = [m for m in memories if query.hat and m.hat == query.hat][:5]
    words = [w for w in query.task.lower().split() if len(w) > 3]
    relevant = [m for m in memories
                if any(w in f"{m.title} {m.content}".lower() for w in words) and m not in critical][:5]
    ranking = list(dict.fromkeys(m.id for m in (*critical, *own, *relevant)))
    return _packed(store, query, ranking, budget)


def make_ralph_ranker(file_order: dict[str, list[str]]) -> Ranker:
    def ralph_ranker(store: Store, query: Query, budget: int) -> Outcome:
        ranking = file_order.get(query.project, [])
        limit = budget * 4
        used = len("# Memories\n")
        packed = []
        for memory in store.get_many(ranking) if ranking else []:
            block = len(render_memory_block_for(memory))
            if used + block > limit:
                break  # `prime --budget` cuts the text here; a memory cut in half is not counted
            used += block
            packed.append(memory.id)
        return Outcome(list(ranking), packed, math.ceil(min(used, limit) / 4) if packed else 0)

    return ralph_ranker


def render_memory_block_for(memory: Memory) -> str:
    from store.interop.ralph import RalphMemory

    return render_memory_block(RalphMemory(id=memory.id, type=memory.type, section=memory.type,
                                           content=memory.content, tags=memory.tags))
