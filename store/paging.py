"""What a virtual memory list needs from the store: the ordered ids of everything a listing
shows, pages of `Memory` records for a slice of those ids, and the counts for its header.

A listing is a snapshot of ids (100,000 ids is a few MB and one indexed query), so the list can
jump anywhere by offset, keep its cursor and selection by id across refreshes, and fetch only
the rows on screen. Search text orders the ids by relevance: full-text hits (BM25) first, then
fuzzy title matches the full text missed, both from `store.search`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from store import dialect
from store.core import MEMORY_SELECT, Store, memory_from_row
from store.errors import InvalidInput
from store.records import Memory
from store.search import SORTS, MemoryFilter, count_memories, fts_query, fuzzy_titles, terms, where_clause

# Fuzzy title matching scans every title under the filter; it runs only while the full text
# finds fewer hits than this, which is when a typo is the likely reason.
FUZZY_BELOW = 50


@dataclass(frozen=True)
class ListQuery:
    """One listing: which memories (`filter`), in what order (`sort`), matching what text."""

    filter: MemoryFilter = field(default_factory=MemoryFilter)
    sort: str = "updated"
    text: str = ""

    @property
    def searching(self) -> bool:
        return bool(terms(self.text))


@dataclass(frozen=True)
class Listing:
    """The ids a query shows, in order, and the words to highlight in them."""

    query: ListQuery
    ids: tuple[str, ...]
    words: tuple[str, ...] = ()
    size: int | None = None  # a head of a longer listing: how many the whole one has

    def __len__(self) -> int:
        return len(self.ids) if self.size is None else self.size

    @property
    def complete(self) -> bool:
        return self.size is None or self.size == len(self.ids)


@dataclass(frozen=True)
class Counts:
    """A project's numbers for the workbench header."""

    project: str
    total: int  # memories not in the trash
    pending: int
    trash: int


def listing(store: Store, query: ListQuery, *, fuzzy: bool = True) -> Listing:
    """The ordered ids of every memory `query` shows. Without `fuzzy`, a search lists only the
    full-text hits (the quick part, shown while fuzzy matching runs)."""
    if query.sort not in SORTS:
        raise InvalidInput(f"unknown sort {query.sort!r}; one of {', '.join(SORTS)}")
    if query.searching:
        return Listing(query, tuple(_search_ids(store, query, fuzzy)), tuple(terms(query.text)))
    where, args = where_clause(store, query.filter)
    rows = store.db.execute_sql(
        f"SELECT memory.id FROM memory WHERE {where} ORDER BY {SORTS[query.sort]}", args)
    return Listing(query, tuple(r[0] for r in rows))


def head(store: Store, query: ListQuery, limit: int) -> Listing:
    """The first `limit` ids of a listing without a search, and the size of the whole: enough
    to draw the first screen of a large store while the rest is read."""
    if query.searching:
        raise InvalidInput("a search listing has no head; use `listing`")
    where, args = where_clause(store, query.filter)
    rows = store.db.execute_sql(
        f"SELECT memory.id FROM memory WHERE {where} ORDER BY {SORTS[query.sort]} LIMIT ?", [*args, limit])
    return Listing(query, tuple(r[0] for r in rows), size=count_memories(store, query.filter))


def needs_fuzzy(found: Listing) -> bool:
    return found.query.searching and len(found.ids) < FUZZY_BELOW


def _search_ids(store: Store, query: ListQuery, fuzzy: bool) -> list[str]:
    match = fts_query(query.text, prefix_last=True)
    where, args = where_clause(store, query.filter)
    cfg = store.config
    rank = dialect.fts_rank_sql(cfg.get("search.title_weight"), cfg.get("search.content_weight"),
                                cfg.get("search.tags_weight"))
    rows = store.db.execute_sql(
        dialect.FTS_MATCH_SQL.format(rank=rank) + f" AND {where} ORDER BY rank", [match, *args])
    ids = [r[0] for r in rows]
    if fuzzy and len(ids) < FUZZY_BELOW:
        seen = set(ids)
        ids += [h.memory.id for h in fuzzy_titles(store, query.text, query.filter, limit=FUZZY_BELOW)
                if h.memory.id not in seen]
    return ids


def fetch(store: Store, ids: Sequence[str]) -> list[Memory]:
    """The memories with these ids in the order given; ids gone since the listing are skipped."""
    found: dict[str, Memory] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        marks = ",".join("?" * len(chunk))
        for row in store.db.execute_sql(f"{MEMORY_SELECT} WHERE memory.id IN ({marks})", chunk):
            found[row[0]] = memory_from_row(row)
    return [found[i] for i in ids if i in found]


def page(store: Store, query: ListQuery, offset: int, limit: int) -> list[Memory]:
    """One offset page of a query's memories, for callers that do not keep a listing."""
    return fetch(store, listing(store, query).ids[offset:offset + limit])


def counts(store: Store, project: str | None = None) -> Counts:
    rows = store.db.execute_sql(
        "SELECT status, COUNT(*) FROM memory WHERE project_id = ? GROUP BY status",
        (store.project_id(project),)).fetchall()
    by_status = dict(rows)
    return Counts(project=project or store.project,
                  total=sum(n for s, n in by_status.items() if s != "deleted"),
                  pending=by_status.get("pending", 0), trash=by_status.get("deleted", 0))
