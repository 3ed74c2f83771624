"""What a virtual memory list needs from the store: the ordered ids of everything a listing
shows, pages of `Memory` records for a slice of those ids, and the counts for its header.

A listing is a snapshot of ids (100,000 ids is a few MB and one indexed query), so the list can
jump anywhere by offset, keep its cursor and selection by id across refreshes, and fetch only
the rows on screen. Its `head` (the first rows and how many there are in all) takes bounded
reads only, so the first screen never waits for the whole. Search text lists full-text hits in the
order `store.browse.search.full_text` gives them (BM25; newest first for a broad query), then fuzzy
title matches the full text missed. The reads are the back-end's (`store.backends.browse_rows`,
`store.backends.search_rows`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Sequence

from store.backends import browse_rows, search_rows
from store.engine.core import Store, memory_from_row
from store.engine.errors import InvalidInput
from store.engine.records import Memory
from store.browse import search
from store.browse.search import (BROAD_MATCHES, SORTS, MemoryFilter, count_memories, fts_query, fuzzy_titles,
                          match_order, newest_matches, selection, typed_terms)

# Rows the list reads at a time; a listing's `head` is its first page.
PAGE_SIZE = 200
# The memories read with a head: a tall terminal's screenful. The list reads the rest of the
# first page when it is scrolled to; building 200 records at every keystroke cost up to 10 ms.
HEAD_ROWS = 64

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
        return bool(typed_terms(self.text))


@dataclass(frozen=True)
class Listing:
    """The ids a query shows, in order, and the words to highlight in them."""

    query: ListQuery
    ids: tuple[str, ...]
    words: tuple[str, ...] = ()
    size: int | None = None  # a head of a longer listing: how many the whole one has
    # A search's head that read only its newest `HEAD_MATCHES` matches: the whole listing has
    # `size` or more (the list shows "2041+").
    more: bool = False

    def __len__(self) -> int:
        return len(self.ids) if self.size is None else self.size

    @property
    def complete(self) -> bool:
        return (self.size is None or self.size == len(self.ids)) and not self.more


@dataclass(frozen=True)
class Counts:
    """A project's numbers for the workbench header."""

    project: str
    total: int  # memories not in the trash
    pending: int
    trash: int


@dataclass(frozen=True)
class Loaded:
    """What the list shows after one read: a listing, the memories of its first page when they
    were read with it, and the project's counts (None: the ones shown still hold)."""

    listing: Listing
    counts: Counts | None
    first_page: tuple[Memory, ...] | None = None


def read_head(store: Store, query: ListQuery, *, with_counts: bool) -> Loaded:
    """The quick part of a listing, in bounded reads: its `head` (for a search with few
    full-text hits, the whole listing with its fuzzy title matches) and the memories of its
    first page."""
    first = head(store, query, PAGE_SIZE)
    if needs_fuzzy(first):
        first = listing(store, query)
    return Loaded(first, counts(store) if with_counts else None, tuple(fetch(store, first.ids[:HEAD_ROWS])))


def listing(store: Store, query: ListQuery) -> Listing:
    """The ordered ids of every memory `query` shows."""
    _check_sort(query)
    if query.searching:
        ids = _text_ids(store, query)
        if len(ids) < FUZZY_BELOW:
            seen = set(ids)
            ids += [h.memory.id for h in fuzzy_titles(store, query.text, query.filter, limit=FUZZY_BELOW)
                    if h.memory.id not in seen]
        return Listing(query, tuple(ids), tuple(typed_terms(query.text)))
    return Listing(query, tuple(browse_rows.listed_ids(store.backend, selection(store, query.filter), query.sort)))


def head(store: Store, query: ListQuery, limit: int) -> Listing:
    """The first `limit` ids of a listing and the size of the whole: enough to draw the first
    screen while the rest is read. A search's head holds its full-text hits only."""
    _check_sort(query)
    if query.searching:
        return _search_head(store, query, limit)
    ids = browse_rows.listed_ids(store.backend, selection(store, query.filter), query.sort, limit)
    return Listing(query, tuple(ids), size=count_memories(store, query.filter))


def needs_fuzzy(found: Listing) -> bool:
    """Whether fuzzy title matching adds to the full-text hits of a search's `head`."""
    return found.query.searching and len(found) < FUZZY_BELOW and not found.more


def _check_sort(query: ListQuery) -> None:
    if query.sort not in SORTS:
        raise InvalidInput(f"unknown sort {query.sort!r}; one of {', '.join(SORTS)}")


def _text_ids(store: Store, query: ListQuery, limit: int | None = None, *, broad: bool | None = None) -> list[str]:
    text = fts_query(query.text, prefix_last=True)
    chosen = selection(store, query.filter)
    return search_rows.matching_ids(store.backend, text, chosen, match_order(store, text, broad), limit)


# The most matches a search's head reads: a query whose words are in more of the store shows
# "N+" (its matches among these) until the whole listing is read, which costs a keystroke far
# more than the head (reading every id of a 60,000-match prefix and joining them to their rows).
# SQLite reads 50,000 rowids newest first from FTS5's prefix index in about 12 ms: a store of
# 100,000 counts nearly every query in its head (with 5,000, most prefixes as typed showed "N+"
# and read their whole listing after: key to list drawn went from 36 ms to 250 ms at p90), and
# at 1,000,000 the head still takes at most 40 ms. PostgreSQL walks the rowid index backwards
# testing each row's tsvector (about 1.2 us a row): 5,000 there, 30 ms for a word in a fifth of
# the store.
HEAD_MATCHES = 50_000
HEAD_MATCHES_ON_SERVER = 5_000


def head_matches(store: Store) -> int:
    """How many matches a search's head reads on `store`'s back-end."""
    return HEAD_MATCHES if store.backend.reads_matches_in_order else HEAD_MATCHES_ON_SERVER


def _search_head(store: Store, query: ListQuery, limit: int) -> Listing:
    """A search's first `limit` full-text hits and how many there are under the filter, from
    one pass over the full-text index: its newest `HEAD_MATCHES` matches' rowids, kept if the
    filter's `scope` holds them. Joining every match to its `memory` row instead (to count the
    matches the filter lets through, to tell a broad query, and to list the first ones: three
    passes) took 30-300 ms for a one- or two-letter prefix at 100,000 memories; reading every
    match took 230 ms for `the` at 1,000,000."""
    words = tuple(typed_terms(query.text))
    match = fts_query(query.text, prefix_last=True)
    if match is None:
        return Listing(query, (), words, size=0)
    most = head_matches(store)
    matches = newest_matches(store, match, max(most, BROAD_MATCHES) + 1)
    more = len(matches) > most
    allowed = scope(store, query.filter)
    inside = [rowid for rowid in matches[:most] if rowid in allowed]
    if len(matches) > BROAD_MATCHES:  # what `match_order` calls broad: newest first
        ids = _ids_of(store, inside[:limit])
    else:
        ids = _text_ids(store, query, limit, broad=False)
    return Listing(query, tuple(ids), words, size=len(inside), more=more)


def _ids_of(store: Store, rowids: Sequence[int]) -> list[str]:
    if not rowids:
        return []
    by_rowid = browse_rows.ids_by_rowid(store.backend, rowids)
    return [by_rowid[r] for r in rowids]


# The rowids each filter lets through, per connection: [(connection, selection, state, rowids)],
# the most recent first. `state` is the connection's `data_version` (another connection
# committed) and `own_changes` (it wrote itself): while both hold, the store has not changed.
_scopes: list[tuple[object, search_rows.Selection, tuple[int, int], frozenset[int]]] = []
_scopes_lock = threading.Lock()
SCOPES_KEPT = 2  # 100,000 rowids take about 7 MB


def scope(store: Store, flt: MemoryFilter) -> frozenset[int]:
    """The rowids of the memories `flt` lets through, read once (15-50 ms at 100,000 memories)
    and kept until the store changes. The workbench reads it ahead, on the thread its
    keystrokes' searches run on (`warm`)."""
    connection = store.db.connection()
    key = selection(store, flt)
    state = (store.backend.data_version(), store.backend.own_changes())
    with _scopes_lock:
        for kept_connection, kept_key, kept_state, rowids in _scopes:
            if kept_connection is connection and kept_key == key and kept_state == state:
                return rowids
    rowids = browse_rows.rowids(store.backend, key)
    with _scopes_lock:
        others = [entry for entry in _scopes if entry[0] is not connection]
        _scopes[:] = [(connection, key, state, rowids), *others][:SCOPES_KEPT]
    return rowids


def warm(store: Store, query: ListQuery) -> None:
    """Read ahead what a search under `query`'s filter needs, so its first keystroke is quick:
    the rowids it lets through, and the titles a typo is matched against (reading and
    normalizing 100,000 titles took 200-400 ms, paid by the first keystroke that found few
    full-text hits). Both are kept until the store changes."""
    scope(store, query.filter)
    search.titles_of(store, query.filter)


def fetch(store: Store, ids: Sequence[str]) -> list[Memory]:
    """The memories with these ids in the order given; ids gone since the listing are skipped."""
    found: dict[str, Memory] = {}
    for row in store.backend.memory_table.rows(ids):
        found[row[0]] = memory_from_row(row)
    return [found[i] for i in ids if i in found]


def page(store: Store, query: ListQuery, offset: int, limit: int) -> list[Memory]:
    """One offset page of a query's memories, for callers that do not keep a listing."""
    return fetch(store, listing(store, query).ids[offset:offset + limit])


def counts(store: Store, project: str | None = None) -> Counts:
    by_status = browse_rows.status_counts(store.backend, store.project_id(project))
    return Counts(project=project or store.project,
                  total=sum(n for s, n in by_status.items() if s != "deleted"),
                  pending=by_status.get("pending", 0), trash=by_status.get("deleted", 0))
