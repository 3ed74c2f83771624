"""Finding memories: filtered listing, full-text search (FTS5 with BM25, title weighted above
content), and typo-tolerant fuzzy title search with rapidfuzz. The SQL is the back-end's
(`store.backends.search_rows`): a filter goes down as its `selection`.

User text never reaches FTS5 as syntax: `fts_query` turns anything typed into quoted terms, so
quotes, hyphens, `*`, `NEAR(`, `:` and unbalanced parentheses are searched as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Sequence

from rapidfuzz import fuzz, process, utils

from store.backends import search_rows
from store.backends.base import Weights, quote_fts_term
from store.backends.search_rows import Selection
from store.engine.core import Store, memory_from_row
from store.engine.errors import InvalidInput
from store.engine.records import Memory

_TERM = re.compile(r"\w+", re.UNICODE)

# The listing sorts, by name (each one's ORDER BY is the back-end's: `search_rows.ORDERS`).
SORTS = tuple(search_rows.ORDERS)


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a listing or search shows. Empty tuples mean "any"."""

    project: str | None = None  # None: the store's current project
    all_projects: bool = False
    types: tuple[str, ...] = ()
    hats: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()  # empty: everything but the trash
    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # a memory must carry every one
    scopes: tuple[str, ...] = ()
    min_confidence: float | None = None
    created_after: float | None = None
    created_before: float | None = None
    exclude_session: str | None = None
    stale: bool = False  # only memories whose anchored code changed or went missing
    ids: tuple[str, ...] | None = field(default=None, compare=False)

    def with_(self, **changes) -> "MemoryFilter":
        return replace(self, **changes)


def selection(store: Store, flt: MemoryFilter) -> Selection:
    """`flt` as the back-end selects it: its project's id (None: every project) and its types'
    names (the vocabulary's, for aliases and plurals) resolved."""
    return Selection(
        project_id=None if flt.all_projects else store.project_id(flt.project),
        types=tuple(store.vocabulary.resolve_type(t).type for t in flt.types or ()),
        hats=tuple(flt.hats or ()), statuses=tuple(flt.statuses or ()), sources=tuple(flt.sources or ()),
        scopes=tuple(flt.scopes or ()), tags=tuple(flt.tags), min_confidence=flt.min_confidence,
        created_after=flt.created_after, created_before=flt.created_before,
        exclude_session=flt.exclude_session, stale=flt.stale, ids=None if flt.ids is None else tuple(flt.ids))


def list_memories(store: Store, flt: MemoryFilter = MemoryFilter(), *, sort: str = "updated",
                  limit: int | None = 100, offset: int = 0) -> list[Memory]:
    if sort not in SORTS:
        raise InvalidInput(f"unknown sort {sort!r}; one of {', '.join(SORTS)}")
    return [memory_from_row(r) for r in search_rows.memories(store.backend, selection(store, flt), sort, limit, offset)]


def count_memories(store: Store, flt: MemoryFilter = MemoryFilter()) -> int:
    return search_rows.count(store.backend, selection(store, flt))


def terms(text: str) -> list[str]:
    return _TERM.findall(text)


def typed_terms(text: str) -> list[str]:
    """The words a search as you type looks for: a last word of one character is left out
    until the next is typed. As a prefix it matches nearly every memory (and costs the most:
    FTS5 merges every word that starts with it), so it would narrow nothing."""
    words = terms(text)
    return words[:-1] if words and len(words[-1]) == 1 else words


def fts_query(text: str, *, mode: str = "all", prefix_last: bool = False) -> str | None:
    """An FTS5 query matching the words of `text`: all of them (`all`) or any (`any`).

    Every word is quoted, so nothing the user types is read as FTS5 syntax. With `prefix_last`,
    the last word also matches as a prefix (search as you type: `typed_terms`). None when there
    is no word.
    """
    words = typed_terms(text) if prefix_last else terms(text)
    if not words:
        return None
    quoted = [quote_fts_term(w) for w in words]
    if prefix_last:
        quoted[-1] += "*"
    return (" OR " if mode == "any" else " AND ").join(quoted)


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    score: float  # higher is better: -bm25 for full-text hits, rapidfuzz score/100 for fuzzy
    match: str  # "text" (full-text) or "fuzzy" (title only)


def search(store: Store, text: str, flt: MemoryFilter = MemoryFilter(), *, limit: int = 50,
           fuzzy: bool = True, prefix_last: bool = True) -> list[SearchHit]:
    """Full-text hits ranked by BM25, then fuzzy title matches the full text missed."""
    hits = full_text(store, text, flt, limit=limit, prefix_last=prefix_last)
    if fuzzy and len(hits) < limit:
        seen = {h.memory.id for h in hits}
        for hit in fuzzy_titles(store, text, flt, limit=limit):
            if hit.memory.id not in seen and len(hits) < limit:
                hits.append(hit)
    return hits


def full_text(store: Store, text: str, flt: MemoryFilter = MemoryFilter(), *, limit: int = 50,
              mode: str = "all", prefix_last: bool = False) -> list[SearchHit]:
    """Memories matching `text`, best BM25 rank first; for a broad query (more than
    `BROAD_MATCHES` matches in the store), the most recently added matches first, unranked
    (score 0)."""
    query = fts_query(text, mode=mode, prefix_last=prefix_last)
    if query is None:
        return []
    chosen = selection(store, flt)
    newest = newest_matches(store, query)
    if len(newest) > BROAD_MATCHES:
        # The first `limit` of the newest matches the filter lets through.
        hits = [SearchHit(memory_from_row(r), 0.0, "text")
                for r in search_rows.newest_among(store.backend, newest, chosen, limit)]
        if len(hits) < limit:  # the filter keeps few of the newest matches: read on through them all
            hits = [SearchHit(memory_from_row(r), 0.0, "text")
                    for r in search_rows.newest_matching(store.backend, query, chosen, limit)]
        return hits
    rows = search_rows.best_matching(store.backend, query, search_weights(store), chosen, limit)
    return [SearchHit(memory_from_row(r[:-1]), -r[-1], "text") for r in rows]


def search_weights(store: Store) -> Weights:
    """BM25's column weights for a search: title, content, tags (the settings), words."""
    cfg = store.config.search
    return (cfg.title_weight, cfg.content_weight, cfg.tags_weight, 1.0)


# Past this many matches a query's words are in much of the store: BM25 must score every match
# to sort them (about 13 us each: 0.4 s for a word in all of 100k memories), and a word found
# nearly everywhere weighs almost nothing in it, so such a query lists its newest matches. They
# carry no BM25 score either: BM25 counts every match of each word in the store to weigh it
# (20 ms for a word in all of 1,000,000 memories, and for a prefix FTS5 merges the matches of
# every word it begins once more: 25 ms for `refund*`).
BROAD_MATCHES = 2000


def newest_matches(store: Store, query: str, limit: int | None = None) -> list[int]:
    """The rowids of the newest `limit` matches of the FTS5 `query` in the whole store, newest
    first: more than `BROAD_MATCHES` of them make the query broad, and they are where its first
    page comes from. One pass over the index: FTS5 reads its matches backwards and stops at
    `limit` (a prefix without a prefix index is merged first, once). By default, one more than
    `BROAD_MATCHES`."""
    limit = BROAD_MATCHES + 1 if limit is None else limit
    return store.backend.newest_matches(query, limit)


def match_order(store: Store, query: str, broad: bool | None = None) -> Weights | None:
    """The order that lists the matches of the FTS5 `query` as `full_text` does, for callers
    that read only ids: BM25 rank with these weights (ties newest first), or for a broad query
    None, newest first (`broad`: already known, else counted)."""
    if broad if broad is not None else _is_broad(store, query):
        return None
    return search_weights(store)


def _is_broad(store: Store, query: str) -> bool:
    return search_rows.matches_up_to(store.backend, query, BROAD_MATCHES + 1) > BROAD_MATCHES


def fuzzy_titles(store: Store, text: str, flt: MemoryFilter = MemoryFilter(), *,
                 limit: int = 20) -> list[SearchHit]:
    """Titles close to `text` despite typos ("websoket" finds "Websocket reconnect..."): rapidfuzz's
    partial_ratio of each distinct title, best first, ties newest first (on both back-ends: the
    titles are put in rowid order, not left in whatever order a scan meets them).
    Past `FUZZY_SCAN` distinct titles, the newest `FUZZY_SCAN` of them."""
    text = text.strip()
    if len(text) < 3:
        return []
    titles = titles_of(store, flt)
    if not titles.ids:
        return []
    floor = float(store.config.search.fuzzy_min_score)
    found = process.extract(utils.default_process(text), titles.scanned, scorer=fuzz.partial_ratio,
                            processor=None, score_cutoff=floor, limit=limit)
    # Each distinct title found stands for the memories bearing it; those in the `limit` best
    # memories (score, then newest) come from the `limit` best distinct titles.
    ranked = sorted(((-score, member) for _, score, k in found for member in titles.members[k]))[:limit]
    by_id = {m.id: m for m in store.get_many([titles.ids[i] for _, i in ranked])} if ranked else {}
    return [SearchHit(by_id[titles.ids[i]], -score / 100.0, "fuzzy") for score, i in ranked
            if titles.ids[i] in by_id]


# Distinct titles a typo is matched against: past this many, the newest this many (rapidfuzz's
# partial_ratio takes about 0.75 us a title: 30 ms for 40,000).
FUZZY_SCAN = 40_000


@dataclass(frozen=True)
class Titles:
    """The titles of the memories a filter lets through, for fuzzy matching."""

    ids: list[str]  # every memory's id, in the order read
    scanned: list[str]  # the distinct normalized titles matched (the newest `FUZZY_SCAN`)
    members: list[list[int]]  # for each of `scanned`, the indexes in `ids` of the memories bearing it

    @classmethod
    def of(cls, rows: Sequence[tuple[int, str, str]]) -> "Titles":
        """From (rowid, id, title) rows; a title's age is that of its newest memory."""
        ids: list[str] = []
        index: dict[str, int] = {}
        distinct: list[str] = []
        members: list[list[int]] = []
        newest: list[int] = []
        for i, (rowid, memory_id, title) in enumerate(rows):
            ids.append(memory_id)
            normalized = utils.default_process(title)
            k = index.get(normalized)
            if k is None:
                index[normalized] = k = len(distinct)
                distinct.append(normalized)
                members.append([])
                newest.append(rowid)
            members[k].append(i)
            newest[k] = max(newest[k], rowid)
        if len(distinct) > FUZZY_SCAN:
            kept = sorted(sorted(range(len(distinct)), key=newest.__getitem__, reverse=True)[:FUZZY_SCAN])
            distinct, members = [distinct[k] for k in kept], [members[k] for k in kept]
        return cls(ids, distinct, members)


def titles_of(store: Store, flt: MemoryFilter = MemoryFilter()) -> Titles:
    """The titles of the memories `flt` lets through (kept: see `_titles`)."""
    return _titles(store, selection(store, flt))


# The last title list read, with the key it was read under (see `_titles`).
_title_cache: tuple[tuple, Titles] | None = None


def _titles(store: Store, chosen: Selection) -> Titles:
    """The titles of the memories `chosen` selects. Reading and normalizing 100k titles costs
    more than matching them, so the last list is kept until the store changes: `data_version`
    moves when another connection commits, `own_changes` when this one does."""
    global _title_cache
    key = (id(store), str(store.path), chosen, store.data_version(), store.backend.own_changes())
    if _title_cache is None or _title_cache[0] != key:
        rows = search_rows.titles(store.backend, chosen)
        # Newest first, so that ties come out the same on both back-ends. Sorted here, not by
        # the query: SQLite would sort 100k rows in a temporary b-tree (+45 ms), and the rows
        # arrive in rowid or creation order, runs Python's sort merges in linear time.
        rows.sort(key=itemgetter(0), reverse=True)
        _title_cache = (key, Titles.of(rows))
    return _title_cache[1]
